"""Turn plan resources into the AWS API requests the provider would send, and check them against
botocore's service models: types and required members (botocore's own validator), plus what its
validator leaves out: enums, unknown members, `max` (lengths and values), `pattern`. The policy pack
judges any plan with it (`aws-api-model`); the spec checks its own fields against the same models
with `field_problem`."""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import botocore
from botocore.loaders import create_loader
from botocore.model import ServiceModel

from gpufleet.apis.values import whole_numbers
from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.catalog.wording import counted

# Inputs the Pulumi provider keeps for itself; they have no API member.
PROVIDER_ONLY = {"skipDestroy", "trackLatest", "region", "updateDefaultVersion", "tagsAll"}
# Pulumi input names that differ from the API member name beyond the first letter's case.
ALIASES = {
    "securityGroups": "Groups",
    # Pulumi's own spelling of ECS Managed Instances members (the API's vCpuCount, memoryMiB, ...).
    "vcpuCount": "vCpuCount",
    "memoryMib": "memoryMiB",
    "acceleratorTotalMemoryMib": "acceleratorTotalMemoryMiB",
    "storageSizeGib": "storageSizeGiB",
}
# ... and those that differ only inside one API structure.
SHAPE_ALIASES = {
    ("LaunchTemplateSpecification", "id"): "LaunchTemplateId",
    ("LaunchTemplateSpecification", "name"): "LaunchTemplateName",
    ("RequestLaunchTemplateData", "vpcSecurityGroupIds"): "SecurityGroupIds",
}


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


def convert(shape, value, path: str, problems: list[str], member: str = "", strict: bool = True):
    """The request value of a Pulumi input for the shape, with what the model refuses appended to
    `problems`. `strict` reports an input with no member of that name (the tests, over gpufleet's own
    plans); the pack leaves such inputs to the provider (another program's inputs may map to another call)."""
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a structure, got {_short(value)}")
            return value
        out = {}
        for key, item in value.items():
            if key in PROVIDER_ONLY:
                continue
            candidates = (SHAPE_ALIASES.get((shape.name, key)), key, ALIASES.get(key), key[:1].upper() + key[1:])
            name = next((m for m in candidates if m and m in shape.members), None)
            if name is None:
                if strict:
                    problems.append(f"{path}.{key}: no such member in {shape.name}")
                continue
            out[name] = convert(shape.members[name], item, f"{path}.{name}", problems, name, strict)
        return out
    if kind in ("list", "map") and value == UNKNOWN:
        return [] if kind == "list" else {}
    if kind == "list":
        if isinstance(value, dict) and shape.member.type_name == "structure":  # Pulumi tag maps
            keys = [m for m in shape.member.members if m.lower() == "key"]
            values = [m for m in shape.member.members if m.lower() == "value"]
            if keys and values:  # any other list of structures written as a mapping is refused below
                return [{keys[0]: k, values[0]: v} for k, v in value.items()]
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list, got {_short(value)}")
            return value
        return [convert(shape.member, v, f"{path}[{i}]", problems, member, strict) for i, v in enumerate(value)]
    if kind == "map":
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a map, got {_short(value)}")
            return value
        return {k: convert(shape.value, v, f"{path}.{k}", problems, member, strict) for k, v in value.items()}
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
            found.append(f"at least {counted(meta['min'], 'character')}")
        pattern = _pattern(meta.get("pattern"))
        if pattern is not None and not pattern.match(value):
            found.append(f"must match {meta['pattern']}")
    if shape.type_name in ("integer", "long") and isinstance(value, (int, float)) and not isinstance(value, bool):
        if "max" in meta and value > meta["max"]:
            found.append(f"at most {meta['max']}")
        if with_min and "min" in meta and value < meta["min"]:
            found.append(f"at least {meta['min']}")
    return found


@functools.cache
def _pattern(text: str | None) -> re.Pattern | None:
    """A model's pattern as a Python regex; None when absent, or written for Java's UTF-16 strings
    (surrogate ranges) that Python's str has no counterpart for."""
    if not text:
        return None
    try:
        return re.compile(text)
    except re.error:
        return None


# functools.cache does not stop two threads computing the same entry: the pack's four servicer
# threads, meeting their first resources together, each made a loader and loaded the models they
# met (a 200-service ECS preview: 4 listings of botocore's data folders and 10 model loads where 1
# and 4 do, profiled; ec2's model alone is about 0.1 s). One load at a time, each model once.
_LOADING = threading.Lock()


