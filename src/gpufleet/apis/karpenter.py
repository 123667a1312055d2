"""The Kubernetes API server's word on a Karpenter object: a NodePool, EC2NodeClass or NodeOverlay
held against the `openAPIV3Schema` of its CRD at the pinned chart (catalog data
charts/karpenter-crd-1.14.1, unchanged), as the API server validates it before Karpenter sees it.

The CRDs' CEL rules (`x-kubernetes-validations`) on a NodePool's label keys (its template's labels
and its requirements' keys) are read from the CRD and evaluated (`key_rules`): no CEL library is
installed or pinned, so the two forms those rules take are translated, and a rule of any other form
there fails the load. The other CEL rules are not evaluated: `cel_rules` lists them, and each check
says how many it left out. A value known only after apply is not judged."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import DATA, shipped_yaml

if TYPE_CHECKING:
    import jsonschema

_VERSION = "1.14.1"
CRDS = DATA / "charts" / f"karpenter-crd-{_VERSION}"
# The CRD of each Karpenter type token (kubernetes:<group>/<version>:<kind>).
_FILES = {
    tokens.KARPENTER_NODE_POOL: "karpenter.sh_nodepools.yaml",
    tokens.KARPENTER_EC2_NODE_CLASS: "karpenter.k8s.aws_ec2nodeclasses.yaml",
    tokens.KARPENTER_NODE_OVERLAY: "karpenter.sh_nodeoverlays.yaml",
}


@dataclass(frozen=True)
class CrdCheck:
    problems: tuple[str, ...]  # each: the field's path, the value and the schema's rule
    cel_rules: int  # the CEL rules of the CRD this check did not evaluate


def checked_types() -> tuple[str, ...]:
    return tuple(_FILES)


@cache
def _schema(type_token: str) -> tuple[dict, int]:
    """The version's openAPIV3Schema (the object's `status` left out), and its CEL rule count."""
    document = shipped_yaml(CRDS / _FILES[type_token])
    version = type_token.split(":")[1].split("/")[1]
    [served] = [v for v in document["spec"]["versions"] if v["name"] == version]
    schema = dict(served["schema"]["openAPIV3Schema"])
    schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k != "status"}
    return schema, len(cel_rules(schema))


def _validations(schema: object, path: str = "") -> Iterator[tuple[str, Mapping]]:
    """(path, x-kubernetes-validations entry) of every CEL rule in a schema."""
    if isinstance(schema, Mapping):
        for rule in schema.get("x-kubernetes-validations") or []:
            yield path or ".", rule
        for key, sub in schema.items():
            if key == "properties" and isinstance(sub, Mapping):
                for name, prop in sub.items():
                    yield from _validations(prop, f"{path}.{name}")
            elif key == "items":
                yield from _validations(sub, f"{path}[]")


def cel_rules(schema: object, path: str = "") -> list[tuple[str, str]]:
    """(path, rule) of every CEL rule in a schema: what the API server evaluates."""
    return [(where, rule.get("rule", "")) for where, rule in _validations(schema, path)]


# Where the NodePool CRD's CEL rules judge label keys (karpenter.sh_nodepools.yaml @bde00654
# L223-L231: the template's labels, each key as x; L292-L300: each requirement's key as self).
LABELS, REQUIREMENT_KEY = ".spec.template.metadata.labels", ".spec.template.spec.requirements[].key"
_EACH_KEY = re.compile(r"self\.all\(x, (?P<body>.*)\)")
_DOMAIN = re.compile(r'x in \[(?P<allowed>[^\]]*)\] \|\| !x\.find\("(?P<find>[^"]+)"\)\.endsWith\("(?P<domain>[^"]+)"\)')
_NOT = re.compile(r'x != "(?P<key>[^"]+)"')


@dataclass(frozen=True)
class KeyRule:
    """One CEL rule of the NodePool CRD on a label key, translated from either form it takes: the
    key `refused`, or any key whose domain (what `find` first matches; "" if nothing, as CEL's
    find) ends with `domain` and is not `allowed`."""

    path: str
    message: str
    refused: str | None = None
    find: str = ""
    domain: str = ""
    allowed: frozenset[str] = frozenset()

    def refuses(self, key: str) -> bool:
        if self.refused is not None:
            return key == self.refused
        found = re.search(self.find, key)
        return key not in self.allowed and (found.group(0) if found else "").endswith(self.domain)


def _key_rule(path: str, rule: Mapping) -> KeyRule:
    text = str(rule.get("rule", ""))
    each = _EACH_KEY.fullmatch(text)
    body = each.group("body") if each else re.sub(r"\bself\b", "x", text)
    if named := _NOT.fullmatch(body):
        return KeyRule(path, str(rule.get("message")), refused=named.group("key"))
    if domain := _DOMAIN.fullmatch(body):
        allowed = frozenset(re.findall(r'"([^"]*)"', domain.group("allowed")))
        return KeyRule(path, str(rule.get("message")), find=domain.group("find"), domain=domain.group("domain"), allowed=allowed)
    raise ValueError(f"the NodePool CRD's CEL rule at {path} is of a form gpufleet does not translate: {text}")


@cache
def key_rules() -> tuple[KeyRule, ...]:
    """The NodePool CRD's CEL rules on label keys, translated."""
    schema, _ = _schema(tokens.KARPENTER_NODE_POOL)
    return tuple(_key_rule(path, rule) for path, rule in _validations(schema) if path in (LABELS, REQUIREMENT_KEY))


