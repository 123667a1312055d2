"""`gpufleet verify` cannot pass on nothing, and judges pods by their containers: a recording with no
node, a crash-looping device plugin, a Deployment whose pod cannot pull its image, an MPI launcher
finished, backing off or failed. Each case is built from a public recording (tests/fixtures/verify/
SOURCE.md), edited in code only to make the fault, and run through the CLI: the live path (the
official client against recorded objects) and the recorded one (--from)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.verify import fleets
from tests.verify.test_verify_kube import PLAN, _live, _recorded

NVIDIA = "DaemonSet nvidia-device-plugin/p5-train-device-plugins-nvidia"


def _both(tmp_path, items) -> tuple[int, dict]:
    """The same objects through the client and from disk: the same verdict and exit code."""
    code, verdict, err, _ = _live(tmp_path, items)
    code_disk, from_disk, _ = _recorded(tmp_path, items)
    assert (code, verdict["findings"]) == (code_disk, from_disk["findings"]), err
    return code, verdict


def _finding(verdict: dict, subject: str) -> dict:
    [found] = [f for f in verdict["findings"] if f["subject"] == subject]
    return found


def test_a_recording_with_no_node_is_not_proven_and_names_every_item(tmp_path):
    """The study's recorded Event alone: nothing of the plan can be judged; exit 5, never 0."""
    folder = fleets.write_case(tmp_path / "case", ecs={"events": fleets.event_list()})
    code, out, err = run_cli("verify", PLAN, "--from", str(folder), "--json")
    verdict = json.loads(out)["verify"]
    assert code == 5 and verdict["outcome"] == "not-proven" and not verdict["matches"], err
    subjects = [j["subject"] for j in verdict["unjudged"]]
    assert subjects == [j["subject"] for j in verdict["plan"]]
    assert {"node group p5", "node group system-*", NVIDIA, "MPIJob default/nccl-tests-p5 (Launcher)"} <= set(subjects)
    assert all(not j["judged"] and not j["matched"] and "no Kubernetes object was read" in j["reason"] for j in verdict["unjudged"])
    assert _finding(verdict, "the recording")["message"] == "events.json: not compared: 1 Event"
    code_text, text, _ = run_cli("verify", PLAN, "--from", str(folder))
    assert code_text == 5 and text.splitlines()[-1].startswith(f"not proven: {len(subjects)} of the plan's groups and workloads not judged")


def test_a_cluster_that_answers_with_no_node_is_short_of_every_node(tmp_path):
    """Live, an empty node list is what the cluster holds: a fleet short of the plan (exit 1)."""
    code, verdict, _, _ = _live(tmp_path, [{**fleets.event_list()["items"][0], "kind": "Event"}])
    assert code == 1 and verdict["outcome"] == "mismatch"
    assert _finding(verdict, "node group p5")["message"] == "0 of 2 desired nodes registered and Ready"


def test_a_crash_looping_device_plugin_is_named_with_its_pod_and_reason(tmp_path):
    """The recorded CrashLoopBackOff pod, made the NVIDIA plugin's pod on the second p5 node."""
    nodes = fleets.p5_fleet_nodes()
    items = fleets.p5_cluster(nodes, nvidia_ready=1)
    ds = next(i for i in items if i["kind"] == "DaemonSet" and i["metadata"]["namespace"] == "nvidia-device-plugin")
    name, node = f"{ds['metadata']['name']}-00001", nodes[1]["metadata"]["name"]
    owner = {"kind": "DaemonSet", "name": ds["metadata"]["name"], "uid": ds["metadata"]["uid"]}
    items = fleets.replace_item(items, name, fleets.as_pod_of(fleets.crashloop_pod(), "nvidia-device-plugin", name, node, owner))
    code, verdict = _both(tmp_path, items)
    plugin = _finding(verdict, NVIDIA)
    assert code == 1 and plugin["verdict"] == "mismatch"
    assert (
        f"not ready on {node} (pod {name}: container stress CrashLoopBackOff (back-off 5m0s restarting failed container=stress "
        "pod=frontend-service_default(d5d64096-dfff-4596-a955-e3e4a1bc6a1d)); 7 restart(s))" in plugin["message"]
    )
    [entry] = [j for j in verdict["plan"] if j["subject"] == NVIDIA]
    assert entry["judged"] and not entry["matched"] and "CrashLoopBackOff" in entry["reason"]


