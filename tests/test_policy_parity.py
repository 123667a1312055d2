"""One rule, two doors: the stack spec (exit 2 before any resource exists) and the policy pack (over
gRPC, on the task definition the components render) give the same verdict for the same request."""

from __future__ import annotations

import itertools
import json

import pytest

from components.catalog.ecs_placement import member_of
from components.catalog.sources import MotoSnapshot
from components.ecs.args import WorkloadArgs
from components.ecs.container_definitions import container_definitions
from infra.spec import SpecError, load_spec
from tests.conftest import run_cli
from tests.policy_helpers import resource

RULE = "ecs-gpus-fit-instance"
# Whole GPUs per type, read from moto's raw DescribeInstanceTypes records (not through the catalog
# whose predicate is under test); m5.xlarge has no GpuInfo.
_EC2 = MotoSnapshot().instance_types()
TYPES = {
    name: sum(g["Count"] for g in (_EC2[name].get("GpuInfo") or {}).get("Gpus", []))
    for name in ("g5.xlarge", "g5.12xlarge", "p4d.24xlarge", "m5.xlarge")
}
CASES = list(itertools.product(range(10), TYPES))


def _fleet(gpus: int, instance_type: str) -> dict:
    return {
        "clusterName": "parity",
        "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0"]},
        "capacityProviders": [{"name": "gpu", "instanceType": instance_type, "minSize": 0, "maxSize": 1, "desiredSize": 0}],
        "workloads": [
            {
                "name": "job",
                "capacityProvider": "gpu",
                "containers": [{"name": "main", "image": "example:1", "memory": 512, "gpus": gpus}],
            }
        ],
    }


def _spec_door(gpus: int, instance_type: str) -> bool:
    try:
        load_spec({"region": "us-east-1", "ecs": _fleet(gpus, instance_type)})
    except SpecError as err:
        return any(issue.rule == RULE for issue in err.issues)
    return False


@pytest.fixture(scope="module")
def pack_verdicts(judge) -> dict[tuple[int, str], bool]:
    resources = []
    for gpus, instance_type in CASES:
        workload = WorkloadArgs.model_validate(_fleet(gpus, instance_type)["workloads"][0])
        inputs = {
            "family": "job",
            "containerDefinitions": json.dumps(container_definitions(workload)),
            "placementConstraints": [{"type": "memberOf", "expression": member_of(instance_type)}],
        }
        resources.append(resource("aws:ecs/taskDefinition:TaskDefinition", f"job-{gpus}-{instance_type}", inputs))
    result = judge(resources)
    flagged = {f.urn.rsplit("::", 1)[-1] for f in result.findings if f.policy == RULE}
    return {(gpus, t): f"job-{gpus}-{t}" in flagged for gpus, t in CASES}


def test_the_table_crosses_every_boundary():
    """0..9 GPUs must cross each type's count, the GPU-less type included, or the table proves little."""
    assert min(TYPES.values()) == 0 and max(TYPES.values()) < 9


@pytest.mark.parametrize("gpus,instance_type", CASES)
def test_spec_and_pack_agree(gpus, instance_type, pack_verdicts):
    expected = gpus > TYPES[instance_type]
    assert _spec_door(gpus, instance_type) == expected
    assert pack_verdicts[(gpus, instance_type)] == expected


def test_the_spec_door_is_exit_2_naming_the_field(stack_variant):
    path = stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][2]["containers"][0].__setitem__("gpus", 9))
    code, out, err = run_cli("preview", "--config-file", str(path))
    assert code == 2 and out == ""
    assert f"gpufleet:ecs.workloads[2].containers[0].gpus = 9: task total: 9 GPUs requested but p4d.24xlarge has 8" in err
    assert f"[rule: {RULE}]" in err


# The same two doors for Neuron devices: `neuronDevices` N maps /dev/neuron0..N-1; the spec rejects
# N above the type's chips and the pack flags the /dev/neuronK that do not exist. Chips per type are
# read from moto's raw NeuronInfo (g5.xlarge has none).
NEURON_RULE = "ecs-neuron-devices-exist"
NEURON_TYPES = {
    name: sum(d["Count"] for d in (_EC2[name].get("NeuronInfo") or {}).get("NeuronDevices", []))
    for name in ("inf2.xlarge", "inf2.24xlarge", "inf2.48xlarge", "trn1.32xlarge", "g5.xlarge")
}
NEURON_CASES = list(itertools.product(range(1, 18), NEURON_TYPES))


def _neuron_fleet(devices: int, instance_type: str) -> dict:
    fleet = _fleet(0, instance_type)
    fleet["workloads"][0]["containers"][0]["neuronDevices"] = devices
    return fleet


def _neuron_spec_door(devices: int, instance_type: str) -> bool:
    try:
        load_spec({"region": "us-east-1", "ecs": _neuron_fleet(devices, instance_type)})
    except SpecError as err:
        return any(issue.rule == NEURON_RULE for issue in err.issues)
    return False


@pytest.fixture(scope="module")
def neuron_pack_verdicts(judge) -> dict[tuple[int, str], bool]:
    resources = []
    for devices, instance_type in NEURON_CASES:
        workload = WorkloadArgs.model_validate(_neuron_fleet(devices, instance_type)["workloads"][0])
        inputs = {
            "family": "job",
            "containerDefinitions": json.dumps(container_definitions(workload, [devices])),
            "placementConstraints": [{"type": "memberOf", "expression": member_of(instance_type)}],
        }
        resources.append(resource("aws:ecs/taskDefinition:TaskDefinition", f"job-{devices}-{instance_type}", inputs))
    result = judge(resources)
    flagged = {f.urn.rsplit("::", 1)[-1] for f in result.findings if f.policy == NEURON_RULE}
    return {(n, t): f"job-{n}-{t}" in flagged for n, t in NEURON_CASES}


def test_the_neuron_table_crosses_every_boundary():
    assert min(NEURON_TYPES.values()) == 0 and max(NEURON_TYPES.values()) < 17


@pytest.mark.parametrize("devices,instance_type", NEURON_CASES)
def test_spec_and_pack_agree_on_neuron_devices(devices, instance_type, neuron_pack_verdicts):
    expected = devices > NEURON_TYPES[instance_type]
    assert _neuron_spec_door(devices, instance_type) == expected
    assert neuron_pack_verdicts[(devices, instance_type)] == expected
