"""The NCCL gate (`gpufleet verify --nccl`): the launcher's log of the plan's MPIJob, read through the
Kubernetes client (the job found, its launcher pod's log) or from a recording, judged for the
network NCCL used, the EFA devices every worker found, and the bus bandwidth against the type's
published threshold. It fails closed."""

from __future__ import annotations

import json
import re

import pytest

from gpufleet.catalog import catalog
from gpufleet.plans.index import from_plan
from gpufleet.verify import nccl_gate, nccl_log
from tests.conftest import run_cli
from tests.verify import fleets
from tests.verify.test_verify_kube import PLAN, _live, _recorded

LAUNCHER = "nccl-tests-p5-launcher-zx9kq"


def _job() -> dict:
    plan = json.loads(open(PLAN).read())
    [job] = [r for r in plan["resources"] if r["type"] == "kubernetes:kubeflow.org/v2beta1:MPIJob"]
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", **job["inputs"]}


def _gate(tmp_path, log: str, *flags):
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    code, verdict, err, requests = _live(tmp_path, items, "--nccl", *flags, logs={LAUNCHER: log}, mpijobs=[_job()])
    return code, [f for f in (verdict or {}).get("findings", []) if f["check"] == "nccl"], err, requests


def test_a_healthy_p5_run_passes_the_gate(tmp_path):
    code, found, err, requests = _gate(tmp_path, fleets.p5_run_log())
    assert code == 0, err
    assert f"/api/v1/namespaces/default/pods/{LAUNCHER}/log" in requests
    assert "/apis/kubeflow.org/v2beta1/namespaces/default/mpijobs/nccl-tests-p5" in requests
    network = next(f for f in found if f["message"].startswith("network"))
    bandwidth = next(f for f in found if f["message"].startswith("bandwidth"))
    assert network["verdict"] == "match" and "Libfabric over efa, 32 NIC(s) per node" in network["message"]
    assert bandwidth["verdict"] == "match" and bandwidth["observed"]["busbwGBps"] == 487.09
    assert bandwidth["message"] == "bandwidth: 487.09 GB/s at 17179869184 bytes, at least 270 GB/s"
    assert bandwidth["expected"]["busbwGBps"] == 300 and "NVIDIA/aicr" in bandwidth["expected"]["source"]
    assert bandwidth["urn"].endswith("MPIJob::p5-train-p5-nccl-tests")


def test_a_run_that_fell_back_to_sockets_fails(tmp_path):
    """aws-do-eks's real run without EFA, unchanged: NCCL used the Socket network."""
    code, found, _, _ = _gate(tmp_path, fleets.socket_fallback_log())
    assert code == 1
    [network] = [f for f in found if f["message"].startswith("network")]
    assert network["verdict"] == "mismatch" and "NCCL used network Socket, not Libfabric" in network["message"]


def test_bandwidth_below_the_threshold_fails_with_measured_and_expected(tmp_path):
    code, found, _, _ = _gate(tmp_path, fleets.p5_run_log(busbw_at_16g="250.12"))
    assert code == 1
    [bandwidth] = [f for f in found if f["verdict"] == "mismatch"]
    assert "bus bandwidth 250.12 GB/s at 17179869184 bytes, below 270 GB/s (300 x 0.9)" in bandwidth["message"]
    assert bandwidth["observed"]["busbwGBps"] == 250.12 and bandwidth["expected"]["tolerance"] == 0.9


def test_a_worker_short_of_efa_devices_stops_the_run_and_fails_the_gate(tmp_path):
    head = fleets.p5_run_log(efa_found=(32, 31)).split("[1,0]<stdout>:nccl-tests-p5-worker-0:31:31")[0]
    code, found, _, _ = _gate(tmp_path, head)
    assert code == 1
    [finding] = found
    assert "the all-reduce did not run: nccl-tests-p5-worker-1 found 31 of 32 EFA devices" in finding["message"]


def test_the_pinned_network_missing_fails_instead_of_falling_back(tmp_path):
    # NCCL 2.27+'s words when no plugin of NCCL_NET's name starts (src/plugin/net.cc L334).
    log = "[1,0]<stdout>:nccl-tests-p5-worker-0:31:31 [0] NCCL WARN Failed to initialize any NET plugin\n"
    code, found, _, _ = _gate(tmp_path, log)
    assert code == 1 and "Failed to initialize any NET plugin" in found[0]["message"]


def test_a_launcher_that_does_not_end_within_the_wait_fails_closed(tmp_path):
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    launcher = next(i for i in items if i["metadata"]["name"] == LAUNCHER)
    launcher["status"]["phase"] = "Running"
    code, verdict, _, _ = _live(tmp_path, items, "--nccl", "--wait", "0.2", logs={}, mpijobs=[_job()])
    assert code == 1
    [finding] = [f for f in verdict["findings"] if f["check"] == "nccl"]
    assert "its launcher had not ended after 0.2 s" in finding["message"] and LAUNCHER in finding["message"]


def test_a_recorded_log_is_judged_the_same(tmp_path):
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    code, verdict, _ = _recorded(tmp_path, items, "--nccl", log=fleets.socket_fallback_log())
    assert code == 1 and any("Socket" in f["message"] for f in verdict["findings"] if f["check"] == "nccl")


