"""One reading of each group: the placement, the cost (and fleet-budget, which calls the same
function), the diff and verify (which read accelerated_groups) and the pack's EKS rules see the same
instance type, sizes and EFA interfaces for every group of every shipped stack's plan."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpufleet.catalog import catalog
from gpufleet.plans import placement as plan_placement
from gpufleet.plans.cost import plan_hints
from gpufleet.plans.groups import accelerated_groups
from gpufleet.plans.index import from_plan
from gpufleet.policies import eks_nodes
from tests.conftest import ROOT
from tests.plan_edits import edited, golden, plan_cost

STACKS = sorted(p.name.removesuffix(".plan.json") for p in (ROOT / "tests" / "golden").glob("*.plan.json"))
EFA = "vpc.amazonaws.com/efa"


def readings(plan: dict) -> tuple[dict, dict, dict]:
    typed = from_plan(plan)
    placed = {s["nodeGroup"]: s for s in plan_placement.placement(typed).as_dict()["nodeGroups"]}
    groups = {g.name: g for g in accelerated_groups(typed).values()}
    cost = {g["group"]: g for g in plan_cost(plan["resources"], plan["placement"], plan_hints(plan["summary"]))["groups"]}
    return placed, groups, cost


def _as_analyzed(plan: dict) -> dict:
    """The plan's resources as the pack receives them over the analyzer protocol (their inputs, their
    dependencies as resources, their provider)."""
    by_urn = {
        r["urn"]: SimpleNamespace(urn=r["urn"], resource_type=r["type"], name=r["name"], props=r.get("inputs") or {}, provider=None)
        for r in plan["resources"]
    }
    for r in plan["resources"]:
        deps = r.get("propertyDependencies") or {}
        by_urn[r["urn"]].property_dependencies = {p: [by_urn[u] for u in urns if u in by_urn] for p, urns in deps.items()}
    return by_urn


@pytest.mark.parametrize("stack", STACKS)
def test_every_door_reads_a_group_alike(stack):
    plan = golden(stack)
    placed, groups, cost = readings(plan)
    assert groups or [u for u in plan["cost"]["unpriced"] if u["instanceType"] == "ECS Managed Instances"], stack
    for name, group in groups.items():
        entry = cost[name]
        assert (entry["instanceType"], entry["instances"], entry["platform"]) == (group.instance_type, group.sizes, group.platform)
        shape = placed.get(name)
        if shape is not None and group.platform == "eks":
            assert shape["instanceType"] == group.instance_type
            assert shape["nodes"] == group.sizes
            assert int(shape["allocatable"].get(EFA, "0")) in (0, group.efa_interfaces)
            if group.efa_interfaces and EFA in shape["allocatable"]:
                assert int(shape["allocatable"][EFA]) == group.efa_interfaces
    # The pack's EKS rules read each node group's type through the same reader.
    analyzed = _as_analyzed(plan)
    for group in groups.values():
        if group.platform == "eks" and not group.derived and ", " not in group.instance_type:
            it = eks_nodes.node_group_type(analyzed[group.urn])
            assert it is not None and it.name == group.instance_type, (stack, group.name)
    # The tasks' capacity providers are the groups the cost prices, or names unpriced.
    unpriced = {u["group"] for u in plan["cost"]["unpriced"]}
    for task in plan["placement"].get("tasks") or []:
        if task.get("capacityProvider") and task["status"] == "placed":
            assert task["capacityProvider"] in cost.keys() | unpriced, (stack, task["task"])


def test_a_group_naming_no_type_is_read_alike_by_every_door():
    """Where the plan names no type, the one fallback (EKS's default) serves every door: the
    placement places on it, the cost prices it and says so, the diff shows it."""
    plan = edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].pop("instanceType"))
    placed, groups, cost = readings(plan)
    default = catalog.load().facts.eks.node_group_default_instance_type.value
    assert placed["p5"]["instanceType"] == groups["p5"].instance_type == cost["p5"]["instanceType"] == default
    assert any("EKS's default" in note for note in cost["p5"]["notes"])


@pytest.mark.parametrize("stack", ["eks-p5-efa", "eks-p3dn-efa"])
def test_the_efa_interfaces_of_an_efa_group_are_read_alike(stack):
    placed, groups, _ = readings(golden(stack))
    efa = {name: g.efa_interfaces for name, g in groups.items() if g.efa_interfaces}
    assert efa and all(int(placed[name]["allocatable"][EFA]) == n for name, n in efa.items())