@pytest.mark.parametrize("latest_event, reason", [(False, "ErrImagePull"), (True, 'ImagePullBackOff (Back-off pulling image "yourcompany/crw:latest")')])
def test_a_deployment_whose_only_pod_cannot_pull_its_image(tmp_path, latest_event, reason):
    """The recorded pod that cannot pull its image, made the mpi-operator Deployment's only pod."""
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    old = next(i for i in items if i["metadata"]["name"].startswith("mpi-operator-"))
    name = "mpi-operator-5d98ffcfd-tz4nc"
    owner = {"kind": "ReplicaSet", "name": "mpi-operator-5d98ffcfd"}
    pod = fleets.as_pod_of(fleets.imagepull_pod(latest_event), "mpi-operator", name, old["spec"]["nodeName"], owner)
    code, verdict = _both(tmp_path, fleets.replace_item(items, old["metadata"]["name"], pod))
    finding = _finding(verdict, "Deployment mpi-operator/mpi-operator")
    assert code == 1 and finding["verdict"] == "mismatch"
    assert finding["message"] == f"1 of 1 pod(s) failing: pod {name}: container crw-main-container {reason}; the plan: on system-*"


def _launcher(status: str) -> dict:
    """aws-do-eks's recorded launcher pod, in the row's state, made nccl-tests-p5's launcher."""
    name, shown, restarts = fleets.launcher_row(status)
    pod = fleets.pod("default", name.replace("efa-info-test", "nccl-tests-p5"), None, ready=False,
                     labels={"training.kubeflow.org/job-name": "nccl-tests-p5", "training.kubeflow.org/job-role": "launcher"})
    # Completed is the pod phase Succeeded; a pod backing off its container is Running (as the
    # CrashLoopBackOff recording's `phase: Running`).
    pod["status"]["phase"] = "Succeeded" if shown == "Completed" else "Running"
    state = {"terminated": {"reason": "Completed"}} if shown == "Completed" else {"waiting": {"reason": shown}}
    pod["status"]["containerStatuses"] = [{"restartCount": restarts, "state": state}]
    return pod


def _with_launcher(launcher: dict) -> list[dict]:
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    system = items[3]["metadata"]["name"]
    launcher["spec"]["nodeName"] = system
    return fleets.replace_item(items, "nccl-tests-p5-launcher-zx9kq", launcher)


def test_a_finished_launcher_is_done_not_running(tmp_path):
    code, verdict = _both(tmp_path, _with_launcher(_launcher("Completed")))
    finding = _finding(verdict, "MPIJob default/nccl-tests-p5 (Launcher)")
    assert code == 0 and verdict["outcome"] == "match" and not verdict["unjudged"], verdict["unjudged"]
    assert finding["message"] == "1 completed on system-*; restarts: nccl-tests-p5-launcher-wm8pm 2; the plan: on system-*"
    assert all(j["judged"] and j["matched"] for j in verdict["plan"])


def test_a_launcher_backing_off_while_its_workers_start_is_not_proven(tmp_path):
    code, verdict = _both(tmp_path, _with_launcher(_launcher("CrashLoopBackOff")))
    finding = _finding(verdict, "MPIJob default/nccl-tests-p5 (Launcher)")
    assert code == 5 and finding["verdict"] == "not-judged"
    assert finding["message"].startswith("1 starting (pod nccl-tests-p5-launcher-wm8pm: a container CrashLoopBackOff; 1 restart(s)): not proven until Ready")
    assert [j["subject"] for j in verdict["unjudged"]] == ["MPIJob default/nccl-tests-p5 (Launcher)"]


def test_a_failed_launcher_is_named(tmp_path):
    """The CrashLoopBackOff recording's pod made the launcher, failed: its phase Failed and its
    container's state its own recorded last termination (Error, exit code 255)."""
    recorded = fleets.crashloop_pod()
    recorded["status"]["phase"] = "Failed"
    status = recorded["status"]["containerStatuses"][0]
    status["state"] = status["lastState"]
    labels = {"training.kubeflow.org/job-name": "nccl-tests-p5", "training.kubeflow.org/job-role": "launcher"}
    code, verdict = _both(tmp_path, _with_launcher(fleets.as_pod_of(recorded, "default", "nccl-tests-p5-launcher-x2k4p", "", labels=labels)))
    finding = _finding(verdict, "MPIJob default/nccl-tests-p5 (Launcher)")
    assert code == 1 and finding["verdict"] == "mismatch"
    assert "pod nccl-tests-p5-launcher-x2k4p: Failed: Failed; container stress terminated Error (exit code 255); 7 restart(s)" in finding["message"]


def test_an_item_nothing_judged_and_a_plan_with_no_item_are_not_proven():
    from gpufleet.verify.verdict import MATCH, NOTHING_COMPARED, Finding, PlanItem, Verdict

    verdict = Verdict("recorded x", [Finding("nodes", MATCH, "node group a", "ok", item="node group a")])
    verdict.items = [PlanItem("group", "node group a"), PlanItem("workload", "Deployment default/b")]
    assert verdict.outcome == "not-proven"
    assert [(j.item.subject, j.reason) for j in verdict.unjudged()] == [("Deployment default/b", NOTHING_COMPARED)]
    assert Verdict("recorded x", list(verdict.findings)).outcome == "not-proven"
