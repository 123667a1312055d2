"""The GKE API's own word on a node pool: `gcp.container.NodePool` inputs mapped to the
`projects.locations.clusters.nodePools.create` request body, checked against the `container.v1`
discovery document that google-api-python-client ships (as botocore's models are for AWS).

The mapping is the one place that knows how pulumi-gcp's input names become the API's: an input it
does not map is reported, never dropped, so a field the check cannot see is said to be unchecked.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import cast

from gpufleet.apis.values import Target, decimal, kind_problem, rename, whole_number

# pulumi-gcp input (camelCase, as the engine receives it) -> the API's field, per object. A value of
# None means the input is provider-side only (no API field): e.g. `location` is in the request URL.
_NODE_POOL: dict[str, Target] = {
    "name": "name",
    "namePrefix": "name",  # the provider sends the prefix with a random suffix as the pool's name
    "nodeConfig": ("config", "NodeConfig"),
    "nodeLocations": "locations",
    "initialNodeCount": "initialNodeCount",
    "nodeCount": "initialNodeCount",  # pulumi-gcp resizes to it after creation; at create it is the initial count
    "autoscaling": ("autoscaling", "NodePoolAutoscaling"),
    "management": ("management", "NodeManagement"),
    "version": "version",
    "cluster": None,
    "location": None,
    "project": None,
}
_NODE_CONFIG: dict[str, Target] = {
    "machineType": "machineType",
    "guestAccelerators": ("accelerators", "AcceleratorConfig"),
    "labels": "labels",
    "resourceLabels": "resourceLabels",
    "taints": ("taints", "NodeTaint"),
    "spot": "spot",
    "preemptible": "preemptible",
    "diskSizeGb": "diskSizeGb",
    "diskType": "diskType",
    "imageType": "imageType",
    "oauthScopes": "oauthScopes",
    "serviceAccount": "serviceAccount",
    "metadata": "metadata",
    "tags": "tags",
}
_ACCELERATOR: dict[str, Target] = {
    "type": "acceleratorType",
    "count": "acceleratorCount",
    "gpuPartitionSize": "gpuPartitionSize",
    "gpuDriverInstallationConfig": ("gpuDriverInstallationConfig", "GPUDriverInstallationConfig"),
    "gpuSharingConfig": ("gpuSharingConfig", "GPUSharingConfig"),
}
_AUTOSCALING: dict[str, Target] = {
    "minNodeCount": "minNodeCount",
    "maxNodeCount": "maxNodeCount",
    "totalMinNodeCount": "totalMinNodeCount",
    "totalMaxNodeCount": "totalMaxNodeCount",
    "locationPolicy": "locationPolicy",
}
# pulumi-gcp's taint effects are the API's enum already (NO_SCHEDULE); the nested objects of the
# driver and sharing configs keep their names.
_SAME = None
MAPPINGS: dict[str, dict[str, Target] | None] = {
    "NodePool": _NODE_POOL,
    "NodeConfig": _NODE_CONFIG,
    "AcceleratorConfig": _ACCELERATOR,
    "NodePoolAutoscaling": _AUTOSCALING,
    "NodeManagement": _SAME,
    "NodeTaint": _SAME,
    "GPUDriverInstallationConfig": _SAME,
    "GPUSharingConfig": _SAME,
}


@lru_cache(maxsize=1)
def discovery() -> dict:
    """google-api-python-client's copy of the container.v1 discovery document."""
    path = resources.files("googleapiclient") / "discovery_cache" / "documents" / "container.v1.json"
    return json.loads(path.read_text())


def revision() -> str:
    return discovery()["revision"]


def to_api(inputs: dict, schema: str = "NodePool") -> tuple[dict, list[str]]:
    """The request body for the inputs, and the inputs that have no mapping (dotted paths)."""
    mapping = MAPPINGS[schema]
    if mapping is _SAME:
        return dict(inputs), []
    body, unmapped = rename(inputs, mapping, _nested)
    if schema == "NodePool" and "autoscaling" in body and isinstance(body["autoscaling"], dict):
        # pulumi-gcp's autoscaling block means autoscaling on; the API says so with `enabled`.
        body["autoscaling"] = {"enabled": True, **body["autoscaling"]}
    return body, unmapped


def _nested(body: dict, target: tuple[str, str], key: str, value: object) -> list[str]:
    """An input whose value is an object (or a list of them) of another schema."""
    field, nested = target
    if isinstance(value, list):
        converted = [to_api(v, nested) if isinstance(v, dict) else (v, []) for v in value]
        body[field] = [c for c, _ in converted]
        return [f"{key}[{i}].{u}" for i, (_, us) in enumerate(converted) for u in us]
    if isinstance(value, dict):
        body[field], inner = to_api(value, nested)
        return [f"{key}.{u}" for u in inner]
    body[field] = value
    return []


def problems(body: object, schema: str = "NodePool", path: str = "") -> list[str]:
    """What the discovery document refuses in the body: unknown fields, wrong types, values outside
    an enum, int64 strings that are not integers. Unknown values (None: not known at preview) pass."""
    found: list[str] = []
    _check(body, {"$ref": schema}, path or schema, found)
    return found


def _check(value: object, prop: dict, path: str, found: list[str]) -> None:
    if value is None:
        return
    schemas = discovery()["schemas"]
    if "$ref" in prop:
        schema = schemas[prop["$ref"]]
        if not isinstance(value, dict):
            found.append(f"{path}: a {prop['$ref']} object, not {type(value).__name__}")
            return
        fields = schema.get("properties", {})
        for key, item in value.items():
            if key not in fields:
                found.append(f"{path}.{key}: not a field of {prop['$ref']} (container.v1 revision {revision()})")
            else:
                _check(item, fields[key], f"{path}.{key}", found)
        return
    kind = prop.get("type")
    if kind == "array":
        reason = kind_problem("list", value)
        if reason:
            found.append(f"{path}: {reason}")
            return
        for i, item in enumerate(cast(list, value)):  # a list: kind_problem says so
            _check(item, prop["items"], f"{path}[{i}]", found)
    elif kind == "object":
        reason = kind_problem("object", value)
        if reason:
            found.append(f"{path}: {reason}")
            return
        extra = prop.get("additionalProperties")
        for key, item in cast(dict, value).items():  # an object: kind_problem says so
            if extra is not None:
                _check(item, extra, f"{path}.{key}", found)
    elif kind == "string" and prop.get("format") == "int64":
        # int64 travels as a JSON string; a whole number is what it must hold.
        if not (whole_number(value) or (isinstance(value, str) and decimal(value.removeprefix("-")) is not None)):
            found.append(f"{path}: an int64, not {value!r}")
    elif kind in ("string", "integer", "boolean"):
        reason = kind_problem(kind, value)
        if reason:
            found.append(f"{path}: {reason}")
        elif kind == "string" and "enum" in prop and value not in prop["enum"]:
            found.append(f"{path}: {value!r} is not one of {', '.join(prop['enum'])}")
        elif kind == "integer" and prop.get("format") == "int32" and not -(2**31) <= int(cast(float, value)) < 2**31:
            found.append(f"{path}: {int(cast(float, value))} is past an int32")  # a whole number: kind_problem says so
