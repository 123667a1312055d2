"""One reading of each group, held for any plan (a shipped stack's golden plan, a corpus program's
preview): the placement, the plan's cost, the reviewer's diff, and the pack (its EKS rules and its
fleet-budget cost, from the resources as the analyzer protocol hands them over) see the same instance
type, sizes, region and EFA interfaces. verify reads the same `accelerated_groups`."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from gpufleet.catalog import catalog
from gpufleet.plans import placement as plan_placement
from gpufleet.plans.cost import plan_cost as cost_block
from gpufleet.plans.cost import plan_hints
from gpufleet.plans.groups import Group, accelerated_groups
from gpufleet.plans.index import from_plan
from gpufleet.policies import eks_nodes
from gpufleet.policies.inputs import typed
from tests.plan_edits import added, plan_cost

EFA = "vpc.amazonaws.com/efa"


def readings(plan: dict) -> tuple[dict, dict[str, Group], dict]:
    """The placement's node groups, the group reader's groups and the cost's groups, by group name."""
    resources = from_plan(plan)
    placed = {s["nodeGroup"]: s for s in plan_placement.placement(resources).as_dict()["nodeGroups"]}
    groups = {g.name: g for g in accelerated_groups(resources).values()}
    cost = {g["group"]: g for g in plan_cost(plan["resources"], plan["placement"], plan_hints(plan["summary"]))["groups"]}
    return placed, groups, cost


def as_analyzed(plan: dict) -> dict:
    """The plan's resources as the pack receives them over the analyzer protocol: inputs, dependencies
    as resources, and the provider resource each names."""
    by_urn = {
        r["urn"]: SimpleNamespace(urn=r["urn"], resource_type=r["type"], name=r["name"], props=r.get("inputs") or {}, provider=None)
        for r in plan["resources"]
    }
    for r in plan["resources"]:
        deps = r.get("propertyDependencies") or {}
        by_urn[r["urn"]].property_dependencies = {p: [by_urn[u] for u in urns if u in by_urn] for p, urns in deps.items()}
        by_urn[r["urn"]].provider = by_urn.get(r.get("provider") or "")
    return by_urn


def assert_read_alike(plan: dict, tmp_path: Path, label: str) -> None:
    placed, groups, cost = readings(plan)
    analyzed = as_analyzed(plan)
    # The pack's fleet-budget prices the analyzer's resources, with the regions its stack config gives.
    hints = plan_hints(plan["summary"])
    packed = {g["group"]: g for g in cost_block([typed(r) for r in analyzed.values()], plan["placement"], hints)["groups"]}
    diffed = added(tmp_path, plan)
    for name, group in groups.items():
        entry = cost[name]
        region = group.region or hints.get(group.cloud or "")
        seen = (group.instance_type, group.sizes, group.platform, region)
        assert (entry["instanceType"], entry["instances"], entry["platform"], entry["region"]) == seen, (label, name)
        assert (packed[name]["instanceType"], packed[name]["region"]) == (group.instance_type, region), (label, name)
        assert diffed[name]["instanceType"] == group.instance_type, (label, name)
        shape = placed.get(name)
        if shape is not None and group.platform == "eks":
            assert shape["instanceType"] == group.instance_type, (label, name)
            assert shape["nodes"] == group.sizes, (label, name)
            assert int(shape["allocatable"].get(EFA, "0")) in (0, group.efa_interfaces), (label, name)
            if group.efa_interfaces and EFA in shape["allocatable"]:
                assert int(shape["allocatable"][EFA]) == group.efa_interfaces, (label, name)
        # The pack's EKS rules read each node group's type through the same reader.
        if group.platform == "eks" and not group.derived and ", " not in group.instance_type:
            it = eks_nodes.node_group_type(analyzed[group.urn], catalog.load())
            assert it is not None and it.name == group.instance_type, (label, name)
