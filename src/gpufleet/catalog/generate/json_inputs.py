"""Regenerate `data/aws_json_inputs.json`: the resource inputs pulumi-aws serialises to a JSON string
itself when a program gives them as an object (IAM roles' `assumeRolePolicy`, IAM, bucket and queue
policies' `policy`, ECR lifecycle policies, ...).

    python -m gpufleet.catalog.generate.json_inputs            # from the installed pulumi-aws SDK
    python -m gpufleet.catalog.generate.json_inputs --check    # exit 1 if the committed file is stale

Source: the pulumi-aws Python SDK installed beside gpufleet (pulumi/pulumi-aws `sdk/python/pulumi_aws`,
generated from the provider's schema, `provider/cmd/pulumi-resource-aws/schema.json`). The schema
types such an input as a string or an object type; the provider's mapping declares both the type and
the conversion (pulumi-aws `provider/resources.go`, e.g. `aws_iam_group_policy`'s `policy`:
`Type: "string"`, `AltTypes: []tokens.Type{awsType(iamMod, "documents", "PolicyDocument")}`,
`Transform: tfbridge.TransformJSONDocument`; `aws_ecr_lifecycle_policy`'s with `LifecyclePolicyDocument`),
and the SDK writes it as the annotation `pulumi.Input[Union[_builtins.str, 'PolicyDocumentArgs']]` on the
resource's Args class. The Terraform side of such an input is a string, which takes an object only
through that transform: every such union is read as one. pulumi-terraform-bridge
`pkg/tfbridge/transforms.go` is what the provider then does with the object (json.Marshal).

Object types inside such a document (a statement's `Principal`, itself a string or an object) are the
document's own shape, not conversions of their own; a union of a string and an object anywhere else
stops the run, as a conversion this file cannot place.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import sys
from importlib import metadata
from pathlib import Path

from gpufleet.catalog.catalog import DATA
from gpufleet.catalog.generate.rendering import check_asked, one_entry_a_line, written
from gpufleet.errors import GpufleetError

REGENERATE = "python -m gpufleet.catalog.generate.json_inputs"
DATA_FILE = DATA / "aws_json_inputs.json"
PACKAGE = "pulumi-aws"
INPUT_TYPE = re.compile(r"^@pulumi\.input_type\nclass (\w+)\b", re.MULTILINE)
UNION_MARK = "Union[_builtins.str, '"
REPOSITORY = "pulumi/pulumi-aws"


class SchemaShapeError(GpufleetError):
    """The SDK holds a string-or-object input this generator has no place for."""


def _sdk_root() -> Path:
    # The package's folder without importing it: importing pulumi_aws registers 200 service modules.
    spec = importlib.util.find_spec("pulumi_aws")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the pulumi-aws package (its generated Python SDK) is not installed")
    return Path(spec.submodule_search_locations[0])


def _is_input_type(node: ast.ClassDef) -> bool:
    return any(ast.unparse(d) == "pulumi.input_type" for d in node.decorator_list)


def _getters(node: ast.ClassDef):
    """(Pulumi name, annotation) of each property of an Args class, as its `@pulumi.getter` names it."""
    for item in node.body:
        if not isinstance(item, ast.FunctionDef) or item.returns is None:
            continue
        for decorator in item.decorator_list:
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pulumi.getter":
                named = [k.value for k in decorator.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)]
                yield (named[0].value if named else item.name), item.returns
            elif ast.unparse(decorator) == "pulumi.getter":
                yield item.name, item.returns


def _union_objects(annotation: ast.expr, object_types: set[str]) -> list[tuple[bool, list[str]]]:
    """Each `Union[...]` in the annotation that holds `_builtins.str` and object types: (whether it is the
    property's own type, under `pulumi.Input` and `Optional` only; the object type names)."""
    own = annotation
    while isinstance(own, ast.Subscript) and ast.unparse(own.value) in ("pulumi.Input", "Optional"):
        own = own.slice
    found = []
    for node in ast.walk(annotation):
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) == "Union" and isinstance(node.slice, ast.Tuple):
            members = node.slice.elts
            names = [m.value for m in members if isinstance(m, ast.Constant) and m.value in object_types]
            if names and any(ast.unparse(m) == "_builtins.str" for m in members):
                found.append((node is own, names))
    return found


