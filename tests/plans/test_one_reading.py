"""One reading of each group: the placement, the cost, the diff, verify and the pack see the same
instance type, sizes, region and EFA interfaces for every group of every shipped stack's plan
(tests/one_reading.py; the corpus test holds the same for every public program)."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from tests.conftest import ROOT
from tests.one_reading import EFA, assert_read_alike, readings
from tests.plan_edits import edited, golden

STACKS = sorted(p.name.removesuffix(".plan.json") for p in (ROOT / "tests" / "golden").glob("*.plan.json"))


@pytest.mark.parametrize("stack", STACKS)
def test_every_door_reads_a_group_alike(stack, tmp_path):
    plan = golden(stack)
    _, groups, cost = readings(plan)
    assert groups or [u for u in plan["cost"]["unpriced"] if u["instanceType"] == "ECS Managed Instances"], stack
    assert_read_alike(plan, tmp_path, stack)
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
