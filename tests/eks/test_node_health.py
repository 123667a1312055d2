"""Node health, built in: accelerated managed node groups repair their nodes, a cluster gpufleet
creates runs EKS's node monitoring agent (with its DCGM server tolerating the GPU taint), the pack
advises where an accelerated group has no repair, and GKE and AKS say what repairs theirs."""

from __future__ import annotations

import json

import pytest

from gpufleet.catalog import catalog, tokens
from gpufleet.plans import placement as plan_placement
from gpufleet.rules import eks as eks_rules
from tests.conftest import inputs_by_name, plans_of, preview_plan
from tests.plan_edits import golden
from tests.policy_helpers import findings, resource

plans = plans_of(("eks-p5-efa", "eks-auto-gpu", "gke-l4-timeshare", "aks-a100-mig"))
ADDON = "eks-node-monitoring-agent"


def _placed(plan: dict, pod: str) -> dict:
    [found] = [p for p in plan["placement"]["pods"] if p["pod"] == f"DaemonSet kube-system/{pod}"]
    return found["nodeGroups"]


def test_accelerated_groups_repair_and_the_system_group_is_left_to_eks(plans):
    groups = inputs_by_name(plans["eks-p5-efa"], tokens.EKS_NODE_GROUP)
    assert groups["p5-train-p5"]["nodeRepairConfig"] == {"enabled": True}
    assert "nodeRepairConfig" not in groups["p5-train-system"]
    [row] = plans["eks-p5-efa"]["summary"]["groups"]
    assert row["repair"] == catalog.load().facts.eks.node_health.repair


def test_the_created_cluster_runs_the_monitoring_agent_and_dcgm_tolerates_the_gpu_taint(plans):
    [addon] = inputs_by_name(plans["eks-p5-efa"], tokens.EKS_ADDON).values()
    assert addon["addonName"] == ADDON
    values = json.loads(addon["configurationValues"])
    assert values == {"dcgmAgent": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}
    # Its two DaemonSets are placed: the agent everywhere, the DCGM server on the GPU nodes only.
    assert set(_placed(plans["eks-p5-efa"], ADDON)) == {"p5", "system-*"}
    assert set(_placed(plans["eks-p5-efa"], "dcgm-server")) == {"p5"}


def test_without_the_toleration_the_dcgm_server_never_reaches_a_tainted_gpu_node():
    plan = golden("eks-p5-efa")
    [addon] = [r for r in plan["resources"] if r["type"] == tokens.EKS_ADDON]
    del addon["inputs"]["configurationValues"]
    placed = plan_placement.placement(plan_placement.from_plan(plan)).as_dict()
    [dcgm] = [p for p in placed["pods"] if p["pod"] == "DaemonSet kube-system/dcgm-server"]
    assert "p5" not in (dcgm.get("nodeGroups") or {})


def test_auto_mode_brings_its_own_agent_and_repair(plans):
    plan = plans["eks-auto-gpu"]
    assert not inputs_by_name(plan, tokens.EKS_ADDON)
    assert all(g["repair"] == catalog.load().facts.eks.node_health.auto_mode_repair for g in plan["summary"]["groups"])


def test_a_joined_cluster_gets_no_add_on(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["cluster"].pop("create")
        c["gpufleet:eks"]["cluster"]["securityGroupId"] = "sg-0123456789abcdef0"
        c["gpufleet:eks"]["network"] = {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]}
        c["gpufleet:eks"]["nodeGroups"][0].pop("zones")
        c["gpufleet:eks"].pop("kubernetes")  # its provider would need the live cluster's endpoint
        c["gpufleet:eks"].pop("workloads", None)

    plan = preview_plan("--config-file", str(stack_variant(edit, "eks-g5-timeslice")))
    assert not inputs_by_name(plan, tokens.EKS_ADDON)
    assert all(g["nodeRepairConfig"]["enabled"] for g in inputs_by_name(plan, tokens.EKS_NODE_GROUP).values())


def test_gke_and_aks_state_their_own_repair(plans):
    facts = catalog.load().facts
    assert {g["repair"] for g in plans["gke-l4-timeshare"]["summary"]["groups"]} == {facts.gke.node_repair.value}
    assert {g["repair"] for g in plans["aks-a100-mig"]["summary"]["groups"]} == {facts.aks.node_repair.value}


def test_repair_off_is_said_in_the_summary_and_advised_by_the_pack(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["nodeGroups"][0]["repair"] = {"enabled": False}

    plan = preview_plan("--config-file", str(stack_variant(edit, "eks-p5-efa")))
    assert inputs_by_name(plan, tokens.EKS_NODE_GROUP)["p5-train-p5"]["nodeRepairConfig"] == {"enabled": False}
    [row] = plan["summary"]["groups"]
    assert row["repair"].startswith("none: nodeRepairConfig is off")
    [finding] = [v for v in plan["policy"]["violations"] if v["policy"] == "eks-node-repair"]
    assert finding["level"] == "advisory" and "p5.48xlarge nodes have no node auto repair" in finding["message"]


def test_repair_limits_reach_the_node_group_and_are_held_to_the_api_model(stack_variant, refused):
    def edit(c):
        c["gpufleet:eks"]["nodeGroups"][0]["repair"] = {"maxUnhealthyNodeThresholdPercentage": 50, "maxParallelNodesRepairedCount": 1}

    plan = preview_plan("--config-file", str(stack_variant(edit, "eks-p5-efa")))
    config = inputs_by_name(plan, tokens.EKS_NODE_GROUP)["p5-train-p5"]["nodeRepairConfig"]
    assert config == {"enabled": True, "maxUnhealthyNodeThresholdPercentage": 50, "maxParallelNodesRepairedCount": 1}
    err = refused("eks-p5-efa", "gpufleet:eks.nodeGroups[0].repair", {"maxUnhealthyNodeThresholdPercentage": 101})
    assert "gpufleet:eks.nodeGroups[0].repair.maxUnhealthyNodeThresholdPercentage = 101" in err


@pytest.mark.parametrize(
    "instance_type, enabled, advised",
    [("p5.48xlarge", None, True), ("p5.48xlarge", False, True), ("p5.48xlarge", True, False), ("inf2.xlarge", None, True),
     ("g6f.large", None, True), ("m6i.large", None, False)],
)
def test_the_rule(instance_type, enabled, advised):
    assert (eks_rules.repair_missing(catalog.load().find(instance_type), enabled) is not None) == advised


def _group(name: str, instance_type: str, **inputs) -> dict:
    return resource(tokens.EKS_NODE_GROUP, name, {"clusterName": "c", "instanceTypes": [instance_type], "scalingConfig": {"minSize": 1, "desiredSize": 1, "maxSize": 1}, **inputs})


def test_the_pack_on_a_foreign_programs_node_groups(judge):
    result = judge([
        _group("gpus", "g5.12xlarge"),
        _group("repaired", "g5.12xlarge", nodeRepairConfig={"enabled": True}),
        _group("cpus", "m6i.large"),
    ])
    assert findings(result, "eks-node-repair", "gpus")
    assert not findings(result, "eks-node-repair", "repaired") and not findings(result, "eks-node-repair", "cpus")
