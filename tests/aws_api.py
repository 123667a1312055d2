"""Turn plan resources into the AWS API requests the provider would send, and check them against
botocore's service models: types and required members (botocore's own validator) plus enums and
unknown members (which botocore's validator does not check)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import botocore.session
from botocore.validate import ParamValidator

from infra.engine import UNKNOWN

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
    if kind == "list":
        if isinstance(value, dict) and shape.member.type_name == "structure":  # Pulumi tag maps
            keys = [m for m in shape.member.members if m.lower() == "key"]
            values = [m for m in shape.member.members if m.lower() == "value"]
            return [{keys[0]: k, values[0]: v} for k, v in value.items()]
        return [convert(shape.member, v, f"{path}[{i}]", problems, member) for i, v in enumerate(value)]
    if kind == "map":
        return {k: convert(shape.value, v, f"{path}.{k}", problems, member) for k, v in value.items()}
    if value == UNKNOWN:
        return _placeholder(member) if kind == "string" else 1
    if kind == "boolean" and isinstance(value, str):
        return {"true": True, "false": False}.get(value, value)
    if kind == "string" and shape.enum and value not in shape.enum:
        problems.append(f"{path} = {value!r}: not one of {', '.join(shape.enum)}")
    return value


def _request(service: str, operation: str, params: dict) -> Request:
    model = botocore.session.get_session().get_service_model(service)
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
        inputs["containerDefinitions"] = json.loads(inputs["containerDefinitions"])
        return _request("ecs", "RegisterTaskDefinition", inputs)
    if kind == "aws:ec2/launchTemplate:LaunchTemplate":
        name = inputs.pop("name")
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