@functools.cache
def _loader():
    # One loader a process, as a session keeps one: a loader lists botocore's data folders (400
    # services) once, and a new one for each model listed them again (a quarter of the models' load).
    return create_loader()


def _model(service: str) -> ServiceModel:
    with _LOADING:
        return _loaded_model(service)


@functools.cache
def _loaded_model(service: str) -> ServiceModel:
    # What botocore's session does for get_service_model, without importing the session (its
    # clients, docs and HTTP stack take a tenth of a second, in the CLI and again in the pack).
    return ServiceModel(_loader().load_service_model(service, "service-2"), service_name=service)


@functools.cache
def _lean_model(service: str) -> ServiceModel | None:
    """The service's create calls and the shapes their inputs reach, as the installed botocore ships
    them (catalog data; None where it was generated from another botocore): a pack judges its first
    resources of a service after this, where the whole model cost EC2's about 70 ms of CPU."""
    document = catalog.botocore_inputs()
    lean = document["services"].get(service)
    if lean is None or document["generated"]["botocore"] != botocore.__version__:
        return None
    return ServiceModel(lean, service_name=service)


def _operation(service: str, operation: str):
    lean = _lean_model(service)
    if lean is not None and operation in lean.operation_names:
        return lean.operation_model(operation)
    return _model(service).operation_model(operation)


def member_shape(service: str, shape: str, member: str, part: str = ""):
    """A member's shape in botocore's model; `part` 'key', 'value' or 'member' descends a map or list."""
    found = _model(service).shape_for(shape).members[member]
    return getattr(found, part) if part else found


def field_problem(value, service: str, shape: str, member: str, part: str = "") -> str | None:
    """What the API's model refuses in one value the spec feeds it (None when it takes it)."""
    found = scalar_problems(member_shape(service, shape, member, part), value)
    where = f"{shape}.{member}" + (f" {part}" if part else "")
    return f"{'; '.join(found)} ({service} API, {where})" if found else None


def _request(service: str, operation: str, params: dict, strict: bool = True) -> Request:
    from botocore.validate import ParamValidator  # imports botocore's HTTP utilities: only when a request is judged

    shape = _operation(service, operation).input_shape
    problems: list[str] = []
    converted = convert(shape, params, operation, problems, strict=strict)
    report = ParamValidator().validate(converted, shape)
    if report.has_errors():
        problems.append(report.generate_report())
    return Request(service, operation, converted, problems)


def _has_unknown(value) -> bool:
    if isinstance(value, dict):
        return any(_has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_unknown(v) for v in value)
    return value == UNKNOWN