def test_a_log_with_no_nccl_table_is_bad_input_naming_the_file(tmp_path):
    not_a_log = (fleets.SOURCES / "adt-stable-diffusion-README.md").read_text()
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    code, verdict, err = _recorded(tmp_path, items, "--nccl", log=not_a_log)
    assert code == 2 and verdict is None
    assert "launcher.log: no all_reduce_perf bus bandwidth table and no NCCL line" in err and "expected the launcher log" in err


def test_nccl_with_a_recording_that_has_no_log_is_bad_input(tmp_path):
    code, _, err = _recorded(tmp_path, fleets.p5_cluster(fleets.p5_fleet_nodes()), "--nccl")
    assert code == 2 and "--nccl needs the launcher's log" in err


def test_the_real_g4dn_log_reads_its_provider_nics_and_table():
    run = nccl_log.parse(fleets.g4dn_efa_log(), fleets.GATE_MARKER)
    assert set(run.providers) == {("efa", 1)} and set(run.networks) == {"AWS Libfabric"}
    assert run.largest == (1073741824, 3.11, 3.12) and run.average == 1.15327


@pytest.mark.parametrize("instance_type", ["p5en.48xlarge", "p4d.24xlarge", None])
def test_a_type_without_a_published_threshold_is_printed_not_judged(instance_type):
    assert instance_type not in catalog.load().facts.nccl_bandwidth.thresholds
    job = nccl_gate.NcclJob("urn:x", "nccl-tests-p5", "default", instance_type, 2, 32, {})
    found = nccl_gate.judge(job, fleets.p5_run_log(), "launcher.log", catalog.load())
    [bandwidth] = [f for f in found if f.message.startswith("bandwidth")]
    assert bandwidth.verdict == "not-judged" and "no published threshold" in bandwidth.message and "487.09" in bandwidth.message


def test_the_threshold_is_not_judged_below_its_node_count():
    job = nccl_gate.NcclJob("urn:x", "nccl-tests-p5", "default", "p5.48xlarge", 1, 32, {})
    log = fleets.p5_run_log(busbw_at_16g="100.00", efa_found=(32,))
    [bandwidth] = [f for f in nccl_gate.judge(job, log, "launcher.log", catalog.load()) if f.message.startswith("bandwidth")]
    assert bandwidth.verdict == "not-judged" and "across 2 nodes or more" in bandwidth.message


def test_a_plan_without_an_nccl_job_refuses_nccl(tmp_path):
    code, _, err = run_cli("verify", "eks-p3dn-efa", "--from", str(fleets.STUDY.parent), "--nccl")
    assert code == 2 and "the plan has no MPIJob that runs all_reduce_perf" in err


def test_the_older_plugins_network_name_is_the_pinned_one():
    """aws-ofi-nccl before 1.13 calls its network "AWS Libfabric" (NCCL_NET accepts both): the real
    g4dn.metal run, one EFA NIC per node, passes the network check; it has no pre-check line."""
    job = nccl_gate.NcclJob("urn:x", "test-nccl-efa", "default", "g4dn.metal", 2, 1, {})
    found = {f.message.split(":")[0]: f for f in nccl_gate.judge(job, fleets.g4dn_efa_log(), "launcher.log", catalog.load())}
    assert found["network"].verdict == "match" and "AWS Libfabric over efa, 1 NIC(s) per node" in found["network"].message
    assert found["the log holds no EFA pre-check line (gpufleet-efa-check)"].verdict == "not-judged"
    assert found["bandwidth"].observed == {"messageBytes": 1073741824, "busbwGBps": 3.11, "averageBusbwGBps": 1.15327}


def test_a_worker_short_of_efa_in_a_run_that_went_on_fails_the_gate():
    """A job that is not gpufleet's may run past a short worker: its pre-check line still fails it."""
    job = nccl_gate.NcclJob("urn:x", "nccl-tests-p5", "default", "p5.48xlarge", 2, 32, {})
    found = nccl_gate.judge(job, fleets.p5_run_log(efa_found=(32, 30)), "launcher.log", catalog.load())
    [check] = [f for f in found if f.message.startswith("EFA pre-check")]
    assert check.verdict == "mismatch" and check.message == "EFA pre-check: nccl-tests-p5-worker-1 found 30 of 32 EFA devices"


def test_only_mpijobs_that_run_all_reduce_perf_are_the_gates():
    plan = json.loads(open(PLAN).read())
    [job] = [r for r in plan["resources"] if r["type"] == "kubernetes:kubeflow.org/v2beta1:MPIJob"]
    other = json.loads(json.dumps(job))
    other["urn"], other["inputs"]["metadata"]["name"] = job["urn"] + "-hello", "mpi-hello"
    other["inputs"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"] = ["mpirun", "hostname"]
    [found] = nccl_gate.jobs(from_plan({"resources": [other, job]}), catalog.load())
    assert (found.name, found.workers, found.efa_per_worker, found.instance_type) == ("nccl-tests-p5", 2, 32, "p5.48xlarge")


def test_a_run_that_stops_short_of_the_thresholds_message_size_is_not_judged():
    log = "".join(line + "\n" for line in fleets.p5_run_log().splitlines() if not re.search(r"\s(4294967296|8589934592|17179869184)\s", line))
    job = nccl_gate.NcclJob("urn:x", "nccl-tests-p5", "default", "p5.48xlarge", 2, 32, {})
    [bandwidth] = [f for f in nccl_gate.judge(job, log, "launcher.log", catalog.load()) if f.message.startswith("bandwidth")]
    assert bandwidth.verdict == "not-judged"
    assert "the run's largest message is 2147483648 bytes; the threshold is read at 17179869184" in bandwidth.message
