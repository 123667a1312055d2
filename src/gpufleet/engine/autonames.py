"""The names providers give a resource whose program leaves them out, as `pulumi preview` shows them:
the logical name, the separator and random hex (curated `autonaming`, from the providers' sources).
Offline the random part is the URN's hash, so a program previews to the same names every time.

Which resources take one is the providers' own rule, not a list: a Terraform-bridged provider
auto-names a top-level input literally named `name`, which its generated SDK declares (the SDK is
generated from the same schema the bridge reads); a resource override names another property or
length; Kubernetes names `metadata.name`."""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import re
from pathlib import Path
from typing import TYPE_CHECKING

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.engine import parsing
from gpufleet.errors import InputError

if TYPE_CHECKING:
    from gpufleet.catalog.facts import AutoNameRule, Autonaming


class TooLong(InputError):
    """The provider's own error: the auto-name would pass the property's maximum length."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@functools.cache
def sdk_inputs(type_: str) -> frozenset[str] | None:
    """The input names the provider's Python SDK declares for the resource type (its `*Args`), or
    None where that SDK is not installed here. Read from the module's source, not imported: importing
    a provider's service package costs up to half a second, on the monitor's answer to the program."""
    package, module, name = type_.split(":")
    parts = module.split("/")
    spec = importlib.util.find_spec(f"pulumi_{package.replace('-', '_')}")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]).joinpath(
        *([] if parts[0] == "index" else [parts[0]]), f"{_snake(parts[-1] if len(parts) > 1 else name)}.py"
    )
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    declared = _declared(_args_signature(source, f"{name}Args"), f"{name}Args")
    return declared if declared is not None else _declared(source, f"{name}Args")


def _args_signature(source: str, args_class: str) -> str:
    """The class statement and its `__init__`'s signature alone, where the generator writes them (the
    class at the module's top level, its body indented four spaces): parsed, the same first
    `__init__` as the whole module's, at a fraction of the parse (a resource module is up to 400 KB,
    read on the monitor's answer to the program). "" where the source is laid out otherwise."""
    head = re.search(rf"^class {args_class}\b[^\n]*:[ \t]*$", source, re.M)
    init = re.compile(r"^    def __init__\(", re.M).search(source, head.end()) if head else None
    if head is None or init is None or re.search(r"^\S", source[head.end() : init.start()], re.M):
        return ""  # no such class, or its body ends before any __init__ (the module is parsed whole)
    end = init.start()
    while (close := source.find("):", end)) != -1:
        end = close + 2
        candidate = f"{source[head.start() : head.end()]}\n{source[init.start() : end]}\n        pass\n"
        try:
            parsing.module(candidate)
        except SyntaxError:
            continue  # a `):` inside an annotation or a default: the signature goes on
        return candidate
    return ""


def _declared(source: str, args_class: str) -> frozenset[str] | None:
    """The camelCase inputs of the first `__init__` of the top-level class `args_class` in `source`."""
    try:
        tree = parsing.module(source)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == args_class:
            init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
            if init is not None:
                return frozenset(_camel(a.arg) for a in [*init.args.args, *init.args.kwonlyargs] if a.arg != "__self__")
    return None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _rule(type_: str, facts: Autonaming) -> AutoNameRule | None:
    if type_ in facts.overrides:
        return facts.overrides[type_]
    rule = facts.bridged.get(type_.split(":", 1)[0])
    inputs = sdk_inputs(type_) if rule is not None else None
    return rule if rule is not None and inputs is not None and rule.property in inputs else None


def _suffix(urn: str, length: int) -> str:
    return hashlib.sha256(urn.encode()).hexdigest()[:length]


def with_auto_names(type_: str, logical: str, urn: str, inputs: dict, custom: bool, facts: Autonaming) -> dict:
    """The inputs as the provider completes them in a preview: an omitted auto-named property named.
    Raises TooLong where the provider refuses the name."""
    if not custom:
        return inputs
    if type_.startswith("kubernetes:") and "/" in type_.split(":")[1] and not type_.startswith("kubernetes:helm.sh/"):
        metadata = given if isinstance(given := inputs.get("metadata"), dict) else {}
        if "name" in metadata or "generateName" in metadata:
            return inputs
        return {**inputs, "metadata": {**metadata, "name": f"{logical}-{_suffix(urn, facts.kubernetes_random_length)}"}}
    rule = _rule(type_, facts)
    if rule is None or rule.property in inputs:
        return inputs
    if any(p in inputs for p in ([rule.unless_given] if rule.unless_given else facts.prefix_inputs)):
        return {**inputs, rule.property: UNKNOWN}  # the provider computes it from the prefix: known after apply
    base = logical.lower() if rule.lowercase else logical
    if len(base) + len(rule.separator) + facts.random_length > rule.max_length:
        raise TooLong(
            f"{type_} {logical!r}: name {base + rule.separator!r} plus {facts.random_length} random chars is longer than maximum length {rule.max_length}"
        )
    return {**inputs, rule.property: f"{base}{rule.separator}{_suffix(urn, facts.random_length)}"}
