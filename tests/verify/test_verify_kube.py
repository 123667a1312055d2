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


def test_a_node_with_more_gpus_or_efa_devices_than_the_model_is_a_finding(tmp_path):
    """A device plugin advertises what the node has: more than the plan's model of the type (9 GPUs,
    33 EFA devices on a p5.48xlarge) is a finding against the model, never a match (issue 58)."""
    nodes = fleets.p5_fleet_nodes(gpus_on_second="9")
    nodes[0]["status"]["allocatable"]["vpc.amazonaws.com/efa"] = "33"
    code, verdict, _ = _recorded(tmp_path, fleets.p5_cluster(nodes))
    assert code == 1 and not verdict["matches"]
    beyond = {f["subject"]: f["message"] for f in _findings(verdict, "allocatable", "mismatch")}
    first, second = (f"node {n['metadata']['name']}" for n in nodes[:2])
    assert beyond == {
        first: "node group p5 (p5.48xlarge): vpc.amazonaws.com/efa 33, the plan's model says 32: a finding against gpufleet's model of the type",
        second: "node group p5 (p5.48xlarge): nvidia.com/gpu 9, the plan's model says 8: a finding against gpufleet's model of the type",
    }


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
    # Nodes only: the group is proven, the plugins and pods the plan places are not (exit 5, not 0).
    assert code == 5, err + out
    assert "[ok] node group workers: 8 node(s) registered and Ready (desired 8)" in out
    assert "8 node(s) of node group workers (p3dn.24xlarge: hugepages-2Mi 21122Mi, nvidia.com/gpu 8, vpc.amazonaws.com/efa 1)" in out
    assert "[not judged] Deployment kube-system/coredns: the recording holds no Pod objects" in out
    assert out.splitlines()[-1].startswith("not proven: 6 of the plan's groups and workloads not judged")


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


def _edited_plan(tmp_path, edit) -> str:
    plan = json.loads(open(PLAN).read())
    edit(plan)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return str(path)