# Go's json.Marshal escapes these five in every string, keys too (pkg.go.dev/encoding/json, Marshal:
# "encoded using HTMLEscape"): each counts six characters, not one, in the length AWS bounds.
_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _as_sent(kind: str, inputs: dict) -> dict:
    """The inputs with each one the provider turns from an object into a JSON string (data/aws_json_inputs.json,
    generated from pulumi-aws's schema) turned as it does: pulumi-terraform-bridge's TransformJSONDocument
    (pkg/tfbridge/transforms.go) marshals an object or array with Go's json.Marshal (keys sorted, compact,
    UTF-8 unescaped), and makes one holding an unknown value unknown as a whole. What the API model then
    judges is the string AWS receives; an object anywhere else is still judged, and refused, as given."""
    for name in catalog.aws_json_inputs().get(kind, ()):
        value = inputs.get(name)
        if isinstance(value, (dict, list)):
            if _has_unknown(value):
                inputs[name] = UNKNOWN
            else:
                text = json.dumps(whole_numbers(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                inputs[name] = text.translate(_GO_ESCAPES)
    return inputs


def _renamed(inputs: dict, names: dict[str, str], drop: tuple[str, ...] = ()) -> dict:
    return {names.get(k, k): v for k, v in inputs.items() if k not in drop}


def to_request(kind: str, props: Mapping, strict: bool = True) -> Request:
    """The API request a Pulumi resource's inputs become (its create call): a plan's typed resource
    gives its `type` and `props`, the pack its resource type and plain props."""
    inputs = _as_sent(kind, dict(props))
    if kind == tokens.ECS_TASK_DEFINITION:
        text = inputs.get("containerDefinitions")
        if isinstance(text, str) and text != UNKNOWN:
            try:
                inputs["containerDefinitions"] = json.loads(text)
            except ValueError as err:
                return Request("ecs", "RegisterTaskDefinition", inputs, [f"containerDefinitions: not JSON ({err})"])
        elif text == UNKNOWN:
            inputs["containerDefinitions"] = []
        return _request("ecs", "RegisterTaskDefinition", inputs, strict)
    if kind == tokens.LAUNCH_TEMPLATE:
        # Without a name the provider names the template itself.
        name = inputs.pop("name", None) or inputs.pop("namePrefix", None) or "generated-by-the-provider"
        data = {k: v for k, v in inputs.items() if k not in PROVIDER_ONLY}
        return _request("ec2", "CreateLaunchTemplate", {"LaunchTemplateName": name, "LaunchTemplateData": data}, strict)
    if kind == tokens.ECS_CAPACITY_PROVIDER:
        return _request("ecs", "CreateCapacityProvider", inputs, strict)
    if kind == tokens.EKS_NODE_GROUP:
        prefix = inputs.pop("nodeGroupNamePrefix", None)
        if prefix is not None:
            inputs["nodeGroupName"] = f"{prefix}{'0' * 26}"  # the provider's unique suffix: 26 characters
        renamed = {"nodeGroupName": "nodegroupName", "subnetIds": "subnets", "nodeRoleArn": "nodeRole"}
        return _request("eks", "CreateNodegroup", _renamed(inputs, renamed), strict)
    if kind == tokens.EKS_CLUSTER:
        return _request("eks", "CreateCluster", _renamed(inputs, {"vpcConfig": "resourcesVpcConfig"}), strict)
    if kind == tokens.ECS_SERVICE:
        renamed = {"name": "serviceName", "capacityProviderStrategies": "capacityProviderStrategy"}
        network = inputs.get("networkConfiguration")
        if isinstance(network, dict):  # the provider flattens awsvpcConfiguration and takes a boolean
            vpc = dict(network)
            if isinstance(vpc.get("assignPublicIp"), bool):
                vpc["assignPublicIp"] = "ENABLED" if vpc["assignPublicIp"] else "DISABLED"
            inputs["networkConfiguration"] = {"awsvpcConfiguration": vpc}
        return _request("ecs", "CreateService", _renamed(inputs, renamed), strict)
    if kind == tokens.ASG:
        renamed = {"name": "AutoScalingGroupName", "protectFromScaleIn": "NewInstancesProtectedFromScaleIn"}
        zones = inputs.pop("vpcZoneIdentifiers", None)
        if isinstance(zones, list):  # the API takes the subnets as one comma-separated string
            inputs["VPCZoneIdentifier"] = ",".join(z if z != UNKNOWN else "subnet-0123456789abcdef0" for z in zones)
        return _request("autoscaling", "CreateAutoScalingGroup", _renamed(inputs, renamed), strict)
    if kind == tokens.IAM_ROLE:
        renamed = {"name": "RoleName", "assumeRolePolicy": "AssumeRolePolicyDocument"}
        inputs.setdefault("name", inputs.pop("namePrefix", None) or "generated-by-the-provider")  # Pulumi autonames
        # Attached and inline policies are calls of their own (AttachRolePolicy, PutRolePolicy).
        return _request("iam", "CreateRole", _renamed(inputs, renamed, ("managedPolicyArns", "inlinePolicies", "tags")), strict)
    if kind == tokens.VPC:
        # DNS attributes are ModifyVpcAttribute calls; tags are TagSpecifications the provider writes.
        return _request("ec2", "CreateVpc", _renamed(inputs, {}, ("enableDnsHostnames", "enableDnsSupport", "tags")), strict)
    if kind == tokens.SUBNET:
        return _request("ec2", "CreateSubnet", _renamed(inputs, {}, ("mapPublicIpOnLaunch", "tags")), strict)
    if kind == tokens.SECURITY_GROUP:
        # Inline rules become AuthorizeSecurityGroupIngress/Egress calls.
        renamed = {"name": "GroupName"}
        inputs.setdefault("name", inputs.pop("namePrefix", None) or "generated-by-the-provider")
        inputs.setdefault("description", "Managed by Pulumi")  # the provider's default
        return _request(
            "ec2", "CreateSecurityGroup", _renamed(inputs, renamed, ("ingress", "egress", "tags", "revokeRulesOnDelete")), strict
        )
    raise KeyError(kind)


CHECKED_TYPES = (
    tokens.ECS_TASK_DEFINITION,
    tokens.LAUNCH_TEMPLATE,
    tokens.ECS_CAPACITY_PROVIDER,
    tokens.EKS_NODE_GROUP,
    tokens.EKS_CLUSTER,
    tokens.ECS_SERVICE,
    tokens.ASG,
    tokens.IAM_ROLE,
    tokens.VPC,
    tokens.SUBNET,
    tokens.SECURITY_GROUP,
)
