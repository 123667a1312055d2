"""One rule, two doors: the stack spec (exit 2 before any resource exists) and the policy pack (over
gRPC, on the task definition the components render) give the same verdict for the same request."""

from __future__ import annotations

import itertools
import json

import pytest

from gpufleet.components.simulate.ecs_placement import member_of
from gpufleet.components.catalog.generate.sources import MotoSnapshot
from gpufleet.components.ecs.args import WorkloadArgs
from gpufleet.components.ecs.container_definitions import container_definitions
from gpufleet.spec import SpecError, load_spec
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


# The same two doors for ACK GPU shares: the spec's workload against the pool it names, and the pack
# over the Job and NodePool the components render. GiB per GPU as the sharing plugin advertises it
# (NVML MiB // 1024; MiB from ACK's Karpenter provider, typed here as the oracle).
ACK_TYPES = {"ecs.gn6i-c4g1.xlarge": 15109 // 1024, "ecs.gn6v-c8g1.2xlarge": 16160 // 1024, "ecs.gn6e-c12g1.3xlarge": 32510 // 1024}
ACK_CASES = list(itertools.product((1, 14, 15, 16, 31, 32), (None, 0, 5, 33, 100, 105), ACK_TYPES))
ACK_RULES = ("ack-gpu-mem-fits", "ack-gpu-core-percentage")


def _ack_fleet(gib: int, pct: int | None, instance_type: str) -> dict:
    workload = {"name": "job", "kind": "Job", "nodePool": "gpu", "image": "x:1", "gpuMemGib": gib}
    if pct is not None:
        workload["gpuCorePercentage"] = pct
    pool = {"name": "gpu", "sharingMode": "core_mem", "instanceTypes": [instance_type], "vswitchIds": ["vsw-1"], "desiredSize": 1}
    return {"region": "cn-hangzhou", "clusterId": "c1", "nodePools": [pool], "workloads": [workload], "kubernetes": {"context": "x"}}


def _ack_spec_door(gib, pct, instance_type) -> set[str]:
    try:
        load_spec({"ack": _ack_fleet(gib, pct, instance_type)})
    except SpecError as err:
        return {issue.rule for issue in err.issues} & set(ACK_RULES)
    return set()


@pytest.fixture(scope="module")
def ack_pack_verdicts(judge) -> dict[tuple, set[str]]:
    from gpufleet.components.ack.args import AckFleetArgs
    from gpufleet.components.ack.node_pool import pool_labels, workload_selector
    from gpufleet.components.ack.shared_gpu_workload import pod_template

    resources = []
    for gib, pct, instance_type in ACK_CASES:
        name = f"{gib}-{pct}-{instance_type}"
        fleet = AckFleetArgs.model_validate(_ack_fleet(gib, pct, instance_type))
        pool = fleet.node_pools[0].model_copy(update={"name": name.replace(".", "-")})
        labels = [{"key": k, "value": v} for k, v in pool_labels(pool).items()]
        resources.append(resource("alicloud:cs/nodePool:NodePool", name, {"instanceTypes": [instance_type], "labels": labels}))
        template = pod_template(fleet.workloads[0], workload_selector(pool), [], "Never")
        resources.append(resource("kubernetes:batch/v1:Job", name, {"spec": {"template": template}}))
    result = judge(resources)
    verdicts: dict[tuple, set[str]] = {case: set() for case in ACK_CASES}
    for f in result.findings:
        if f.policy in ACK_RULES and ":Job::" in f.urn:
            gib, pct, instance_type = f.urn.rsplit("::", 1)[-1].split("-", 2)
            verdicts[(int(gib), None if pct == "None" else int(pct), instance_type)].add(f.policy)
    return verdicts


@pytest.mark.parametrize("gib,pct,instance_type", ACK_CASES)
def test_spec_and_pack_agree_on_gpu_shares(gib, pct, instance_type, ack_pack_verdicts):
    expected = set()
    if gib > ACK_TYPES[instance_type]:
        expected.add("ack-gpu-mem-fits")
    if pct is not None and (pct < 5 or pct > 100 or pct % 5):
        expected.add("ack-gpu-core-percentage")
    assert _ack_spec_door(gib, pct, instance_type) == expected
    assert ack_pack_verdicts[(gib, pct, instance_type)] == expected