def _worker_replicas(n: int):
    def edit(plan):
        [job] = [r for r in plan["resources"] if r["type"] == "kubernetes:kubeflow.org/v2beta1:MPIJob"]
        job["inputs"]["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = n
    return edit


def _verify(plan: str, folder) -> tuple[int, dict]:
    code, out, err = run_cli("verify", plan, "--from", str(folder), "--json")
    assert "Traceback" not in err and out, err
    return code, json.loads(out)["verify"]


def test_a_pod_pending_as_the_plan_predicted_matches_with_both_messages(tmp_path):
    """Three workers on two p5 nodes: the plan leaves one Pending, and so does the live scheduler."""
    plan = _edited_plan(tmp_path, _worker_replicas(3))
    message = fleets.study_failed_scheduling()
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    items.append(fleets.pod("default", "nccl-tests-p5-worker-2", None, phase="Pending", ready=False, unschedulable=message))
    code, verdict = _verify(plan, fleets.write_case(tmp_path / "case", items))
    [worker] = [f for f in verdict["findings"] if "(Worker)" in f["subject"]]
    assert code == 0 and worker["verdict"] == "match"
    assert worker["message"].startswith(f"Pending, as predicted: the live scheduler: {message}; the plan: Pending (0/4 nodes are available")


def test_pods_running_where_the_plan_predicted_pending_are_a_finding_against_the_simulator(tmp_path):
    plan = _edited_plan(tmp_path, _worker_replicas(3))
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    items.append(fleets.pod("default", "nccl-tests-p5-worker-2", items[0]["metadata"]["name"]))
    code, verdict = _verify(plan, fleets.write_case(tmp_path / "case", items))
    [worker] = [f for f in verdict["findings"] if "(Worker)" in f["subject"]]
    assert code == 1 and worker["check"] == "simulator" and worker["message"].startswith("3 running; the plan: Pending")


def test_a_pod_on_a_group_the_plan_says_it_cannot_land_on(tmp_path):
    """CoreDNS tolerates no GPU taint: running on a p5 node contradicts the simulator."""
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    coredns = next(i for i in items if i["metadata"]["name"].startswith("coredns-"))
    coredns["spec"]["nodeName"] = items[0]["metadata"]["name"]
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    [finding] = [f for f in verdict["findings"] if f["subject"] == "Deployment kube-system/coredns"]
    assert code == 1 and finding["check"] == "simulator"
    assert f"{coredns['metadata']['name']} on p5" in finding["message"] and "the plan: on system-*" in finding["message"]


def test_a_pod_still_starting_is_counted_and_not_a_mismatch(tmp_path):
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    items.append(fleets.pod("kube-system", "coredns-5d5f9c6b8-klmno", items[2]["metadata"]["name"], phase="Pending", ready=False))
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    [finding] = [f for f in verdict["findings"] if f["subject"] == "Deployment kube-system/coredns"]
    assert code == 0 and finding["message"] == "2 running on system-*; 1 starting; the plan: on system-*"


NVIDIA = "DaemonSet nvidia-device-plugin/p5-train-device-plugins-nvidia"
MPS = f"{NVIDIA}: MPS control daemon"


def test_another_daemonset_of_the_plugin_s_chart_is_not_taken_for_the_release_s(tmp_path):
    """A second NVIDIA plugin DaemonSet (the plugin's static manifest, labelled with the chart's name)
    beside the release's: the release's is the one named and selecting as its chart renders it, so
    the plugin is judged (by its chart's label alone, both could be it)."""
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    p5 = [n["metadata"]["name"] for n in items[:2]]
    items.append(fleets.daemonset("nvidia-device-plugin", fleets.STATIC_NAME, p5, chart="nvidia-device-plugin", selector=fleets.STATIC_SELECTOR))
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    [finding] = [f for f in verdict["findings"] if f["subject"] == NVIDIA]
    assert code == 0 and finding["verdict"] == "match" and not verdict["unjudged"]
    assert finding["message"] == f"{fleets.NVIDIA_PLUGIN}: ready 2 of 2 scheduled; ready on the 2 node(s) of p5"


def test_the_plugin_s_daemonset_selecting_other_labels_is_not_the_release_s(tmp_path):
    """The release's DaemonSet by name, selecting its pods as the static manifest does: not what the
    pinned chart renders (another chart, or edited after apply)."""
    items = fleets.p5_cluster(fleets.p5_fleet_nodes(), plugin_selector=fleets.STATIC_SELECTOR)
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    [finding] = [f for f in verdict["findings"] if f["subject"] == NVIDIA]
    assert code == 1 and finding["verdict"] == "mismatch"
    assert finding["message"] == (
        "not in the cluster as its chart renders it (nvidia-device-plugin/p5-train-device-plugins-nvidia-????????-nvidia-device-plugin "
        "selecting app.kubernetes.io/instance=p5-train-device-plugins-nvidia-????????, app.kubernetes.io/name=nvidia-device-plugin) "
        f"({fleets.NVIDIA_PLUGIN} selects name=nvidia-device-plugin-ds); the plan runs it on p5"
    )


def test_the_mps_control_daemon_on_no_node_matches_a_plan_without_mps(tmp_path):
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", fleets.p5_cluster(fleets.p5_fleet_nodes())))
    [mps] = [f for f in verdict["findings"] if f["subject"] == MPS]
    assert code == 0 and mps["verdict"] == "match" and mps["item"] == NVIDIA
    assert mps["message"] == f"{fleets.NVIDIA_MPS}: ready 0 of 0 scheduled; the plan has 0 node(s) labelled nvidia.com/mps.capable=true"


def test_the_mps_control_daemon_missing_is_a_mismatch(tmp_path):
    items = fleets.p5_cluster(fleets.p5_fleet_nodes(), mps_nodes=None)
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    [mps] = [f for f in verdict["findings"] if f["subject"] == MPS]
    assert code == 1 and mps["verdict"] == "mismatch"
    assert mps["message"].startswith("not in the cluster; the chart renders it beside the plugin (nvidia-device-plugin/"
                                     "p5-train-device-plugins-nvidia-????????-nvidia-device-plugin-mp selecting ")
    [entry] = [j for j in verdict["plan"] if j["subject"] == NVIDIA]
    assert entry["state"] == "mismatch" and "not in the cluster" in entry["reason"]


def test_the_mps_control_daemon_on_nodes_the_plan_does_not_label_is_named_with_its_counts(tmp_path):
    nodes = fleets.p5_fleet_nodes()
    items = fleets.p5_cluster(nodes, mps_nodes=(nodes[0]["metadata"]["name"],))
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    [mps] = [f for f in verdict["findings"] if f["subject"] == MPS]
    assert code == 1 and mps["verdict"] == "mismatch" and (mps["expected"], mps["observed"]) == (0, 1)
    assert mps["message"] == f"{fleets.NVIDIA_MPS}: scheduled on 1 node(s), the plan has 0 labelled nvidia.com/mps.capable=true"


def test_a_plugin_the_plan_puts_on_nodepool_nodes_only_is_judged_by_its_own_status(tmp_path):
    plan = str(ROOT / "tests" / "golden" / "eks-karpenter-gpu.plan.json")
    nodes = fleets.p5_fleet_nodes()[2:]  # the system group only: no NodePool node yet
    name = "karp-gpu-device-plugins-efa-5e6f7a8b-aws-efa-k8s-device-plugin"  # as fleets.EFA_PLUGIN, for this plan's release
    ds = fleets.daemonset("kube-system", name, ["ip-10-60-0-99.ec2.internal"], ready=0, chart="aws-efa-k8s-device-plugin", selector={"name": name})
    code, verdict = _verify(plan, fleets.write_case(tmp_path / "case", [*nodes, ds]))
    [finding] = [f for f in verdict["findings"] if f["subject"] == "DaemonSet kube-system/karp-gpu-device-plugins-efa"]
    assert code == 1 and finding["verdict"] == "mismatch" and "ready 0 of 1 scheduled (the plan puts it on no node group)" in finding["message"]
    [missing] = [f for f in verdict["findings"] if f["subject"] == "DaemonSet nvidia-device-plugin/karp-gpu-device-plugins-nvidia"]
    assert missing["verdict"] == "mismatch" and "the nodes its NodePools launch" in missing["message"]


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda n: n["status"]["allocatable"].__setitem__("nvidia.com/gpu", "eight"), "not a quantity: nvidia.com/gpu 'eight'"),
        (lambda n: n["metadata"]["labels"].__setitem__("node.kubernetes.io/instance-type", "p5e.48xlarge"), "p5e.48xlarge is not a type the plan gives node group p5"),
    ],
)
def test_a_node_that_cannot_be_compared_is_not_judged_and_the_others_are(tmp_path, edit, said):
    nodes = fleets.p5_fleet_nodes()
    edit(nodes[0])
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", fleets.p5_cluster(nodes)))
    [finding] = [f for f in verdict["findings"] if f["subject"] == f"node {nodes[0]['metadata']['name']}"]
    assert code == 5 and finding["verdict"] == "not-judged" and said in finding["message"]
    # One node not compared leaves its group unproven: the only item of the plan not judged.
    [unjudged] = verdict["unjudged"]
    assert unjudged["subject"] == "node group p5" and said in unjudged["reason"]
    [other] = [f for f in verdict["findings"] if f["check"] == "allocatable" and f["subject"] == "node group p5"]
    assert other["verdict"] == "match" and other["observed"] == [nodes[1]["metadata"]["name"]]


