"""The offline preview of the shipped stack: golden plan, and the properties that make it correct."""

from __future__ import annotations

import base64
import json

import pytest

from gpufleet.engine.runtime import UNKNOWN
from tests.conftest import check_golden, preview_plan, run_cli, shipped_plan



@pytest.fixture(scope="module")
def plan() -> dict:
    return shipped_plan("ecs-gpu")


def by_type(plan: dict, type_token: str) -> dict[str, dict]:
    return {r["name"]: r for r in plan["resources"] if r["type"] == type_token}


def test_plan_matches_golden(plan):
    check_golden(plan, "ecs-gpu")


def test_preview_is_deterministic(plan):
    assert preview_plan("ecs-gpu") == plan


def test_every_resource_is_parented_under_the_stack(plan):
    urns = {r["urn"] for r in plan["resources"]}
    stack = [r for r in plan["resources"] if r["type"] == "pulumi:pulumi:Stack"]
    assert len(stack) == 1 and stack[0]["parent"] is None
    for r in plan["resources"]:
        if r is not stack[0]:
            assert r["parent"] in urns, r["urn"]
    components = {r["type"] for r in plan["resources"] if not r["custom"]}
    assert {"gpufleet:ecs:GpuCluster", "gpufleet:ecs:GpuCapacityProvider", "gpufleet:ecs:InstanceRole", "gpufleet:network:Vpc"} <= components


def test_task_definitions_request_gpus_and_pin_the_instance_type(plan):
    tds = by_type(plan, "aws:ecs/taskDefinition:TaskDefinition")
    embed = tds["ml-gpu-embed-rerank"]["inputs"]
    assert isinstance(embed["containerDefinitions"], str)  # JSON-string property left as a string
    containers = json.loads(embed["containerDefinitions"])
    assert [c["resourceRequirements"] for c in containers] == [[{"type": "GPU", "value": "2"}]] * 2
    env = {c["name"]: {e["name"]: e["value"] for e in c["environment"]} for c in containers}
    assert env["embed"]["NVIDIA_DRIVER_CAPABILITIES"] == "utility,compute"
    assert env["rerank"]["NVIDIA_DRIVER_CAPABILITIES"] == "all"
    assert embed["placementConstraints"] == [{"type": "memberOf", "expression": "attribute:ecs.instance-type == g5.12xlarge"}]
    assert embed["requiresCompatibilities"] == ["EC2"]
    train = json.loads(tds["ml-gpu-train"]["inputs"]["containerDefinitions"])[0]
    assert train["resourceRequirements"] == [{"type": "GPU", "value": "8"}]
    assert tds["ml-gpu-train"]["inputs"]["placementConstraints"][0]["expression"].endswith("== p4d.24xlarge")


def test_launch_templates_use_the_gpu_ami_from_ssm_and_secure_defaults(plan):
    lts = by_type(plan, "aws:ec2/launchTemplate:LaunchTemplate")
    inference, training = lts["ml-gpu-inference"]["inputs"], lts["ml-gpu-training"]["inputs"]
    # moto's us-east-1 snapshot of /aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/recommended/image_id
    from gpufleet.catalog.generate.sources import MotoSnapshot

    moto = MotoSnapshot()
    al2023_ami = moto.ssm_parameter("us-east-1", "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/recommended/image_id")
    assert inference["imageId"] == training["imageId"] == al2023_ami
    for lt in (inference, training):
        assert lt["metadataOptions"] == {"httpEndpoint": "enabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"}
        ebs = lt["blockDeviceMappings"][0]["ebs"]
        assert (ebs["encrypted"], ebs["volumeType"]) == ("true", "gp3")
        nic = lt["networkInterfaces"][0]
        assert nic["associatePublicIpAddress"] == "false" and nic["securityGroups"] == [UNKNOWN]
        assert "securityGroupNames" not in lt and "vpcSecurityGroupIds" not in lt
    for lt in (inference, training):
        text = base64.b64decode(lt["userData"]).decode()
        assert "ECS_CLUSTER=ml-gpu\n" in text and "ECS_ENABLE_GPU_SUPPORT=true\n" in text
        assert "/etc/ecs/ecs.config" in text and "ip_resolve" not in text


def test_an_al2_provider_gets_its_ami_its_yum_fix_and_the_end_of_support_advisory(stack_variant):
    """Amazon Linux 2 is past its end of support (2026-06-30) but ECS still takes it: named on purpose,
    the provider gets the AL2 GPU AMI, the yum IPv4 fix its IPv6 needs, and the pack's advisory."""
    from gpufleet.catalog.generate.sources import MotoSnapshot

    path = stack_variant(lambda c: c["gpufleet:ecs"]["capacityProviders"][1].__setitem__("amiVariant", "al2"))
    plan = preview_plan("--config-file", str(path))
    training = by_type(plan, "aws:ec2/launchTemplate:LaunchTemplate")["ml-gpu-training"]["inputs"]
    assert training["imageId"] == MotoSnapshot().ssm_parameter("us-east-1", "/aws/service/ecs/optimized-ami/amazon-linux-2/gpu/recommended/image_id")
    assert 'echo "ip_resolve=4" >> /etc/yum.conf' in base64.b64decode(training["userData"]).decode()
    [advisory] = [f for f in plan["policy"]["violations"] if f["policy"] == "lifecycle-end-of-support"]
    assert advisory["level"] == "advisory" and advisory["urn"].endswith("::ml-gpu-training")
    assert "variant al2 reached its end of support on 2026-06-30 (judged on 2026-11-26): it ends with Amazon Linux 2" in advisory["message"]


