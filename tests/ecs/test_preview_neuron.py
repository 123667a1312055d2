"""The offline preview of the shipped Neuron stack: golden plan, device mappings, per-chip services,
the Neuron AMI from SSM, and the chip and NeuronCore counts (expectations read from moto's raw EC2
records and SSM snapshot, not typed here)."""

from __future__ import annotations

import base64
import json

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import ecs_amis as ami_rules
from gpufleet.catalog.generate.sources import MotoSnapshot
from gpufleet.ecs.neuron import device_counts
from gpufleet.stack.spec import load_spec
from tests.conftest import check_golden, preview_plan, run_cli, shipped_plan



@pytest.fixture(scope="module")
def plan() -> dict:
    return shipped_plan("ecs-neuron")


def by_type(plan: dict, type_token: str) -> dict[str, dict]:
    return {r["name"]: r for r in plan["resources"] if r["type"] == type_token}


def chips(instance_type: str) -> tuple[int, int]:
    """(chips, NeuronCores per chip) from moto's raw DescribeInstanceTypes record."""
    [device] = MotoSnapshot().instance_types()[instance_type]["NeuronInfo"]["NeuronDevices"]
    return device["Count"], device["CoreInfo"]["Count"]


def test_plan_matches_golden(plan):
    check_golden(plan, "ecs-neuron")


def test_launch_templates_use_the_neuron_ami_from_ssm_and_join_the_cluster(plan):
    templates = by_type(plan, "aws:ec2/launchTemplate:LaunchTemplate")
    moto = MotoSnapshot()
    assert templates["ml-neuron-inference"]["inputs"]["imageId"] == moto.ssm_parameter(
        "us-west-2", "/aws/service/ecs/optimized-ami/amazon-linux-2023/neuron/recommended/image_id"
    )
    assert templates["ml-neuron-training"]["inputs"]["imageId"] == templates["ml-neuron-inference"]["inputs"]["imageId"]
    for template in templates.values():
        script = base64.b64decode(template["inputs"]["userData"]).decode()
        assert "ECS_CLUSTER=ml-neuron\nECS_ENABLE_INF_SUPPORT=true\n" in script
        assert "GPU" not in script and "yum" not in script


def test_an_al2_neuron_provider_gets_the_inf_ami(stack_variant):
    """AL2's Neuron AMI sits under `inf`, not `neuron`; named on purpose past its end of support."""
    path = stack_variant(lambda c: c["gpufleet:ecs"]["capacityProviders"][1].__setitem__("amiVariant", "al2"), stack="ecs-neuron")
    template = by_type(preview_plan("--config-file", str(path)), "aws:ec2/launchTemplate:LaunchTemplate")["ml-neuron-training"]
    assert template["inputs"]["imageId"] == MotoSnapshot().ssm_parameter(
        "us-west-2", "/aws/service/ecs/optimized-ami/amazon-linux-2/inf/recommended/image_id"
    )


def _containers(td: dict) -> list[dict]:
    return json.loads(td["inputs"]["containerDefinitions"])


def _paths(container: dict) -> list[str]:
    return [d["hostPath"] for d in container["linuxParameters"]["devices"]]


def test_whole_instance_tasks_map_every_chip_with_ipc_lock_and_no_resource_requirement(plan):
    tds = by_type(plan, "aws:ecs/taskDefinition:TaskDefinition")
    for name, instance_type in (("ml-neuron-train", "trn1.32xlarge"), ("ml-neuron-embed-batch", "inf2.24xlarge")):
        [container] = _containers(tds[name])
        count, _ = chips(instance_type)
        assert _paths(container) == [f"/dev/neuron{k}" for k in range(count)]
        for device in container["linuxParameters"]["devices"]:
            assert device["containerPath"] == device["hostPath"] and device["permissions"] == ["read", "write"]
        assert container["linuxParameters"]["capabilities"] == {"add": ["IPC_LOCK"]}
        assert "resourceRequirements" not in container
        assert tds[name]["inputs"]["placementConstraints"] == [
            {"type": "memberOf", "expression": f"attribute:ecs.instance-type == {instance_type}"}
        ]