def test_a_node_without_the_efa_resource_is_short_of_it(tmp_path):
    """Where the EFA plugin never ran, the node advertises no vpc.amazonaws.com/efa at all."""
    nodes = fleets.p5_fleet_nodes()
    for node in nodes[:2]:
        del node["status"]["allocatable"]["vpc.amazonaws.com/efa"]
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", nodes))
    short = [f for f in verdict["findings"] if f["check"] == "allocatable" and f["verdict"] == "mismatch"]
    assert code == 1 and len(short) == 2 and all("vpc.amazonaws.com/efa 0 of 32" in f["message"] for f in short)
    assert short[0]["commands"][1].endswith("gpufleet.dev/quarantine=short-efa:NoSchedule")


def test_daemonsets_recorded_without_their_pods_are_judged_by_their_status(tmp_path):
    items = [i for i in fleets.p5_cluster(fleets.p5_fleet_nodes(), nvidia_ready=1) if i["kind"] != "Pod"]
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    by_subject = {f["subject"]: f for f in verdict["findings"] if f["check"] == "device-plugins"}
    assert code == 1
    assert by_subject["DaemonSet nvidia-device-plugin/p5-train-device-plugins-nvidia"]["message"].endswith("not ready on (its pods are not recorded)")
    assert by_subject["DaemonSet kube-system/aws-node"]["verdict"] == "match"


def test_pods_of_another_deployment_sharing_the_name_prefix_are_not_counted(tmp_path):
    """coredns-autoscaler's pod is not one of CoreDNS's (the pod names a Deployment gives its pods)."""
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    items.append(fleets.pod("kube-system", "coredns-autoscaler-6d8f9c7b5-x2k4p", items[0]["metadata"]["name"]))
    items.append(fleets.pod("default", "nccl-tests-p5-worker-2-debug", items[0]["metadata"]["name"]))
    code, verdict = _verify(PLAN, fleets.write_case(tmp_path / "case", items))
    by_subject = {f["subject"]: f for f in verdict["findings"]}
    assert code == 0
    assert by_subject["Deployment kube-system/coredns"]["message"] == "2 running on system-*; the plan: on system-*"
    assert by_subject["MPIJob default/nccl-tests-p5 (Worker)"]["message"].startswith("2 running on p5")
