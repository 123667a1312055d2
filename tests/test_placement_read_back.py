"""A plan's placement block is read from its resources alone (so `gpufleet check` of a `pulumi
preview --json` places the same pods and tasks): each shipped stack's golden plan, read back, gives
the placement its preview wrote: node groups and pools with what they advertise, every pod and task,
and the gaps. Milliseconds per stack; the placement doors and the pack's policies are tested apart."""

from __future__ import annotations

import pytest

from gpufleet.components.catalog import plan_placement
from tests.conftest import ROOT
from tests.plan_edits import golden

STACKS = sorted(p.name.removesuffix(".plan.json") for p in (ROOT / "tests" / "golden").glob("*.plan.json"))


@pytest.mark.parametrize("stack", STACKS)
def test_a_plans_resources_read_back_to_its_placement(stack):
    plan = golden(stack)
    assert plan_placement.placement(plan_placement.from_plan({"resources": plan["resources"]})).as_dict() == plan["placement"]


def test_every_cloud_is_read_back():
    kinds = {stack.split("-", 1)[0] for stack in STACKS}
    assert kinds == {"ack", "aks", "ecs", "eks", "gke"}
