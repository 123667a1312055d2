"""One placement rule, two doors: the stack spec simulates the node groups and pods it would create;
the policy pack (and the plan's placement block) simulate the resources the program created. They
build the same node shapes and pod templates, and give the same verdict over a table of cases."""

from __future__ import annotations

import copy
import itertools
from dataclasses import replace

import pytest

from gpufleet.catalog import catalog
from gpufleet.plans import placement as plan_placement
from gpufleet.eks import placement as eks_placement
from gpufleet.stack.spec import SpecError, decode_config, load_spec
from gpufleet.stack.files import load, stack_path
from tests.conftest import shipped_plan

CAT = catalog.load()
EKS_STACKS = ("eks-p5-efa", "eks-trn1", "eks-g5-timeslice")


def _spec(stack: str, edit=None):
    config = decode_config(load(stack_path(stack)).pulumi_config())
    if edit:
        edit(config)
    return load_spec(config)


def _plain(pod):
    """A pod template without the names each door gives it (release names, URNs, sources)."""
    return replace(pod, owner=pod.owner.split(" (")[0].split("/")[0], urn=None, source="")


@pytest.mark.parametrize("stack", EKS_STACKS)
def test_the_spec_and_the_plan_build_the_same_nodes_and_pods(stack):
    spec = _spec(stack)
    fleet = spec.eks
    values = eks_placement.plugin_values(fleet, CAT)
    spec_shapes = eks_placement.node_shapes(fleet, spec.region, CAT, values)
    spec_pods = [pod for _, pod in eks_placement.pods(fleet, CAT, values)]
    plan = plan_placement.placement(plan_placement.from_plan(shipped_plan(stack)))
    by_group = {s.group: s for s in plan.shapes}
    assert sorted(by_group) == sorted(s.group for s in spec_shapes)
    for shape in spec_shapes:
        theirs = by_group[shape.group]
        # The plan knows the zones of the created subnets only as unknowns: compare what both know.
        assert replace(shape, labels={}, uncertain_labels=frozenset()) == replace(theirs, labels={}, uncertain_labels=frozenset())
        assert {k: v for k, v in shape.labels.items() if k != "topology.kubernetes.io/zone"} == {
            k: v for k, v in theirs.labels.items() if k != "topology.kubernetes.io/zone"
        }
    def key(pod):
        return pod.owner, sorted(pod.requests.items())

    assert sorted(map(_plain, spec_pods), key=key) == sorted((_plain(p.pod) for p in plan.pods), key=key)


# --- a table of system node groups: both doors must agree on CoreDNS and the launcher ------------

SYSTEM_CASES = list(itertools.product(["t3.nano", "t3.micro", "m6i.large"], [1, 2], [True, False]))


def _system_edit(instance_type: str, nodes: int, enabled: bool):
    def edit(config):
        config["eks"]["systemNodeGroup"] = {"enabled": enabled, "instanceType": instance_type, "minSize": nodes, "desiredSize": nodes, "maxSize": nodes}

    return edit


def _spec_verdict(case) -> bool:
    try:
        _spec("eks-p5-efa", _system_edit(*case))
    except SpecError as err:
        assert {i.rule for i in err.issues} == {"k8s-pods-schedulable"}, err
        return True
    return False


@pytest.fixture(scope="module")
def base_plan():
    return shipped_plan("eks-p5-efa")


def _plan_for(base: dict, instance_type: str, nodes: int, enabled: bool) -> dict:
    plan = copy.deepcopy(base)
    system = [r for r in plan["resources"] if r["name"].endswith("-system")]
    if not enabled:
        gone = {r["urn"] for r in system}
        plan["resources"] = [r for r in plan["resources"] if r["urn"] not in gone]
        return plan
    [group] = [r for r in system if r["type"] == "aws:eks/nodeGroup:NodeGroup"]
    group["inputs"]["instanceTypes"] = [instance_type]
    group["inputs"]["scalingConfig"] = {"minSize": nodes, "desiredSize": nodes, "maxSize": nodes}
    return plan


@pytest.fixture(scope="module")
def pack_verdicts(judge, base_plan) -> dict:
    verdicts = {}
    for case in SYSTEM_CASES:
        result = judge(_plan_for(base_plan, *case)["resources"])
        verdicts[case] = any(f.policy == "k8s-pods-schedulable" for f in result.findings)
    return verdicts


