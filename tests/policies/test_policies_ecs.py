"""src/gpufleet/policies/ecs.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

import base64
import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import ecs_amis as ami_rules
from gpufleet.simulate.ecs_placement import member_of
from tests.policy_helpers import findings, gpu_container, launch_template, resource, task_definition


def _ecs_gpu_ami(variant: str) -> str:
    return next(a.ami_id for a in catalog.ecs_amis().values() if a.accelerator == "gpu" and a.variant == variant and a.region == "us-east-1")


def test_gpus_fit_instance(judge):
    result = judge(
        [
            task_definition("fits", [gpu_container("a", 2), gpu_container("b", 2)], member_of("g5.12xlarge")),
            task_definition("too-many", [gpu_container("a", 3), gpu_container("b", 2)], member_of("g5.12xlarge")),
            # A family pattern is satisfied when one admitted type fits (ECS places the task there).
            task_definition("family", [gpu_container("a", 8)], "attribute:ecs.instance-type =~ p4d.*"),
            task_definition("no-fit-in-family", [gpu_container("a", 16)], "attribute:ecs.instance-type =~ g5\\..*"),
        ]
    )
    assert findings(result, "ecs-gpus-fit-instance", "fits") == []
    [message] = findings(result, "ecs-gpus-fit-instance", "too-many")
    assert "5 GPUs in all (a: 3, b: 2)" in message and "g5.12xlarge has 4" in message
    assert findings(result, "ecs-gpus-fit-instance", "family") == []
    [message] = findings(result, "ecs-gpus-fit-instance", "no-fit-in-family")
    assert "g5.48xlarge has 8" in message
    assert all(f.level == "mandatory" for f in result.findings if f.policy == "ecs-gpus-fit-instance")


def test_gpus_fit_instance_config_caps_gpus_per_task(judge):
    resources = [task_definition("eight", [gpu_container("a", 8)], member_of("p4d.24xlarge"))]
    assert findings(judge(resources), "ecs-gpus-fit-instance") == []
    [message] = findings(judge(resources, {"ecs-gpus-fit-instance": {"maxGpusPerTask": 4}}), "ecs-gpus-fit-instance")
    assert "at most 4 per task (maxGpusPerTask)" in message


def test_task_placement(judge):
    result = judge(
        [
            task_definition("pinned", [gpu_container("a", 1)], member_of("g5.xlarge")),
            task_definition("unpinned", [gpu_container("a", 1)]),
            task_definition("cpu-type", [gpu_container("a", 1)], member_of("m5.xlarge")),
            task_definition("fargate", [gpu_container("a", 1)], member_of("g5.xlarge"), requiresCompatibilities=["FARGATE"]),
            task_definition("cpu-only", [gpu_container("a", 0)]),
            task_definition("typo", [gpu_container("a", 1)], member_of("g5.xlarg")),
        ]
    )
    assert findings(result, "ecs-gpu-task-placement", "pinned") == []
    assert "no memberOf placement constraint" in findings(result, "ecs-gpu-task-placement", "unpinned")[0]
    assert "m5.xlarge has no GPU" in findings(result, "ecs-gpu-task-placement", "cpu-type")[0]
    assert "Fargate has no GPUs" in findings(result, "ecs-gpu-task-placement", "fargate")[0]
    assert findings(result, "ecs-gpu-task-placement", "cpu-only") == []
    assert "did you mean g5.xlarge" in findings(result, "ecs-gpu-task-placement", "typo")[0]
    assert result.not_applicable["ecs-gpu-task-placement"] == 1  # the CPU-only task


def test_task_placement_allowed_families(judge):
    resources = [task_definition("p4", [gpu_container("a", 1)], member_of("p4d.24xlarge"))]
    config = {"ecs-gpu-task-placement": {"allowedInstanceFamilies": ["g5", "g6"]}}
    [message] = findings(judge(resources, config), "ecs-gpu-task-placement")
    assert "allowed families are g5, g6" in message


def test_driver_capabilities_is_advisory(judge):
    result = judge(
        [
            task_definition("set", [gpu_container("a", 1)], member_of("g5.xlarge")),
            task_definition("unset", [gpu_container("a", 1, env={})], member_of("g5.xlarge")),
            task_definition("bad", [gpu_container("a", 1, env={"NVIDIA_DRIVER_CAPABILITIES": "video"})], member_of("g5.xlarge")),
        ]
    )
    assert findings(result, "ecs-gpu-driver-capabilities", "set") == []
    assert "sets no NVIDIA_DRIVER_CAPABILITIES" in findings(result, "ecs-gpu-driver-capabilities", "unset")[0]
    assert "'video' is not one of utility,compute, all" in findings(result, "ecs-gpu-driver-capabilities", "bad")[0]
    assert {f.level for f in result.findings if f.policy == "ecs-gpu-driver-capabilities"} == {"advisory"}


def test_ami_supported(judge):
    ami = _ecs_gpu_ami("al2023")
    not_ecs = base64.b64encode(b"#!/bin/bash\n/etc/eks/bootstrap.sh ml\n").decode()
    result = judge(
        [
            launch_template("g5", "g5.xlarge", imageId=ami),
            launch_template("g5g-ecs-ami", "g5g.xlarge", imageId=ami),
            launch_template("cpu-on-gpu-ami", "m5.xlarge", imageId=ami),
            launch_template("g5g-joins-ecs", "g5g.xlarge"),  # custom AMI, user data joins a cluster
            launch_template("g5g-not-ecs", "g5g.xlarge", userData=not_ecs),
            launch_template("typo", "g5.xlarg", imageId=ami),
        ]
    )
    assert findings(result, "ecs-gpu-ami-supported", "g5") == []
    [message] = findings(result, "ecs-gpu-ami-supported", "g5g-ecs-ami")
    assert ami in message and "no ECS GPU-optimized AMI" in message
    assert "m5.xlarge has no GPU" in findings(result, "ecs-gpu-ami-supported", "cpu-on-gpu-ami")[0]
    assert "no ECS GPU AMI supports it" in findings(result, "ecs-gpu-ami-supported", "g5g-joins-ecs")[0]
    assert findings(result, "ecs-gpu-ami-supported", "g5g-not-ecs") == []
    assert "did you mean g5.xlarge" in findings(result, "ecs-gpu-ami-supported", "typo")[0]


def test_ami_release_bounds_use_the_image_version():
    """The bounds apply to an AMI whose version the index knows; moto's snapshot only holds releases
    from 2024 on, so the bound itself is proven on the predicate the pack calls."""
    p5 = catalog.load().get("p5.48xlarge")
    ecs = catalog.load().ecs()
    assert "20230929 or later" in ami_rules.ecs_gpu_ami_support(p5, "al2", ecs, "2.0.20230912")
    assert ami_rules.ecs_gpu_ami_support(p5, "al2", ecs, "2.0.20231001") is None


def _group(name: str, **overrides) -> dict:
    inputs = {
        "protectFromScaleIn": True,
        "tags": [{"key": "AmazonECSManaged", "value": "true", "propagateAtLaunch": True}],
        "maxSize": 2,
        "minSize": 0,
    }
    inputs.update(overrides)
    return resource("aws:autoscaling/group:Group", name, inputs)


def _capacity_provider(name: str, group: dict, protection: str = "ENABLED") -> dict:
    inputs = {"autoScalingGroupProvider": {"autoScalingGroupArn": "04da6b54-80e4-46f7-96ec-b56ff0331ba9", "managedTerminationProtection": protection}}
    return resource("aws:ecs/capacityProvider:CapacityProvider", name, inputs, autoScalingGroupProvider=[group])


def test_capacity_provider_managed(judge):
    good, unprotected, untagged, unmanaged = _group("good"), _group("unprotected", protectFromScaleIn=False), _group("untagged", tags=[]), _group("free", protectFromScaleIn=False)
    result = judge(
        [
            good, unprotected, untagged, unmanaged,
            _capacity_provider("good", good),
            _capacity_provider("unprotected", unprotected),
            _capacity_provider("untagged", untagged),
            _capacity_provider("free", unmanaged, protection="DISABLED"),
        ]
    )
    policy = "ecs-capacity-provider-managed"
    assert findings(result, policy, "good") == [] and findings(result, policy, "free") == []
    assert "protectFromScaleIn" in findings(result, policy, "unprotected")[0]
    assert "AmazonECSManaged" in findings(result, policy, "untagged")[0]
    # A stack policy's finding names the group to fix, with its type.
    assert {f.type for f in result.findings if f.policy == policy} == {"aws:autoscaling/group:Group"}


def test_max_gpus_per_task_is_inclusive(judge):
    resources = [task_definition("four", [gpu_container("a", 4)], member_of("p4d.24xlarge"))]
    assert findings(judge(resources, {"ecs-gpus-fit-instance": {"maxGpusPerTask": 4}}), "ecs-gpus-fit-instance") == []
    assert findings(judge(resources, {"ecs-gpus-fit-instance": {"maxGpusPerTask": 3}}), "ecs-gpus-fit-instance") != []


def test_max_gpus_per_task_is_at_least_one(judge):
    """The config schema the pack publishes: 1 is the least, 0 is refused before anything is judged."""
    from gpufleet.analyzer.policy_config import PolicyConfigError

    resources = [task_definition("one", [gpu_container("a", 1)], member_of("g5.xlarge"))]
    assert findings(judge(resources, {"ecs-gpus-fit-instance": {"maxGpusPerTask": 1}}), "ecs-gpus-fit-instance") == []
    with pytest.raises(PolicyConfigError, match="ecs-gpus-fit-instance: maxGpusPerTask: 0 is less than the minimum of 1"):
        judge(resources, {"ecs-gpus-fit-instance": {"maxGpusPerTask": 0}})


def test_a_managed_instances_task_needs_no_member_of(judge):
    managed = task_definition("managed", [gpu_container("a", 1)], requiresCompatibilities=["MANAGED_INSTANCES"])
    ec2 = task_definition("ec2", [gpu_container("a", 1)], requiresCompatibilities=["EC2"])
    result = judge([managed, ec2])
    assert findings(result, "ecs-gpu-task-placement", "managed") == []
    assert "no memberOf placement constraint" in findings(result, "ecs-gpu-task-placement", "ec2")[0]


def test_a_fraction_asks_for_a_gpu_not_a_whole_one(judge):
    """Whole GPUs need a type with whole GPUs; a fraction or a share needs any GPU (its own rules
    judge the kind), and a type without GPUs is refused either way."""
    def fraction(name: str, member: str) -> dict:
        container = {"name": "a", "image": "x:1", "memory": 512, "essential": True,
                     "environment": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility,compute"}],
                     "resourceRequirements": [{"type": "GPU", "value": "0.125"}]}
        return task_definition(name, [container], member_of(member))

    result = judge([
        fraction("slice", "g6f.large"), task_definition("whole-on-slice", [gpu_container("a", 1)], member_of("g6f.large")),
        fraction("slice-on-cpu", "m5.large"), fraction("slice-unknown", "trn2u.48xlarge"),
    ])
    policy = "ecs-gpu-task-placement"
    assert findings(result, policy, "slice") == [] and findings(result, policy, "slice-unknown") == []
    assert "memberOf admits g6f.large: g6f.large has a fractional GPU" in findings(result, policy, "whole-on-slice")[0]
    assert findings(result, policy, "slice-on-cpu")[0].splitlines()[-1] == "memberOf admits m5.large: m5.large has no GPU"


def test_every_gpu_container_is_asked_for_driver_capabilities(judge):
    containers = [
        gpu_container("cpu", 0, env={}),
        gpu_container("unset", 1, env={}),
        gpu_container("bad", 1, env={"NVIDIA_DRIVER_CAPABILITIES": "video"}),
    ]
    messages = findings(judge([task_definition("t", containers, member_of("g5.12xlarge"))]), "ecs-gpu-driver-capabilities")
    assert len(messages) == 2 and "'unset' requests GPUs but sets no" in messages[0] and "container 'bad':" in messages[1]


def test_every_capacity_provider_is_judged(judge):
    off, bad = _group("off", protectFromScaleIn=False), _group("bad", protectFromScaleIn=False)
    result = judge([off, bad, _capacity_provider("off", off, protection="DISABLED"), _capacity_provider("bad", bad)])
    assert findings(result, "ecs-capacity-provider-managed", "off") == [] and findings(result, "ecs-capacity-provider-managed", "bad") != []


def test_every_member_of_constraint_narrows_the_types(judge):
    """Two memberOf constraints admit the types both admit; another kind of constraint is not one."""
    containers = [gpu_container("a", 1)]
    both = task_definition("both", containers,
                           placementConstraints=[{"type": "memberOf", "expression": "attribute:ecs.instance-type in [g5.xlarge, m5.large]"},
                                                 {"type": "memberOf", "expression": "attribute:ecs.instance-type == g5.xlarge"},
                                                 {"type": "distinctInstance", "expression": "attribute:ecs.instance-type == m5.large"}])
    assert findings(judge([both]), "ecs-gpu-task-placement", "both") == []


def test_an_unreadable_member_of_expression_is_a_finding(judge):
    broken = task_definition("broken", [gpu_container("a", 1)], "attribute:ecs.instance-type ==")
    messages = findings(judge([broken]), "ecs-gpu-task-placement", "broken")
    assert any("the memberOf expression cannot be read" in m for m in messages), messages


def test_a_constraint_of_another_kind_does_not_narrow_the_types(judge):
    task = task_definition("other-kind", [gpu_container("a", 1)],
                           placementConstraints=[{"type": "memberOf", "expression": "attribute:ecs.instance-type in [g5.xlarge, m5.large]"},
                                                 {"type": "distinctInstance", "expression": "attribute:ecs.instance-type == g5.xlarge"}])
    [message] = findings(judge([task]), "ecs-gpu-task-placement", "other-kind")
    assert "memberOf admits m5.large: m5.large has no GPU" in message


def test_a_task_with_any_whole_gpu_container_needs_a_whole_gpu_type(judge):
    """A task that mixes a whole GPU with an MPS share (refused by ecs-gpu-one-option too) still
    pins a type with whole GPUs: a G6f slice is not one."""
    whole = gpu_container("whole", 1)
    share = {**gpu_container("share", 0), "resourceRequirements": [{"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": 1000}}}]}
    result = judge([task_definition("mixed", [whole, share], member_of("g6f.large"))])
    assert any("memberOf admits g6f.large" in m for m in findings(result, "ecs-gpu-task-placement", "mixed"))
