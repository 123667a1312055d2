"""`gpufleet verify` on a Kubernetes fleet, through the official client against a local API server
that answers from recorded objects (the live path), and from the same recording on disk (--from):
a healthy p5 fleet, a node with 7 of 8 GPUs, the EFA plugin missing, a DaemonSet never ready, a
pod the live scheduler leaves Pending where gpufleet placed it; and the real nodes of a public study
against the stack that mirrors its fleet (the README's tour)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, run_cli
from tests.verify import fleets

PLAN = str(ROOT / "tests" / "golden" / "eks-p5-efa.plan.json")


def _live(tmp_path, items, *flags, logs=None, mpijobs=None):
    with fleets.KubeApi(items, logs, mpijobs) as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
        code, out, err = run_cli("verify", PLAN, "--context", "recorded", "--kubeconfig", str(kubeconfig), "--json", *flags)
    assert "Traceback" not in err, err
    return code, (json.loads(out)["verify"] if out else None), err, api.requests


def _recorded(tmp_path, items, *flags, log=None):
    folder = fleets.write_case(tmp_path / "case", items, log)
    code, out, err = run_cli("verify", PLAN, "--from", str(folder), "--json", *flags)
    assert "Traceback" not in err, err
    return code, (json.loads(out)["verify"] if out else None), err


def _findings(verdict, check, verdict_kind=None):
    return [f for f in verdict["findings"] if f["check"] == check and (verdict_kind is None or f["verdict"] == verdict_kind)]


def test_a_healthy_p5_fleet_matches_through_the_client_and_from_a_recording(tmp_path):
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    code, verdict, _, requests = _live(tmp_path, items)
    assert code == 0 and verdict["matches"], verdict
    assert {"/api/v1/nodes", "/api/v1/pods", "/apis/apps/v1/daemonsets"} <= set(requests)
    [p5] = [f for f in _findings(verdict, "nodes") if f["subject"] == "node group p5"]
    assert p5["verdict"] == "match" and p5["observed"] == 2 and p5["urn"].endswith("aws:eks/nodeGroup:NodeGroup::p5-train-p5")
    # Every plugin the plan puts on the p5 nodes is ready there, matched by its chart's label.
    plugins = {f["subject"]: f["verdict"] for f in _findings(verdict, "device-plugins")}
    assert plugins["DaemonSet kube-system/p5-train-device-plugins-efa"] == "match"
    assert plugins["DaemonSet nvidia-device-plugin/p5-train-device-plugins-nvidia"] == "match"
    assert {f["verdict"] for f in _findings(verdict, "pods")} == {"match"}
    code_disk, from_disk, _ = _recorded(tmp_path, items)
    assert code_disk == 0 and from_disk["findings"] == verdict["findings"]


def test_a_node_with_7_of_8_gpus_is_named_with_its_quarantine(tmp_path):
    nodes = fleets.p5_fleet_nodes(gpus_on_second="7")
    short = nodes[1]["metadata"]["name"]
    message = fleets.study_failed_scheduling()
    code, verdict, _, _ = _live(tmp_path, fleets.p5_cluster(nodes, worker_pending=message))
    assert code == 1 and not verdict["matches"]
    [finding] = _findings(verdict, "allocatable", "mismatch")
    assert finding["subject"] == f"node {short}" and "nvidia.com/gpu 7 of 8" in finding["message"]
    assert finding["commands"] == [f"kubectl cordon {short}", f"kubectl taint nodes {short} gpufleet.dev/quarantine=short-gpu:NoSchedule"]
    # The worker the short node could not take is Pending: the live scheduler's words beside the
    # plan's, laid to the fleet's difference, not to gpufleet's simulator.
    [worker] = [f for f in _findings(verdict, "pods", "mismatch") if "(Worker)" in f["subject"]]
    assert message in worker["message"] and "the plan: on p5" in worker["message"] and "fleet differs" in worker["message"]
    assert not _findings(verdict, "simulator")


def test_a_pending_pod_on_a_fleet_that_matches_is_a_finding_against_the_simulator(tmp_path):
    message = fleets.study_failed_scheduling()
    code, verdict, _, _ = _live(tmp_path, fleets.p5_cluster(fleets.p5_fleet_nodes(), worker_pending=message))
    assert code == 1
    [finding] = _findings(verdict, "simulator")
    assert "(Worker)" in finding["subject"] and message in finding["message"] and "against gpufleet's simulator" in finding["message"]


def test_the_efa_plugin_missing(tmp_path):
    code, verdict, _, _ = _live(tmp_path, fleets.p5_cluster(fleets.p5_fleet_nodes(), efa_plugin=False))
    assert code == 1
    [finding] = _findings(verdict, "device-plugins", "mismatch")
    assert finding["subject"] == "DaemonSet kube-system/p5-train-device-plugins-efa" and "not in the cluster" in finding["message"]


def test_a_daemonset_that_never_became_ready_names_its_nodes(tmp_path):
    nodes = fleets.p5_fleet_nodes()
    code, verdict, _, _ = _live(tmp_path, fleets.p5_cluster(nodes, nvidia_ready=0))
    assert code == 1
    [finding] = _findings(verdict, "device-plugins", "mismatch")
    assert finding["subject"] == "DaemonSet nvidia-device-plugin/p5-train-device-plugins-nvidia"
    assert "ready 0 of 2 scheduled" in finding["message"]
    assert all(n["metadata"]["name"] in finding["message"] for n in nodes[:2])


def test_the_study_nodes_against_the_stack_of_its_fleet():
    """The README's tour: real `kubectl get nodes -o json` output, unchanged, against eks-p3dn-efa."""
    code, out, err = run_cli("verify", "eks-p3dn-efa", "--from", str(fleets.STUDY.parent))
    assert code == 0, err + out
    assert "[ok] node group workers: 8 node(s) registered and Ready (desired 8)" in out
    assert "8 node(s) of node group workers (p3dn.24xlarge: hugepages-2Mi 21122Mi, nvidia.com/gpu 8, vpc.amazonaws.com/efa 1)" in out
    assert "[not judged] pods: the recording holds no Pod objects" in out