def test_auto_scaling_groups_are_ecs_managed_and_scale_in_protected(plan):
    asgs = by_type(plan, "aws:autoscaling/group:Group")
    for asg in asgs.values():
        i = asg["inputs"]
        assert i["protectFromScaleIn"] is True
        assert {"key": "AmazonECSManaged", "value": "true", "propagateAtLaunch": True} in i["tags"]
    spot = asgs["ml-gpu-training"]["inputs"]
    assert spot["mixedInstancesPolicy"]["instancesDistribution"]["onDemandPercentageAboveBaseCapacity"] == 0
    assert "launchTemplate" not in spot
    assert asgs["ml-gpu-inference"]["inputs"]["launchTemplate"]["version"] == "$Latest"


def test_capacity_providers_manage_scaling_and_termination(plan):
    cps = by_type(plan, "aws:ecs/capacityProvider:CapacityProvider")
    assert {cp["inputs"]["name"] for cp in cps.values()} == {"ml-gpu-inference", "ml-gpu-training"}
    for cp in cps.values():
        asg = cp["inputs"]["autoScalingGroupProvider"]
        assert asg["managedTerminationProtection"] == "ENABLED"
        assert asg["managedScaling"] == {"status": "ENABLED", "targetCapacity": 100}
    assoc = by_type(plan, "aws:ecs/clusterCapacityProviders:ClusterCapacityProviders")["ml-gpu"]["inputs"]
    assert sorted(assoc["capacityProviders"]) == ["ml-gpu-inference", "ml-gpu-training"]


def test_service_uses_a_capacity_provider_strategy_and_no_launch_type(plan):
    services = by_type(plan, "aws:ecs/service:Service")
    assert list(services) == ["ml-gpu-llm-serve"]
    s = services["ml-gpu-llm-serve"]["inputs"]
    assert "launchType" not in s
    assert s["capacityProviderStrategies"] == [{"base": 0, "capacityProvider": "ml-gpu-inference", "weight": 1}]
    assert s["desiredCount"] == 4


def test_instance_role_has_the_ecs_managed_policy(plan):
    attachments = by_type(plan, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    assert [a["inputs"]["policyArn"] for a in attachments.values()] == [
        "arn:aws:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role"
    ]


def test_vpc_zones_offer_both_instance_types(plan):
    from gpufleet.catalog import catalog

    cat = catalog.load()
    subnets = by_type(plan, "aws:ec2/subnet:Subnet")
    zones = {s["inputs"]["availabilityZone"] for s in subnets.values()}
    assert len(zones) == 2
    for name in ("g5.12xlarge", "p4d.24xlarge"):
        assert zones <= set(cat.get(name).offerings["us-east-1"])
    assert all(s["inputs"]["mapPublicIpOnLaunch"] is False for s in subnets.values())


def test_summary_counts_gpus_per_provider_and_in_total(plan):
    s = plan["summary"]
    assert s["resourceCount"] == len(plan["resources"])
    groups = {g["group"]: g for g in s["groups"]}
    assert groups["inference"]["perInstance"] == 4 and groups["inference"]["model"] == "A10G"
    assert groups["inference"]["accelerators"] == {"min": 4, "desired": 4, "max": 16}
    assert groups["training"]["accelerators"] == {"min": 0, "desired": 0, "max": 16}
    assert {t["model"]: t["max"] for t in s["totals"]} == {"NVIDIA A100": 16, "NVIDIA A10G": 16}
    # llm-serve: 1 of 4 GPUs, 8 of 48 vCPUs, 32 GiB of 192: the GPUs bind at 4 per g5.12xlarge.
    assert {w["name"]: w.get("tasksPerInstance") for w in s["workloads"]} == {"llm-serve": 4, "embed-rerank": 1, "train": 1}


def test_the_summary_is_carried_once(plan):
    """The program exports the summary as the stack output `accelerators` (for `pulumi stack output`);
    the plan carries it under `summary` only, beside the outputs that name resources."""
    assert "accelerators" not in plan["outputs"]
    assert set(plan["outputs"]) == {"ecsClusterArn"}
    assert {"groups", "totals", "workloads"} <= set(plan["summary"])


def test_human_preview_shows_tree_and_summary():
    code, out, err = run_cli("preview", "ecs-gpu")
    assert code == 0, err
    assert "gpufleet:ecs:GpuCluster" in out and "aws:ecs/taskDefinition:TaskDefinition" in out
    assert "Accelerators" in out and "p4d.24xlarge" in out and "A100" in out


def test_catalog_command(capsys):
    code, out, err = run_cli("catalog", "p4d.24xlarge", "--json")
    assert code == 0
    [record] = json.loads(out)
    assert record["gpu"]["count"] == 8 and record["gpu"]["model"] == "A100"
    assert record["ecsAmi"]["accelerator"] == "gpu" and record["ecsAmi"]["variants"]["al2023"] is None
    assert record["notes"] == ["works only with CUDA 11 or later"]
    code, out, err = run_cli("catalog", "p4d.24xlarg")
    assert code == 2 and "did you mean p4d.24xlarge" in err
