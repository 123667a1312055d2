"""A plan's node groups carry their cluster's Kubernetes version to the scheduler, whose words differ
by version (kube-scheduler's TaintToleration message changed in 1.34.2 and 1.35.0)."""

from __future__ import annotations

import copy

import pytest

from gpufleet.plans import placement as plan_placement
from tests.plan_edits import golden

CLUSTER, GROUP = "aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup"


def _versions(plan: dict) -> set:
    shapes = plan_placement.placement(plan_placement.from_plan(plan)).shapes
    return {(s.group, s.kubernetes_version) for s in shapes}


@pytest.mark.parametrize("cluster, own, expected", [("1.35", None, "1.35"), ("1.33", None, "1.33"), ("1.35", "1.33", "1.33")])
def test_a_group_takes_its_own_version_else_its_clusters(cluster, own, expected):
    plan = copy.deepcopy(golden("eks-g5-timeslice"))
    for r in plan["resources"]:
        if r["type"] == CLUSTER:
            r["inputs"]["version"] = cluster
        if r["type"] == GROUP and own is not None:
            r["inputs"]["version"] = own
    assert {version for _, version in _versions(plan)} == {expected}