def test_a_task_per_chip_is_a_definition_and_a_service_per_chip_index(plan):
    count, _ = chips("inf2.24xlarge")
    tds = by_type(plan, "aws:ecs/taskDefinition:TaskDefinition")
    services = by_type(plan, "aws:ecs/service:Service")
    for k in range(count):
        [container] = _containers(tds[f"ml-neuron-llm-serve-chip{k}"])
        assert _paths(container) == [f"/dev/neuron{k}"]
        service = services[f"ml-neuron-llm-serve-chip{k}"]["inputs"]
        assert service["desiredCount"] == 2  # the provider's desired instances: one task per instance
        assert service["placementConstraints"] == [{"type": "distinctInstance"}]
    assert f"ml-neuron-llm-serve-chip{count}" not in tds and "ml-neuron-llm-serve" not in tds


def test_summary_counts_chips_and_neuron_cores(plan):
    summary = plan["summary"]
    groups = {g["group"]: g for g in summary["groups"]}
    for group, instance_type, (low, desired, high) in (("inference", "inf2.24xlarge", (1, 2, 4)), ("training", "trn1.32xlarge", (0, 0, 2))):
        count, cores = chips(instance_type)
        g = groups[group]
        assert (g["kind"], g["perInstance"], g["neuronCoresPerChip"], g["neuronCoresPerInstance"]) == ("neuron", count, cores, count * cores)
        assert g["accelerators"] == {"min": low * count, "desired": desired * count, "max": high * count}
        assert g["neuronCores"] == {"min": low * count * cores, "desired": desired * count * cores, "max": high * count * cores}
    workloads = {w["name"]: w for w in summary["workloads"]}
    count, cores = chips("inf2.24xlarge")
    serve = workloads["llm-serve"]
    assert serve["serviceDesiredCount"] == count * 2 and serve["perChip"]["services"] == count
    assert serve["perChip"]["note"] == f"one task per chip: {count} chips x 2 instances = {count * 2} tasks"
    assert (serve["neuronDevicesPerTask"], serve["neuronCoresPerTask"], serve["tasksPerInstance"]) == (1, cores, count)
    assert workloads["train"]["neuronCoresPerTask"] == chips("trn1.32xlarge")[0] * chips("trn1.32xlarge")[1]


def test_human_preview_says_how_per_chip_services_are_sized(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line, as on a wide terminal
    code, out, err = run_cli("preview", "ecs-neuron")
    assert code == 0, err
    count, cores = chips("inf2.24xlarge")
    assert f"{count} x AWS Inferentia2" in out and f"{cores} NeuronCores" in out
    assert f"one task per chip: {count} chips x 2 instances = {count * 2} tasks" in out


def test_catalog_command_gives_the_neuron_ami_verdict_and_regions():
    code, out, err = run_cli("catalog", "trn1.32xlarge", "--json")
    assert code == 0, err
    [record] = json.loads(out)
    ami = record["ecsAmi"]
    assert ami["accelerator"] == "neuron" and ami["variants"] == {"al2023": None, "al2": None}
    # Offered in ap-southeast-4 (EC2 data) but the Neuron AMI is not supported there (001).
    assert "ap-southeast-4" in record["regions"] and "ap-southeast-4" not in ami["regions"]
    assert set(ami["regions"]) < set(record["regions"])


NEURON_TYPES = sorted(name for name, record in MotoSnapshot().instance_types().items() if "NeuronInfo" in record)


def test_the_neuron_families_of_the_issue_are_all_there():
    assert {name.split(".")[0] for name in NEURON_TYPES} >= {"inf1", "inf2", "trn1", "trn2"}


@pytest.mark.parametrize("instance_type", NEURON_TYPES)
def test_every_neuron_size_is_accepted_with_all_its_chips(instance_type):
    it = catalog.load().get(instance_type)
    ecs = catalog.load().ecs()
    region = next(r for r in sorted(it.offerings) if ami_rules.neuron_ami_region(r, ecs) is None)
    spec = load_spec(
        {
            "region": region,
            "ecs": {
                "clusterName": "neuron",
                "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0"]},
                "capacityProviders": [{"name": "n", "instanceType": instance_type, "minSize": 0, "maxSize": 1, "desiredSize": 0}],
                "workloads": [{"name": "job", "capacityProvider": "n", "containers": [{"name": "m", "image": "x:1", "memory": 512}]}],
            },
        }
    )
    [workload] = spec.ecs.workloads
    assert device_counts(workload, it) == [MotoSnapshot().instance_types()[instance_type]["NeuronInfo"]["NeuronDevices"][0]["Count"]]