def restricted_key_problem(key: str, path: str) -> str | None:
    """Why the API server refuses a NodePool with this label key at `path` (LABELS or
    REQUIREMENT_KEY), by the CRD's own CEL rules; None where none refuses it."""
    for rule in key_rules():
        if rule.path == path and rule.refuses(key):
            return f"{rule.message}: the API server refuses the NodePool (its CRD's CEL rule at {path}, Karpenter {_VERSION})"
    return None


def _field(obj: object, *keys: str) -> object:
    for key in keys:
        obj = obj.get(key) if isinstance(obj, Mapping) else None
    return obj


def _key_problems(obj: Mapping) -> list[str]:
    labels = _field(obj, "spec", "template", "metadata", "labels")
    requirements = _field(obj, "spec", "template", "spec", "requirements")
    keys = labels if isinstance(labels, Mapping) else {}
    found = [(f"spec.template.metadata.labels[{k!r}]", restricted_key_problem(str(k), LABELS)) for k in keys]
    for i, r in enumerate(requirements if isinstance(requirements, list) else []):
        if isinstance(r, Mapping) and isinstance(r.get("key"), str):
            found.append((f"spec.template.spec.requirements[{i}].key", restricted_key_problem(r["key"], REQUIREMENT_KEY)))
    return [f"{where}: {problem}" for where, problem in found if problem]


def _path(error: jsonschema.ValidationError) -> str:
    text = ""
    for part in error.absolute_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the object)"


# The CRDs' patterns of a Go duration (metav1.Duration, NillableDuration: "(s|m|h)", budgets' "(h|m)")
# and of a resource.Quantity ("[KMGTPE]i"): @bde00654 karpenter.sh_nodepools.yaml L99, L151, L173,
# L246, L440; karpenter.k8s.aws_ec2nodeclasses.yaml L397, L412, L450, L476; karpenter.sh_nodeoverlays.yaml L60.
_KINDS = (("duration", ("(s|m|h)", "(h|m)")), ("quantity", ("[KMGTPE]i",)))


def _kind(schema: Mapping) -> str | None:
    pattern = str(schema.get("pattern", ""))
    return next((kind for kind, marks in _KINDS if any(m in pattern for m in marks)), None)


def typed_values(type_token: str, obj: object) -> Iterator[tuple[str, str, str, object]]:
    """(path, its last key, kind, value) of every duration and quantity the object gives, by its CRD's schema:
    what Karpenter's controller parses with Go's time.ParseDuration or resource.ParseQuantity."""
    schema, _ = _schema(type_token)
    yield from _typed(schema, obj, "", "")


def _typed(schema: object, value: object, path: str, key: str) -> Iterator[tuple[str, str, str, object]]:
    if not isinstance(schema, Mapping) or value == tokens.UNKNOWN:
        return
    kind = _kind(schema)
    if kind and isinstance(value, (str, int, float)):
        yield path, key, kind, value
    elif isinstance(value, Mapping):
        properties, extra = schema.get("properties") or {}, schema.get("additionalProperties")
        for name, sub in value.items():
            yield from _typed(properties.get(name, extra), sub, f"{path}.{name}" if path else str(name), str(name))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _typed(schema.get("items"), item, f"{path}[{i}]", key)


def check(type_token: str, obj: Mapping) -> CrdCheck:
    """The object's problems against its CRD's schema (apiVersion, kind, metadata and spec)."""
    # Imported where an object is checked: jsonschema (and the modules it brings) took 0.04 s of CPU
    # of every pack's start and every preview's, most of which judge no Karpenter object.
    import jsonschema

    schema, cel = _schema(type_token)
    validator = jsonschema.Draft7Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(dict(obj)), key=lambda e: list(map(str, e.absolute_path))):
        if error.instance == tokens.UNKNOWN:
            continue  # a value known only after apply (the schema cannot look inside it)
        problems.append(f"{_path(error)}: {error.message}")
    if type_token == tokens.KARPENTER_NODE_POOL:
        problems += _key_problems(obj)
        cel -= len(key_rules())
    return CrdCheck(tuple(problems), cel)