def _resource_token(tree: ast.Module) -> str | None:
    """The type token a resource module registers: `super(Role, __self__).__init__(<the type token>, ...)`."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "__init__"
            and isinstance(node.func.value, ast.Call)
            and ast.unparse(node.func.value.func) == "super"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("aws:")
        ):
            return str(node.args[0].value)
    return None


def _references(node: ast.ClassDef, object_types: set[str]) -> set[str]:
    return {
        c.value for _, annotation in _getters(node) for c in ast.walk(annotation) if isinstance(c, ast.Constant) and c.value in object_types
    }


def build(root: Path, version: str) -> dict:
    """The document: per resource type token, its inputs the provider serialises, with the object type."""
    # Input type names from the text (27 MB of _inputs.py); syntax trees only of the files read further.
    declared = {path.parent.name: set(INPUT_TYPE.findall(path.read_text(encoding="utf-8"))) for path in sorted(root.glob("*/_inputs.py"))}
    object_types = set().union(*declared.values())

    @functools.cache
    def classes(service: str) -> dict[str, ast.ClassDef]:
        tree = ast.parse((root / service / "_inputs.py").read_text(encoding="utf-8"))
        return {node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and _is_input_type(node)}

    def where(name: str, service: str) -> str:
        # A forward reference names a class of the module's own service, or of the one service declaring it.
        if name in declared.get(service, ()):
            return service
        homes = [s for s, names in declared.items() if name in names]
        if len(homes) != 1:
            raise SchemaShapeError(f"{service}: {name} is declared by {len(homes)} services ({', '.join(homes)}), none of them this one")
        return homes[0]

    found: dict[str, dict[str, str]] = {}
    for path in sorted(root.glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        text = path.read_text(encoding="utf-8")
        if UNION_MARK not in text:  # most modules: read past without parsing
            continue
        tree = ast.parse(text)
        for node in tree.body:
            if not (
                isinstance(node, ast.ClassDef) and _is_input_type(node) and node.name.endswith("Args") and not node.name.startswith("_")
            ):
                continue
            for name, annotation in _getters(node):
                for own, names in _union_objects(annotation, object_types):
                    if not own or len(names) != 1:
                        raise SchemaShapeError(
                            f"{path}: {node.name}.{name}: {ast.unparse(annotation)} is a conversion this generator cannot place"
                        )
                    token = _resource_token(tree)
                    if token is None:
                        raise SchemaShapeError(f"{path}: no resource type token for {node.name}")
                    found.setdefault(token, {})[name] = f"pulumi_aws.{where(names[0], path.parent.name)}.{names[0]}"
    # The documents' own object members (a statement's Principal) are reached from the roots; any
    # other input type with a string-or-object member would be a conversion inside a structure.
    reached: set[tuple[str, str]] = set()
    pending = [tuple(q.split(".")[1:]) for per in found.values() for q in per.values()]
    while pending:
        service, name = pending.pop()
        if (service, name) in reached:
            continue
        reached.add((service, name))
        pending += [(where(ref, service), ref) for ref in _references(classes(service)[name], object_types)]
    for path in sorted(root.glob("*/_inputs.py")):
        if UNION_MARK not in path.read_text(encoding="utf-8"):
            continue
        for node in classes(path.parent.name).values():
            if (path.parent.name, node.name) in reached:
                continue
            for name, annotation in _getters(node):
                if _union_objects(annotation, object_types):
                    raise SchemaShapeError(
                        f"{path}: {node.name}.{name}: {ast.unparse(annotation)} is a conversion inside a structure this generator cannot place"
                    )
    return {
        "generated": {
            "by": REGENERATE,
            "source": {
                "package": f"{PACKAGE} {version} (PyPI), its Python SDK generated from the provider schema",
                "repository": REPOSITORY,
                "tag": f"v{version}",
                "path": "sdk/python/pulumi_aws (from provider/cmd/pulumi-resource-aws/schema.json)",
            },
            "conversion": "pulumi-terraform-bridge pkg/tfbridge/transforms.go TransformJSONDocument: an object or array becomes its json.Marshal",
        },
        "jsonDocuments": {token: dict(sorted(per.items())) for token, per in sorted(found.items())},
    }


def render(document: dict) -> str:
    """One resource type a line, keys sorted, stable across runs."""
    return one_entry_a_line(document, ("jsonDocuments",))


def main(argv: list[str] | None = None) -> int:
    check = check_asked(REGENERATE, __doc__ or "", argv)
    version = metadata.version(PACKAGE)
    try:
        text = render(build(_sdk_root(), version))
    except SchemaShapeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return written(DATA_FILE, text, check, f"{PACKAGE} {version}", REGENERATE)


if __name__ == "__main__":
    sys.exit(main())
