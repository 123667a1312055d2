"""Turn plan resources into the AWS API requests the provider would send, and check them against
botocore's service models: types and required members (botocore's own validator), plus what its
validator leaves out: enums, unknown members, `max` (lengths and values), `pattern`. The policy pack
judges any plan with it (`aws-api-model`); the spec checks its own fields against the same models
with `field_problem`."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

import botocore.session
from botocore.validate import ParamValidator

# How the engine marks a value known only after apply (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

# Inputs the Pulumi provider keeps for itself; they have no API member.
PROVIDER_ONLY = {"skipDestroy", "trackLatest", "region", "updateDefaultVersion", "tagsAll"}
# Pulumi input names that differ from the API member name beyond the first letter's case.
ALIASES = {"securityGroups": "Groups"}


@dataclass
class Request:
    service: str
    operation: str
    params: dict
    problems: list[str]


def _placeholder(member: str) -> str:
    """Stand-in for a value known only after apply, in the format AWS expects for that member."""
    if member in ("roleArn", "nodeRole"):
        return "arn:aws:iam::123456789012:role/placeholder"
    if member.lower().endswith("arn"):
        return "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:uuid:autoScalingGroupName/placeholder"
    if member in ("Groups", "SecurityGroupIds"):
        return "sg-0123456789abcdef0"
    return "placeholder"


def convert(shape, value, path: str, problems: list[str], member: str = ""):
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a structure, got {value!r}")
            return value
        out = {}
        for key, item in value.items():
            if key in PROVIDER_ONLY:
                continue
            name = next(
                (m for m in (key, ALIASES.get(key), key[:1].upper() + key[1:]) if m and m in shape.members), None
            )
            if name is None:
                problems.append(f"{path}.{key}: no such member in {shape.name}")
                continue
            out[name] = convert(shape.members[name], item, f"{path}.{name}", problems, name)
        return out
    if kind in ("list", "map") and value == UNKNOWN:
        return [] if kind == "list" else {}
    if kind == "list":
        if isinstance(value, dict) and shape.member.type_name == "structure":  # Pulumi tag maps
            keys = [m for m in shape.member.members if m.lower() == "key"]
            values = [m for m in shape.member.members if m.lower() == "value"]
            return [{keys[0]: k, values[0]: v} for k, v in value.items()]
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list, got {_short(value)}")
            return value
        return [convert(shape.member, v, f"{path}[{i}]", problems, member) for i, v in enumerate(value)]
    if kind == "map":
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a map, got {_short(value)}")
            return value
        return {k: convert(shape.value, v, f"{path}.{k}", problems, member) for k, v in value.items()}
    if value == UNKNOWN:
        return _placeholder(member) if kind == "string" else 1
    if kind == "boolean" and isinstance(value, str):
        return {"true": True, "false": False}.get(value, value)
    if kind in ("integer", "long") and isinstance(value, float) and value.is_integer():
        value = int(value)  # the engine's wire carries every number as a double: 1.0 is the integer 1
    # botocore's validator checks `min` itself.
    problems += [f"{path} = {_short(value)}: {reason}" for reason in scalar_problems(shape, value, with_min=False)]
    return value


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def scalar_problems(shape, value, with_min: bool = True) -> list[str]:
    """What a string or number breaks of its shape's enum, min, max and pattern."""
    found = []
    meta = shape.metadata
    if shape.type_name == "string" and isinstance(value, str):
        if shape.enum and value not in shape.enum:
            found.append(f"not one of {', '.join(shape.enum)}")
        if "max" in meta and len(value) > meta["max"]:
            found.append(f"at most {meta['max']} characters")
        if with_min and "min" in meta and len(value) < meta["min"]:
            found.append(f"at least {meta['min']} character(s)")
        if "pattern" in meta and not re.match(meta["pattern"], value):
            found.append(f"must match {meta['pattern']}")
    if shape.type_name in ("integer", "long") and isinstance(value, (int, float)) and not isinstance(value, bool):
        if "max" in meta and value > meta["max"]:
            found.append(f"at most {meta['max']}")
        if with_min and "min" in meta and value < meta["min"]:
            found.append(f"at least {meta['min']}")
    return found


@functools.cache
def _model(service: str):
    return botocore.session.get_session().get_service_model(service)


def member_shape(service: str, shape: str, member: str, part: str = ""):
    """A member's shape in botocore's model; `part` 'key', 'value' or 'member' descends a map or list."""
    found = _model(service).shape_for(shape).members[member]
    return getattr(found, part) if part else found


def field_problem(value, service: str, shape: str, member: str, part: str = "") -> str | None:
    """What the API's model refuses in one value the spec feeds it (None when it takes it)."""
    found = scalar_problems(member_shape(service, shape, member, part), value)
    where = f"{shape}.{member}" + (f" {part}" if part else "")
    return f"{'; '.join(found)} ({service} API, {where})" if found else None


def _request(service: str, operation: str, params: dict) -> Request:
    model = _model(service)
    shape = model.operation_model(operation).input_shape
    problems: list[str] = []
    converted = convert(shape, params, operation, problems)
    report = ParamValidator().validate(converted, shape)
    if report.has_errors():
        problems.append(report.generate_report())
    return Request(service, operation, converted, problems)


def to_request(resource: dict) -> Request:
    inputs = dict(resource["inputs"])
    kind = resource["type"]
    if kind == "aws:ecs/taskDefinition:TaskDefinition":
        text = inputs.get("containerDefinitions")
        if isinstance(text, str) and text != UNKNOWN:
            try:
                inputs["containerDefinitions"] = json.loads(text)
            except ValueError as err:
                return Request("ecs", "RegisterTaskDefinition", inputs, [f"containerDefinitions: not JSON ({err})"])
        elif text == UNKNOWN:
            inputs["containerDefinitions"] = []
        return _request("ecs", "RegisterTaskDefinition", inputs)
    if kind == "aws:ec2/launchTemplate:LaunchTemplate":
        # Without a name the provider names the template itself.
        name = inputs.pop("name", None) or inputs.pop("namePrefix", None) or "generated-by-the-provider"
        data = {k: v for k, v in inputs.items() if k not in PROVIDER_ONLY}
        return _request("ec2", "CreateLaunchTemplate", {"LaunchTemplateName": name, "LaunchTemplateData": data})
    if kind == "aws:ecs/capacityProvider:CapacityProvider":
        return _request("ecs", "CreateCapacityProvider", inputs)
    if kind == "aws:eks/nodeGroup:NodeGroup":
        renamed = {"nodeGroupName": "nodegroupName", "subnetIds": "subnets", "nodeRoleArn": "nodeRole"}
        return _request("eks", "CreateNodegroup", {renamed.get(k, k): v for k, v in inputs.items()})
    if kind == "aws:eks/cluster:Cluster":
        renamed = {"vpcConfig": "resourcesVpcConfig"}
        return _request("eks", "CreateCluster", {renamed.get(k, k): v for k, v in inputs.items()})
    raise KeyError(kind)


CHECKED_TYPES = (
    "aws:ecs/taskDefinition:TaskDefinition",
    "aws:ec2/launchTemplate:LaunchTemplate",
    "aws:ecs/capacityProvider:CapacityProvider",
    "aws:eks/nodeGroup:NodeGroup",
    "aws:eks/cluster:Cluster",
)