@pytest.mark.parametrize("drop", [1, 4])
def test_missing_nodes_are_counted_against_desired(tmp_path, drop):
    nodes = fleets.p5_fleet_nodes()
    del nodes[drop - 1]
    code, verdict, _ = _recorded(tmp_path, nodes)
    assert code == 1
    [finding] = _findings(verdict, "nodes", "mismatch")
    assert "1 of 2 desired nodes registered and Ready" in finding["message"]


def test_nodepool_nodes_are_held_to_the_plans_node_for_their_type(tmp_path):
    """eks-karpenter-gpu: Karpenter's p5 nodes of pool `train` (matched by karpenter.sh/nodepool),
    against the plan's node for p5.48xlarge; one short of a GPU."""
    plan = str(ROOT / "tests" / "golden" / "eks-karpenter-gpu.plan.json")
    nodes = fleets.p5_fleet_nodes(gpus_on_second="7")
    for node in nodes[:2]:
        labels = node["metadata"]["labels"]
        del labels["eks.amazonaws.com/nodegroup"]
        labels["karpenter.sh/nodepool"] = "train"
    folder = fleets.write_case(tmp_path / "case", nodes)
    code, out, err = run_cli("verify", plan, "--from", str(folder), "--json")
    assert code == 1, err
    findings = json.loads(out)["verify"]["findings"]
    [pool] = [f for f in findings if f["subject"] == "NodePool train" and f["check"] == "nodes"]
    assert pool["verdict"] == "match" and pool["observed"] == 2
    [short] = [f for f in findings if f["check"] == "allocatable" and f["verdict"] == "mismatch"]
    assert short["subject"] == f"node {nodes[1]['metadata']['name']}" and "NodePool train (p5.48xlarge): allocatable nvidia.com/gpu 7 of 8" in short["message"]
    [whole] = [f for f in findings if f["check"] == "allocatable" and f["subject"] == "NodePool train" and f["verdict"] == "match"]
    assert whole["observed"] == [nodes[0]["metadata"]["name"]]
