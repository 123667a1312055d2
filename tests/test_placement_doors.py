"""One placement rule, two doors: the stack spec simulates the node groups and pods it would create;
the policy pack (and the plan's placement block) simulate the resources the program created. They
build the same node shapes and pod templates, and give the same verdict over a table of cases."""

from __future__ import annotations

import copy
import itertools
from dataclasses import replace

import pytest

from components.catalog import catalog, plan_placement
from components.eks import placement as eks_placement
from infra.spec import SpecError, decode_config, load_spec
from infra.stackfile import load, stack_path
from tests.conftest import preview_plan

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
    values = eks_placement.release_values(eks_placement.served_groups(fleet.node_groups), fleet.kubernetes.nvidia_device_plugin)
    spec_shapes = eks_placement.node_shapes(fleet, spec.region, CAT, values)
    spec_pods = [pod for _, pod in eks_placement.pods(fleet, CAT, values)]
    plan = plan_placement.placement(plan_placement.from_plan(preview_plan(stack)))
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
    return preview_plan("eks-p5-efa")


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
