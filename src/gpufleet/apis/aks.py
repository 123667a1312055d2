"""The AKS API's own word on a node pool: `azure.containerservice.KubernetesClusterNodePool` inputs
(pulumi-azure) mapped to the Agent Pools `createOrUpdate` body's `properties`, checked against the
models of azure-mgmt-containerservice (field names, types, the known values of its enums).

The mapping is the one place that knows how pulumi-azure's input names become the API's: an input it
does not map is reported, never dropped.
"""

from __future__ import annotations

import enum
import sys
import typing
from functools import cache
from typing import cast

from gpufleet.apis.values import kind_problem, rename

# pulumi-azure input (camelCase) -> ARM agent pool property; None: in the request URL, not the body.
# gpuDriver becomes the nested gpuProfile.driver.
_NODE_POOL = {
    "vmSize": "vmSize",
    "nodeCount": "count",
    "autoScalingEnabled": "enableAutoScaling",
    "minCount": "minCount",
    "maxCount": "maxCount",
    "mode": "mode",
    "osType": "osType",
    "osSku": "osSKU",
    "osDiskSizeGb": "osDiskSizeGB",
    "osDiskType": "osDiskType",
    "zones": "availabilityZones",
    "gpuInstance": "gpuInstanceProfile",
    "gpuDriver": ("gpuProfile", "driver"),
    "nodeTaints": "nodeTaints",
    "nodeLabels": "nodeLabels",
    "priority": "scaleSetPriority",
    "evictionPolicy": "scaleSetEvictionPolicy",
    "spotMaxPrice": "spotMaxPrice",
    "maxPods": "maxPods",
    "orchestratorVersion": "orchestratorVersion",
    "vnetSubnetId": "vnetSubnetID",
    "podSubnetId": "podSubnetID",
    "tags": "tags",
    "name": None,
    "kubernetesClusterId": None,
    "temporaryNameForRotation": None,  # the provider's rotation pool, not a field of the agent pool
}
ROOT = "AgentPoolManagedClusterAgentPoolProfileProperties"


def to_api(inputs: dict) -> tuple[dict, list[str]]:
    """The agent pool's `properties`, and the inputs that have no mapping."""
    return rename(inputs, _NODE_POOL, _nest)


def _nest(body: dict, target: tuple[str, str], key: str, value: object) -> list[str]:
    body.setdefault(target[0], {})[target[1]] = value
    return []


@cache
def _fields(model_name: str) -> dict[str, object]:
    """REST name -> type hint of a model of azure-mgmt-containerservice."""
    from azure.mgmt.containerservice import models

    model = getattr(models, model_name)
    namespace = {**vars(sys.modules[model.__module__]), "_models": models}
    hints = typing.get_type_hints(model, globalns=namespace)
    return {field._rest_name: hints.get(attr) for attr, field in type(model())._attr_to_rest_field.items()}


def problems(body: dict, model: str = ROOT, path: str = "properties") -> list[str]:
    """What the models refuse in the body: unknown fields, wrong types, values outside an enum's known values."""
    found: list[str] = []
    fields = _fields(model)
    for key, value in body.items():
        if key not in fields:
            found.append(f"{path}.{key}: not a field of {model}")
        elif value is not None:
            _check(value, fields[key], f"{path}.{key}", found)
    return found


def _check(value: object, hint: object, path: str, found: list[str]) -> None:
    args = [a for a in typing.get_args(hint) if a is not type(None)] if typing.get_origin(hint) is typing.Union else [hint]
    enums = [a for a in args if isinstance(a, type) and issubclass(a, enum.Enum)]
    models = [a for a in args if isinstance(a, type) and getattr(a, "_is_model", False)]
    if enums:
        known = [e.value for e in enums[0]]
        if not isinstance(value, str) or value.lower() not in {k.lower() for k in known}:
            found.append(f"{path}: {value!r} is not one of {', '.join(known)} ({enums[0].__name__})")
        return
    if models:
        if not isinstance(value, dict):
            found.append(f"{path}: a {models[0].__name__} object, not {value!r}")
        else:
            found.extend(problems(value, models[0].__name__, path))
        return
    kind = args[0] if args else None
    origin = typing.get_origin(kind) or kind
    reason = kind_problem(_KINDS.get(origin, ""), value)
    if reason:
        found.append(f"{path}: {reason}")
    elif origin is list:
        (item,) = typing.get_args(kind) or (None,)
        for i, element in enumerate(cast(list, value)):  # a list: kind_problem says so
            _check(element, item, f"{path}[{i}]", found)


# The SDK models' Python types as the JSON kinds they stand for.
_KINDS: dict[object, str] = {list: "list", dict: "object", bool: "boolean", int: "integer", float: "number", str: "string"}
