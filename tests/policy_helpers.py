"""Resources in the plan's shape, and a pack session that judges them over the real gRPC path."""

from __future__ import annotations

import base64
import json

import pytest

from gpufleet.analyzer.client import PolicyPack

from gpufleet.analyzer.pack_dir import DEFAULT_PACK

from gpufleet.analyzer.results import PolicyResult
from gpufleet.analyzer.policy_config import parse
from gpufleet.cli import plan_file

STACK = "policy-tests"


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::gpufleet::{type_}::{name}"


def resource(type_: str, name: str, inputs: dict, **property_dependencies: list[dict]) -> dict:
    """A plan resource; keyword arguments name inputs that depend on other fixture resources."""
    deps = {key: [d["urn"] for d in depends_on] for key, depends_on in property_dependencies.items()}
    return {
        "urn": urn(type_, name),
        "type": type_,
        "name": name,
        "parent": None,
        "custom": True,
        "inputs": inputs,
        "dependencies": sorted({u for urns in deps.values() for u in urns}),
        "propertyDependencies": deps,
    }


def task_definition(name: str, containers: list[dict], expression: str | None = None, **extra) -> dict:
    inputs = {"family": name, "containerDefinitions": json.dumps(containers), **extra}
    if expression is not None:
        inputs["placementConstraints"] = [{"type": "memberOf", "expression": expression}]
    return resource("aws:ecs/taskDefinition:TaskDefinition", name, inputs)


def gpu_container(name: str, gpus: int, env: dict | None = None) -> dict:
    environment = [
        {"name": k, "value": v} for k, v in (env if env is not None else {"NVIDIA_DRIVER_CAPABILITIES": "utility,compute"}).items()
    ]
    container = {"name": name, "image": "example:1", "memory": 1024, "essential": True, "environment": environment}
    if gpus:
        container["resourceRequirements"] = [{"type": "GPU", "value": str(gpus)}]
    return container


def launch_template(name: str, instance_type: str, **overrides) -> dict:
    """A launch template as a careful author writes it (IMDSv2, encrypted root, no public IP)."""
    inputs = {
        "instanceType": instance_type,
        "imageId": "ami-0123456789abcdef0",  # a custom AMI: not in the ECS GPU AMI index
        "userData": base64.b64encode(b"#!/bin/bash\necho ECS_CLUSTER=ml >> /etc/ecs/ecs.config\n").decode(),
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "volumeSize": 100}}],
        "networkInterfaces": [{"deviceIndex": 0, "associatePublicIpAddress": "false"}],
    }
    inputs.update(overrides)
    return resource("aws:ec2/launchTemplate:LaunchTemplate", name, inputs)


class Judge:
    def __init__(self, pack: PolicyPack):
        self.pack = pack

    def __call__(self, resources: list[dict], config: dict | None = None) -> PolicyResult:
        return plan_file.judged(self.pack, parse(config or {}), resources)


def findings(result: PolicyResult, policy: str, name: str | None = None) -> list[str]:
    return [f.message for f in result.findings if f.policy == policy and (name is None or f.urn.endswith(f"::{name}"))]


def one_finding(result: PolicyResult, policy: str, name: str | None = None) -> str:
    """The message of a policy's one finding (on the named resource, if named): fails unless there is exactly one."""
    [message] = findings(result, policy, name)
    return message


@pytest.fixture(scope="session")
def judge():
    """The shipped pack, started once for the test session."""
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack=STACK) as pack:
        yield Judge(pack)
