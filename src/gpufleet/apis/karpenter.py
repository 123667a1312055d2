"""The Kubernetes API server's word on a Karpenter object: a NodePool, EC2NodeClass or NodeOverlay
held against the `openAPIV3Schema` of its CRD at the pinned chart (catalog data
charts/karpenter-crd-1.14.1, unchanged), as the API server validates it before Karpenter sees it.

The CRDs' CEL rules (`x-kubernetes-validations`) are not evaluated here: `cel_rules` lists them, and
each check says how many it left out. A value known only after apply is not judged."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import jsonschema
from ruamel.yaml import YAML

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import DATA

CRDS = DATA / "charts" / "karpenter-crd-1.14.1"
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
    document = YAML(typ="safe", pure=True).load((CRDS / _FILES[type_token]).read_text())
    version = type_token.split(":")[1].split("/")[1]
    [served] = [v for v in document["spec"]["versions"] if v["name"] == version]
    schema = dict(served["schema"]["openAPIV3Schema"])
    schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k != "status"}
    return schema, len(cel_rules(schema))


def cel_rules(schema: object, path: str = "") -> list[tuple[str, str]]:
    """(path, rule) of every CEL rule in a schema: what the API server evaluates and this check does not."""
    found = []
    if isinstance(schema, Mapping):
        for rule in schema.get("x-kubernetes-validations") or []:
            found.append((path or ".", rule.get("rule", "")))
        for key, sub in schema.items():
            if key == "properties" and isinstance(sub, Mapping):
                for name, prop in sub.items():
                    found += cel_rules(prop, f"{path}.{name}")
            elif key == "items":
                found += cel_rules(sub, f"{path}[]")
    return found


def _path(error: jsonschema.ValidationError) -> str:
    text = ""
    for part in error.absolute_path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the object)"


def check(type_token: str, obj: Mapping) -> CrdCheck:
    """The object's problems against its CRD's schema (apiVersion, kind, metadata and spec)."""
    schema, cel = _schema(type_token)
    validator = jsonschema.Draft7Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(dict(obj)), key=lambda e: list(map(str, e.absolute_path))):
        if error.instance == tokens.UNKNOWN:
            continue  # a value known only after apply (the schema cannot look inside it)
        problems.append(f"{_path(error)}: {error.message}")
    return CrdCheck(tuple(problems), cel)
