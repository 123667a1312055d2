"""One rule, two doors: the stack spec (exit 2 before any resource exists) and the policy pack (over
gRPC, on the task definition the components render) give the same verdict for the same request."""

from __future__ import annotations

import itertools
import json

import pytest

from gpufleet.simulate.ecs_placement import member_of
from gpufleet.catalog import catalog
from gpufleet.catalog.generate.sources import MotoSnapshot
from gpufleet.ecs.args import WorkloadArgs
from gpufleet.ecs.container_definitions import container_definitions
from gpufleet.stack.spec import SpecError, load_spec
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


def _spec_door(fleet: dict, rule: str) -> bool:
    try:
        load_spec({"region": "us-east-1", "ecs": fleet})
    except SpecError as err:
        return any(issue.rule == rule for issue in err.issues)
    return False


def _pack_door(judge, cases, fleet_of, rule: str, neuron: bool = False) -> dict[tuple[int, str], bool]:
    """Each case's verdict from the pack, on the task definition the components render for its fleet."""
    resources = []
    for n, instance_type in cases:
        workload = WorkloadArgs.model_validate(fleet_of(n, instance_type)["workloads"][0])
        inputs = {
            "family": "job",
            "containerDefinitions": json.dumps(container_definitions(workload, catalog.load(), [n]) if neuron else container_definitions(workload, catalog.load())),
            "placementConstraints": [{"type": "memberOf", "expression": member_of(instance_type)}],
        }
        resources.append(resource("aws:ecs/taskDefinition:TaskDefinition", f"job-{n}-{instance_type}", inputs))
    flagged = {f.urn.rsplit("::", 1)[-1] for f in judge(resources).findings if f.policy == rule}
    return {(n, t): f"job-{n}-{t}" in flagged for n, t in cases}


def test_the_spec_door_is_exit_2_naming_the_field(stack_variant):
    path = stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][2]["containers"][0].__setitem__("gpus", 9))
    code, out, err = run_cli("preview", "--config-file", str(path))
    assert code == 2 and out == ""
    assert "gpufleet:ecs.workloads[2].containers[0].gpus = 9: task total: 9 GPUs requested but p4d.24xlarge has 8" in err
    assert f"[rule: {RULE}]" in err


# The same two doors for Neuron devices: `neuronDevices` N maps /dev/neuron0..N-1; the spec rejects
# N above the type's chips and the pack flags the /dev/neuronK that do not exist. Chips per type are
# read from moto's raw NeuronInfo (g5.xlarge has none).
NEURON_RULE = "ecs-neuron-devices-exist"
NEURON_TYPES = {
    name: sum(d["Count"] for d in (_EC2[name].get("NeuronInfo") or {}).get("NeuronDevices", []))
    for name in ("inf2.xlarge", "inf2.24xlarge", "inf2.48xlarge", "trn1.32xlarge", "g5.xlarge")
}


def _neuron_fleet(devices: int, instance_type: str) -> dict:
    fleet = _fleet(0, instance_type)
    fleet["workloads"][0]["containers"][0]["neuronDevices"] = devices
    return fleet


# door -> (its rule, accelerators per type, the requests tried, the fleet of a request on a type)
DOORS = {
    "gpus": (RULE, TYPES, range(10), _fleet),
    "neuron": (NEURON_RULE, NEURON_TYPES, range(1, 18), _neuron_fleet),
}
ALL_CASES = [(door, n, t) for door, (_, types, asked, _) in DOORS.items() for n, t in itertools.product(asked, types)]


@pytest.fixture(scope="module")
def pack_verdicts(judge) -> dict[str, dict[tuple[int, str], bool]]:
    return {
        door: _pack_door(judge, list(itertools.product(asked, types)), fleet_of, rule, neuron=door == "neuron")
        for door, (rule, types, asked, fleet_of) in DOORS.items()
    }


@pytest.mark.parametrize("door", DOORS)
def test_the_table_crosses_every_boundary(door):
    """The requests must cross each type's count, the type without accelerators included, or the table proves little."""
    _, types, asked, _ = DOORS[door]
    assert min(types.values()) == 0 and max(types.values()) < max(asked)


@pytest.mark.parametrize("door,n,instance_type", ALL_CASES)
def test_spec_and_pack_agree(door, n, instance_type, pack_verdicts):
    rule, types, _, fleet_of = DOORS[door]
    expected = n > types[instance_type]
    assert _spec_door(fleet_of(n, instance_type), rule) == expected
    assert pack_verdicts[door][(n, instance_type)] == expected


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
    from gpufleet.ack.args import AckFleetArgs
    from gpufleet.ack.node_pool import pool_labels, workload_selector
    from gpufleet.ack.shared_gpu_workload import pod_template

    resources = []
    for gib, pct, instance_type in ACK_CASES:
        name = f"{gib}-{pct}-{instance_type}"
        fleet = AckFleetArgs.model_validate(_ack_fleet(gib, pct, instance_type))
        pool = fleet.node_pools[0].model_copy(update={"name": name.replace(".", "-")})
        labels = [{"key": k, "value": v} for k, v in pool_labels(pool, catalog.load()).items()]
        resources.append(resource("alicloud:cs/nodePool:NodePool", name, {"instanceTypes": [instance_type], "labels": labels}))
        template = pod_template(fleet.workloads[0], workload_selector(pool), [], "Never", catalog.load())
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