def test_the_table_has_both_verdicts(pack_verdicts):
    assert set(pack_verdicts.values()) == {True, False}


@pytest.mark.parametrize("case", SYSTEM_CASES)
def test_spec_and_pack_agree_on_system_node_groups(case, pack_verdicts):
    assert _spec_verdict(case) == pack_verdicts[case]


# --- ECS: a table of task memory around what each type registers ---------------------------------

from gpufleet.simulate import node_capacity  # noqa: E402
from tests.policies.test_policies_placement import _ecs  # noqa: E402

ECS_TYPES = ("g5.xlarge", "g5.12xlarge")
ECS_CASES = []
for _type in ECS_TYPES:
    _at_most, _estimate = node_capacity.os_memory_mib(CAT.get(_type), CAT.facts.memory_overhead)
    ECS_CASES += [(_type, m) for m in (_estimate, _at_most, _at_most + 1, CAT.get(_type).memory_mib)]


def _ecs_spec_verdict(instance_type: str, memory: int) -> bool:
    fleet = {
        "clusterName": "parity",
        "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0"]},
        "capacityProviders": [{"name": "gpu", "instanceType": instance_type, "minSize": 1, "desiredSize": 1, "maxSize": 4}],
        "workloads": [{"name": "serve", "capacityProvider": "gpu", "containers": [{"name": "m", "image": "x:1", "memory": memory, "gpus": 1}],
                       "service": {"desiredCount": 1}}],
    }
    try:
        load_spec({"region": "us-east-1", "ecs": fleet})
    except SpecError as err:
        assert {i.rule for i in err.issues} == {"ecs-memory-fits-instance"}, err
        return True
    return False


@pytest.fixture(scope="module")
def ecs_pack_verdicts(judge) -> dict:
    verdicts = {}
    for instance_type, memory in ECS_CASES:
        resources = _ecs(1, memory=memory)
        resources[0]["inputs"]["instanceType"] = instance_type
        result = judge(resources)
        verdicts[(instance_type, memory)] = any(f.policy == "ecs-tasks-placeable" for f in result.findings)
    return verdicts


@pytest.mark.parametrize("case", ECS_CASES)
def test_spec_and_pack_agree_on_registered_memory(case, ecs_pack_verdicts):
    instance_type, memory = case
    at_most, _ = node_capacity.os_memory_mib(CAT.get(instance_type), CAT.facts.memory_overhead)
    assert _ecs_spec_verdict(*case) == ecs_pack_verdicts[case] == (memory > at_most)


# --- EKS workloads: replicas around what the time-sliced group holds at desired and max size ------

WORKLOAD_REPLICAS = (8, 9, 32, 33)  # eks-g5-timeslice: 2 desired and 8 max nodes of 4 slices each


def _workload_spec_verdict(replicas: int) -> bool:
    try:
        _spec("eks-g5-timeslice", lambda c: c["eks"]["workloads"][0].__setitem__("replicas", replicas))
    except SpecError as err:
        assert {(i.rule, tuple(i.field)[-3:]) for i in err.issues} == {("k8s-pods-schedulable", ("workloads", 0, "replicas"))}, err
        return True
    return False


@pytest.fixture(scope="module")
def workload_pack_verdicts(judge) -> dict:
    base = shipped_plan("eks-g5-timeslice")
    verdicts = {}
    for replicas in WORKLOAD_REPLICAS:
        plan = copy.deepcopy(base)
        [deployment] = [r for r in plan["resources"] if r["type"] == "kubernetes:apps/v1:Deployment"]
        deployment["inputs"]["spec"]["replicas"] = replicas
        verdicts[replicas] = any(f.policy == "k8s-pods-schedulable" and f.urn == deployment["urn"] for f in judge(plan["resources"]).findings)
    return verdicts


def test_the_workload_table_has_both_verdicts(workload_pack_verdicts):
    assert workload_pack_verdicts == {8: False, 9: False, 32: False, 33: True}


@pytest.mark.parametrize("replicas", WORKLOAD_REPLICAS)
def test_spec_and_pack_agree_on_workload_replicas(replicas, workload_pack_verdicts):
    assert _workload_spec_verdict(replicas) == workload_pack_verdicts[replicas]
