"""The NCCL gate (`gpufleet verify --nccl`): the launcher's log of the plan's MPIJob, read through the
Kubernetes client (the job found, its launcher pod's log) or from a recording, judged for who ran
(hosts, ranks), the network NCCL used (plugin, provider, NICs), the EFA devices every worker found,
and the bus bandwidth against the type's floor. Public recordings (tests/fixtures/verify/SOURCE.md)
are read unchanged; a case they lack is an edit made here, said where it is made."""

from __future__ import annotations

import json
import re

import pytest

from gpufleet.catalog import catalog
from gpufleet.plans.index import from_plan
from gpufleet.rules import nccl as nccl_rules
from gpufleet.verify import nccl_floors, nccl_gate, nccl_log
from tests.conftest import ROOT, run_cli
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


def _by_topic(found) -> dict[str, dict]:
    return {f["message"].split(":")[0]: f for f in found}


def _judge(log: str, instance_type: str | None = "p5.48xlarge", workers: int = 2, efa: int = 32, gpus: int = 8) -> dict:
    job = nccl_gate.NcclJob("urn:x", "nccl-tests-p5", "default", instance_type, workers, efa, {}, gpus)
    return {f.message.split(":")[0]: f for f in nccl_gate.judge(job, log, "launcher.log", catalog.load())}


# --- public recordings, unchanged (SOURCE.md) ------------------------------------------------------


def _p4d_log() -> str:
    """aws-efa-eks's MPIJob launcher log on 2 x p4d.24xlarge (README.md L124-L719 @867b482f): NCCL 2.9.9,
    the older table layout (no `root`, an `error` column), no NIC count on the provider line."""
    return fleets._lines(fleets.SOURCES / "aws-efa-eks-README.md", 124, 719)


def _single_node_p5_table() -> str:
    """awsome-distributed-training's AWS Batch table on p5.48xlarge (aws-batch/README.md L28-L65):
    busbw/algbw = 1.75, 8 ranks, one node."""
    return fleets._lines(fleets.SOURCES / "adt-aws-batch-README.md", 28, 65)


def _p4d_case(tmp_path, log: str):
    """The p4d run through the CLI: eks-p5-efa's plan and fleet with every p5.48xlarge named
    p4d.24xlarge and the MPIJob's workers asking 4 EFA, so the gate holds the real p4d log against a
    p4d job (an edit made here: the rest of the fleet is not what is under test)."""
    plan = json.loads(open(PLAN).read().replace("p5.48xlarge", "p4d.24xlarge"))
    [job] = [r for r in plan["resources"] if r["type"] == "kubernetes:kubeflow.org/v2beta1:MPIJob"]
    resources = job["inputs"]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]
    for key in ("limits", "requests"):
        resources[key]["vpc.amazonaws.com/efa"] = 4
    (tmp_path / "p4d.plan.json").write_text(json.dumps(plan))
    nodes = fleets.p5_fleet_nodes()
    for node in nodes[:2]:
        for label in ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"):
            node["metadata"]["labels"][label] = "p4d.24xlarge"
    folder = fleets.write_case(tmp_path / "case", fleets.p5_cluster(nodes), log)
    code, out, err = run_cli("verify", str(tmp_path / "p4d.plan.json"), "--from", str(folder), "--json", "--nccl")
    assert "Traceback" not in err, err
    return code, [f for f in json.loads(out)["verify"]["findings"] if f["check"] == "nccl"] if out else [], err


# --- edits made here, each said ----------------------------------------------------------------------


def _plugin_failed(log: str, failure: list[str]) -> str:
    """The p4d run as it reads when the OFI plugin is not found or does not start: on every rank the
    plugin's lines (every `NET/OFI` line) give way to `failure` in NCCL's or the plugin's words,
    and NCCL's network and channels become Socket's (NCCL's fallback). The table is left as it was."""
    out = []
    for line in log.splitlines():
        m = re.match(r"^(\[1,\d+\]<stdout>:\S+ \[\d+\]) NCCL INFO NET/OFI Selected Provider is efa$", line)
        if m:
            out += [f"{m[1]} {text}" for text in failure]
        elif "NET/OFI" not in line:
            out.append(
                line.replace("Using network AWS Libfabric", "Using network Socket").replace("via NET/AWS Libfabric/", "via NET/Socket/")
            )
    return "\n".join(out) + "\n"


# NCCL 2.9.9's words when libnccl-net.so is not there (NVIDIA/nccl v2.9.9-1 src/init.cc L76).
NOT_FOUND = ["NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation"]
# aws-ofi-nccl's words when it loads and does not start (aws/aws-ofi-nccl 2daf7d30 src/nccl_ofi_net.cpp
# L334 and L418, src/nccl_ofi_api.cpp L79).
DID_NOT_START = [
    "NCCL WARN NET/OFI Unable to find a protocol that worked.  Failing initialization.",
    "NCCL WARN NET/OFI aws-ofi-nccl initialization failed",
    "NCCL WARN NET/OFI Initializing plugin failed",
]


def _p5_log(nics: tuple[int, ...] = (32, 32), provider: str = "efa") -> str:
    """fleets.p5_run_log (the real 2 x p5 table after the provider lines written there), with a
    worker's NIC count or the provider edited."""
    log = fleets.p5_run_log()
    for i, n in enumerate(nics):
        log = log.replace(
            f"worker-{i}:31:31 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 32 nics)",
            f"worker-{i}:31:31 [0] NCCL INFO NET/OFI Selected provider is {provider}, fabric is efa (found {n} nics)",
        )
    return log


# --- through the real client path (live API, or a recording on disk) --------------------------------


def test_a_healthy_p5_run_passes_the_gate(tmp_path):
    code, found, err, requests = _gate(tmp_path, fleets.p5_run_log())
    assert code == 0, err
    assert f"/api/v1/namespaces/default/pods/{LAUNCHER}/log" in requests
    assert "/apis/kubeflow.org/v2beta1/namespaces/default/mpijobs/nccl-tests-p5" in requests
    topics = _by_topic(found)
    assert {f["verdict"] for f in found} == {"match"}
    assert topics["run"]["message"] == "run: 2 hosts (nccl-tests-p5-worker-0, nccl-tests-p5-worker-1)"
    assert topics["network"]["message"] == "network: Libfabric over efa"
    assert topics["NICs"]["message"] == "NICs: 32 per node on every host (the provider line's NIC count)"
    bandwidth = topics["bandwidth"]
    assert bandwidth["message"].startswith("bandwidth: 443.72 GB/s at 2147483648 bytes, at least the floor 394.97 GB/s (3200 Gbps EFA")
    assert bandwidth["expected"]["floorGBps"] == 394.97 and bandwidth["expected"]["efaGbps"] == 3200
    assert any("aws-do-eks @f721602f Container-Root/eks/deployment/nccl-test/README.md L99" in s for s in bandwidth["expected"]["sources"])
    assert bandwidth["observed"]["busbwGBps"] == 487.09 and bandwidth["urn"].endswith("MPIJob::p5-train-p5-nccl-tests")


def test_a_healthy_two_node_p4d_run_in_the_older_layout_passes_the_gate(tmp_path):
    """aws-efa-eks's real p4d run, unchanged: no `root` column, no NIC count on the provider line.
    Two hosts from its rank lines, 4 NICs from its channels, busbw above p4d's floor."""
    code, found, err = _p4d_case(tmp_path, _p4d_log())
    assert code == 0, err
    topics = _by_topic(found)
    assert {f["verdict"] for f in found} == {"match"}, found
    assert topics["run"]["message"] == "run: 2 hosts, 16 ranks (nccl-tests-efa-16-worker-0, nccl-tests-efa-16-worker-1)"
    assert topics["network"]["message"] == "network: AWS Libfabric over efa"
    assert topics["NICs"]["message"] == "NICs: 4 per node on every host (the network devices NCCL's channels use)"
    assert topics["bandwidth"]["message"].startswith("bandwidth: 42.48 GB/s at 1073741824 bytes, at least the floor 29.44 GB/s")


def test_a_run_that_fell_back_to_sockets_fails(tmp_path):
    """aws-do-eks's real run without EFA, unchanged: NCCL used the Socket network."""
    code, found, _, _ = _gate(tmp_path, fleets.socket_fallback_log())
    assert code == 1
    network = _by_topic(found)["network"]
    assert network["verdict"] == "mismatch" and network["observed"]["failure"] == "socket-fallback"
    assert "NCCL used network Socket, not Libfabric" in network["message"]


@pytest.mark.parametrize(
    "failure, words", [(NOT_FOUND, "No plugin found (libnccl-net.so)"), (DID_NOT_START, "aws-ofi-nccl initialization failed")]
)
def test_a_plugin_that_failed_to_load_is_named(tmp_path, failure, words):
    """No licensed public recording of a plugin failure was found: the real p4d run, edited (_plugin_failed)."""
    code, found, _ = _p4d_case(tmp_path, _plugin_failed(_p4d_log(), failure))
    assert code == 1
    network = _by_topic(found)["network"]
    assert network["verdict"] == "mismatch" and network["observed"]["failure"] == "plugin-failed"
    assert network["message"].startswith("network: the OFI plugin was not found or did not start (") and words in network["message"]
    assert "NCCL used network Socket, not Libfabric" in network["message"]


def test_a_single_node_run_fails_whatever_its_bandwidth(tmp_path):
    """awsome-distributed-training's AWS Batch p5 table, unchanged: 483 GB/s at 16 GiB over NVLink
    alone, 8 ranks (busbw/algbw = 1.75), where the plan's job runs 2 x 8."""
    code, found, _, _ = _gate(tmp_path, _single_node_p5_table())
    assert code == 1
    run = _by_topic(found)["run"]
    assert run["verdict"] == "mismatch" and run["observed"]["failure"] == "single-node" and run["observed"]["ranks"] == 8
    assert "8 ranks fit one node's 8 GPUs: a single-node run" in run["message"]
    assert _by_topic(found)["bandwidth"]["verdict"] == "not-judged"


def test_bandwidth_below_the_floor_fails_with_measured_floor_and_derivation(tmp_path):
    code, found, _, _ = _gate(tmp_path, fleets.p5_run_log(busbw_at_2g="250.12"))
    assert code == 1
    [bandwidth] = [f for f in found if f["verdict"] == "mismatch"]
    assert bandwidth["observed"]["failure"] == "below-floor" and bandwidth["observed"]["floorRowGBps"] == 250.12
    assert bandwidth["message"].startswith("bandwidth: bus bandwidth 250.12 GB/s at 2147483648 bytes, below the floor 394.97 GB/s")
    assert "x efficiency 1.097 (the lowest public run: 438.85 GB/s at 2147483648 bytes across 2 nodes) x margin 0.9" in bandwidth["message"]


def test_a_worker_short_of_efa_devices_stops_the_run_and_fails_the_gate(tmp_path):
    head = fleets.p5_run_log(efa_found=(32, 31)).split("[1,0]<stdout>:nccl-tests-p5-worker-0:31:31")[0]
    code, found, _, _ = _gate(tmp_path, head)
    assert code == 1
    stopped, precheck = found
    assert stopped["message"].startswith("the all-reduce did not run: the run printed no bus bandwidth table")
    assert precheck["message"] == "EFA pre-check: nccl-tests-p5-worker-1 found 31 of 32 EFA devices"


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


def test_a_plan_without_an_nccl_job_refuses_nccl(tmp_path):
    code, _, err = run_cli("verify", "eks-p3dn-efa", "--from", str(fleets.STUDY.parent), "--nccl")
    assert code == 2 and "the plan has no MPIJob that runs all_reduce_perf" in err


# --- the gate's rules, one case each ----------------------------------------------------------------


def test_a_wrong_provider_is_named():
    found = _judge(_p5_log(provider="tcp"))
    assert found["network"].verdict == "mismatch" and found["network"].observed["failure"] == "wrong-provider"
    assert found["network"].message == "network: the OFI plugin selected provider tcp, not efa"


def test_a_short_nic_count_is_named():
    found = _judge(_p5_log(nics=(32, 16)))
    assert found["NICs"].verdict == "mismatch" and found["NICs"].observed["failure"] == "short-nics"
    assert found["NICs"].message == "NICs: NCCL found nccl-tests-p5-worker-1 16 EFA NIC(s); the group has 32 per node"


def test_a_run_with_fewer_hosts_than_the_plans_workers_fails():
    found = _judge(_p4d_log(), "p4d.24xlarge", workers=4, efa=4)
    assert found["run"].verdict == "mismatch" and found["run"].observed["failure"] == "short-span"
    assert found["run"].message.startswith("run: the run spans 2 hosts; the plan's job has 4 workers")


def test_a_run_with_fewer_ranks_than_the_plans_gpus_fails():
    found = _judge(_p4d_log(), "p4d.24xlarge", efa=4, gpus=16)
    assert found["run"].verdict == "mismatch" and found["run"].message.startswith(
        "run: 16 ranks across 2 hosts; the plan's job runs 2 x 16 GPUs"
    )


def test_a_run_on_one_host_named_by_its_rank_lines_is_single_node():
    one_host = _p4d_log().replace("nccl-tests-efa-16-worker-1", "nccl-tests-efa-16-worker-0")
    found = _judge(one_host, "p4d.24xlarge", efa=4)
    assert found["run"].verdict == "mismatch" and found["run"].observed["failure"] == "single-node"


def test_a_log_that_proves_nothing_is_not_proven_through_the_client(tmp_path):
    """The same log through the real client path: exit 5 (not proven), never 0 and never 1."""
    code, found, err, _ = _gate(tmp_path, (fleets.SOURCES / "doeks-eks-gpu-efa-README.md").read_text())
    assert code == 5, err
    assert {f["verdict"] for f in found} == {"not-judged"}


def test_a_log_that_proves_nothing_is_not_judged_never_passed():
    """aws-do-eks's real 2 x p5 table (its README kept no NCCL line, no rank line): 16 ranks by
    busbw/algbw, but no host, network or provider in the log."""
    log = (fleets.SOURCES / "doeks-eks-gpu-efa-README.md").read_text()
    found = _judge(log)
    assert {name: f.verdict for name, f in found.items()} == {"run": "not-judged", "network": "not-judged", "bandwidth": "not-judged"}
    assert "several hosts are not proven" in found["run"].message


def test_an_older_plugin_without_a_nic_count_and_too_few_channel_devices_is_not_proven():
    found = _judge(_p4d_log().replace("via NET/AWS Libfabric/3/", "via NET/AWS Libfabric/2/"), "p4d.24xlarge", efa=4)
    assert found["NICs"].verdict == "not-judged" and "show fewer than 4: not proven" in found["NICs"].message


def test_the_older_plugins_network_name_is_the_pinned_one():
    """aws-ofi-nccl before 1.13 calls its network "AWS Libfabric" (NCCL_NET accepts both): the real
    g4dn.metal run, one EFA NIC per node, passes; it has no pre-check line, and needs none."""
    found = _judge(fleets.g4dn_efa_log(), "g4dn.metal", efa=1, gpus=1)
    assert {name: f.verdict for name, f in found.items()} == {"run": "match", "network": "match", "NICs": "match", "bandwidth": "match"}
    assert found["network"].message == "network: AWS Libfabric over efa"
    assert found["bandwidth"].observed == {"messageBytes": 1073741824, "busbwGBps": 3.11, "averageBusbwGBps": 1.15327, "floorRowGBps": 3.11}


@pytest.mark.parametrize("instance_type", ["p5e.48xlarge", "p6-b200.48xlarge", None])
def test_a_type_without_a_public_run_on_its_fabric_is_judged_on_evidence_alone(instance_type):
    assert nccl_rules.floor(catalog.load(), instance_type) is None
    found = _judge(fleets.p5_run_log(), instance_type)
    assert found["network"].verdict == "match" and found["run"].verdict == "match"
    bandwidth = found["bandwidth"]
    assert bandwidth.verdict == "not-judged" and "the bandwidth was not judged" in bandwidth.message and "487.09" in bandwidth.message


def test_the_floor_is_not_judged_beyond_the_node_counts_it_was_measured_on():
    four = fleets.p5_run_log()
    four += "".join(f"[1,{i}]<stdout>:nccl-tests-p5-worker-{i}:31:31 [0] NCCL INFO Using network Libfabric\n" for i in (2, 3))
    found = _judge(four, workers=4)
    assert found["bandwidth"].verdict == "not-judged" and "the floor holds across 2 to 2 nodes" in found["bandwidth"].message


def test_a_run_that_stops_short_of_the_floors_message_size_is_not_judged():
    log = "".join(
        line + "\n"
        for line in fleets.p5_run_log().splitlines()
        if not re.search(r"\s(2147483648|4294967296|8589934592|17179869184)\s", line)
    )
    bandwidth = _judge(log)["bandwidth"]
    assert bandwidth.verdict == "not-judged"
    assert "the floor is read at 2147483648 bytes; the run's largest message is 1073741824 bytes" in bandwidth.message


def test_a_worker_short_of_efa_in_a_run_that_went_on_fails_the_gate():
    """A job that is not gpufleet's may run past a short worker: its pre-check line still fails it."""
    found = _judge(fleets.p5_run_log(efa_found=(32, 30)))
    assert found["EFA pre-check"].verdict == "mismatch"
    assert found["EFA pre-check"].message == "EFA pre-check: nccl-tests-p5-worker-1 found 30 of 32 EFA devices"


def test_a_worker_that_never_reported_its_efa_devices_fails_the_gate():
    """One worker of two printed its pre-check line and the other none: the silent one is not
    proven to hold its EFA devices, whatever the rest of the log shows (issue 58)."""
    silent = "".join(line + "\n" for line in fleets.p5_run_log().splitlines() if "nccl-tests-p5-worker-1 found" not in line)
    precheck = _judge(silent)["EFA pre-check"]
    assert precheck.verdict == "mismatch"
    assert precheck.message == "EFA pre-check: 1 of 2 workers reported their EFA devices before the run"


def test_only_mpijobs_that_run_all_reduce_perf_are_the_gates():
    plan = json.loads(open(PLAN).read())
    [job] = [r for r in plan["resources"] if r["type"] == "kubernetes:kubeflow.org/v2beta1:MPIJob"]
    other = json.loads(json.dumps(job))
    other["urn"], other["inputs"]["metadata"]["name"] = job["urn"] + "-hello", "mpi-hello"
    other["inputs"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"] = ["mpirun", "hostname"]
    [found] = nccl_gate.jobs(from_plan({"resources": [other, job]}), catalog.load())
    assert (found.name, found.workers, found.efa_per_worker, found.gpus_per_worker, found.instance_type) == (
        "nccl-tests-p5",
        2,
        32,
        8,
        "p5.48xlarge",
    )


# --- the reader, on every layout the recordings hold -------------------------------------------------

LAYOUTS = {
    # file, first and last line, (rows, largest size, its out-of-place busbw, average, ranks, hosts)
    "2.0-2.10, no root, error column (aws-efa-eks @867b482f)": ("aws-efa-eks-README.md", 124, 719, (30, 4294967296, 43.81, 11.2432, 16, 2)),
    "2.0-2.10, NCCL 2.8.3 (aws-efa-eks @7809f1f2)": ("aws-efa-eks-README-7809f1f2.md", 1, 10**6, (28, 1073741824, 32.71, 7.80081, 16, 2)),
    "root and #wrong, size-0 rows, indented (aws-do-eks eks-gpu-efa)": (
        "doeks-eks-gpu-efa-README.md",
        1,
        10**6,
        (32, 2147483648, 444.31, 79.9352, None, 0),
    ),
    "Slurm labels (awsome-distributed-training)": ("adt-nccl-tests-README.md", 192, 225, (32, 17179869184, 487.09, None, None, 0)),
    "trailing spaces, one node (aws-batch)": ("adt-aws-batch-README.md", 28, 65, (32, 17179869184, 483.05, 156.742, None, 0)),
    "an author's ... line (topology-aware, p5en)": (
        "adt-topology-aware-nccl-tests-README.md",
        1,
        10**6,
        (3, 17179869184, 369.86, 84.0569, None, 0),
    ),
    "one-row excerpts (aws-do-eks nccl-test)": ("doeks-nccl-test-README.md", 95, 100, (1, 2147483648, 438.85, 53.2202, None, 1)),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_every_layout_reads_its_table_ranks_and_hosts(name):
    file, first, last, (rows, size, busbw, average, ranks, hosts) = LAYOUTS[name]
    run = nccl_log.parse(fleets._lines(fleets.SOURCES / file, first, last), fleets.GATE_MARKER)
    largest = run.largest
    assert largest is not None
    assert (len(run.rows), largest.size, largest.busbw, run.average) == (rows, size, busbw, average)
    assert (len(run.ranks) or None, len(run.hosts)) == (ranks, hosts)


def test_check_columns_turned_off_read_the_same():
    """`-c 0` prints N/A in the check columns (nccl-tests src/util.cu L510): the p5 table so edited."""
    table = fleets.p5_table()
    unchecked = re.sub(r"(\S+\s+\S+\s+\S+\s+)0(\s+\S+\s+\S+\s+\S+\s+)0$", r"\1N/A\2N/A", table, flags=re.M)
    assert unchecked.count("N/A") == 64
    assert nccl_log.parse(unchecked, fleets.GATE_MARKER).rows == nccl_log.parse(table, fleets.GATE_MARKER).rows


def test_the_collnet_symbol_lines_are_not_a_plugin_failure():
    """NCCL 2.9-2.19 prints "Failed to find ncclCollNetPlugin_vN symbol" with a working plugin (the real
    p4d and g4dn runs): CollNet is optional."""
    assert "ncclCollNetPlugin_v4" in _p4d_log()
    assert nccl_log.parse(_p4d_log(), fleets.GATE_MARKER).plugin_failures == ()


def test_the_g4dn_log_reads_its_provider_nics_and_table():
    run = nccl_log.parse(fleets.g4dn_efa_log(), fleets.GATE_MARKER)
    assert (
        {p for _, p, _ in run.providers} == {"efa"} and {n for _, _, n in run.providers} == {1} and set(run.networks) == {"AWS Libfabric"}
    )
    assert run.largest == nccl_log.Row(1073741824, 3.11, 3.11, 3.12) and run.average == 1.15327


# --- the floors: their figures are the recordings', and the doc is what the code derives ------------

# Where each cited run's repository file is kept here (SOURCE.md).
FIXTURE_OF = {
    "awsome-distributed-training @7217859f micro-benchmarks/nccl-tests/README.md": "adt-nccl-tests-README.md",
    "aws-do-eks @f721602f wd/conf/terraform/eks-gpu-efa/README.md": "doeks-eks-gpu-efa-README.md",
    "aws-do-eks @f721602f Container-Root/eks/deployment/nccl-test/README.md": "doeks-nccl-test-README.md",
    "awsome-distributed-training @7217859f micro-benchmarks/nccl-tests/slurm/topology-aware-nccl-tests/README.md": "adt-topology-aware-nccl-tests-README.md",
    "aws-efa-eks @867b482f README.md": "aws-efa-eks-README.md",
    "aws-efa-eks @7809f1f2 README.md": "aws-efa-eks-README-7809f1f2.md",
    "aws-do-eks @f721602f wd/conf/terraform/eks-efa/README.md": "doeks-eks-efa-README.md",
}


@pytest.mark.parametrize("run", catalog.load().facts.nccl_bandwidth.runs, ids=lambda r: f"{r.instance_type}-{r.busbw_gbps}")
def test_every_cited_run_is_the_line_it_cites(run):
    m = re.search(r"aws-samples/(?P<file>.+?) L(?P<line>\d+)\b", " ".join(run.source.split()))
    assert m, run.source
    line = (fleets.SOURCES / FIXTURE_OF[m["file"]]).read_text().splitlines()[int(m["line"]) - 1]
    cells = line.split()
    assert str(run.message_bytes) in cells and f"{run.busbw_gbps:.2f}" in cells, line


def test_the_floors_table_in_the_docs_is_what_the_code_derives():
    doc = (ROOT / "docs" / "verify.md").read_text()
    held = doc.split("<!-- nccl-floors: generated by python -m gpufleet.verify.nccl_floors -->\n", 1)[1].split("<!-- /nccl-floors -->", 1)[
        0
    ]
    assert held == nccl_floors.table(catalog.load()), "run `python -m gpufleet.verify.nccl_floors` and paste its table into docs/verify.md"


def test_every_efa_gpu_type_of_the_catalog_has_a_row():
    table = nccl_floors.table(catalog.load())
    names = [it.name for it in catalog.load().types.values() if it.efa_supported and it.gpu and it.gpu.manufacturer == "NVIDIA"]
    assert len(names) > 30 and all(f"| {name} |" in table for name in names)


def test_types_of_one_fabric_share_its_runs_and_floor():
    cat = catalog.load()
    p4d, p4de = nccl_rules.floor(cat, "p4d.24xlarge"), nccl_rules.floor(cat, "p4de.24xlarge")
    assert p4d is not None and p4de is not None and p4de.basis == p4d.basis and p4de.busbw_gbps == p4d.busbw_gbps == 29.44
    assert "on p4d.24xlarge, the same GPUs and EFA fabric" in p4de.derivation()
    p5en = nccl_rules.floor(cat, "p5en.48xlarge")
    assert p5en is not None and (p5en.max_nodes, p5en.busbw_gbps) == (16, 332.87)


# --- numbers that are no bandwidth, and logs shaped to make a reader slow (edits made here) ------------


def _strict_json(text: str):
    """JSON as RFC 8259 has it: Python's reader takes NaN and Infinity, which no other reader does."""

    def refuse(token: str):
        raise AssertionError(f"{token} in the JSON output")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf", "1e999", "NaN"])
def test_a_bandwidth_that_is_no_finite_number_fails_the_gate_naming_its_row(tmp_path, cell):
    """The 2 GiB row (the floor's) with a busbw float() reads as NaN or infinite: a NaN compares
    false with the floor, so it used to pass, and --json printed a NaN no JSON reader takes."""
    folder = fleets.write_case(tmp_path / "case", fleets.p5_cluster(fleets.p5_fleet_nodes()), fleets.p5_run_log(busbw_at_2g=cell))
    code, out, err = run_cli("verify", PLAN, "--from", str(folder), "--json", "--nccl")
    assert code == 1 and "Traceback" not in err, err
    found = [f for f in _strict_json(out)["verify"]["findings"] if f["check"] == "nccl"]
    [bandwidth] = [f for f in found if f["verdict"] == "mismatch"]
    assert bandwidth["observed"]["failure"] == "not-finite"
    assert bandwidth["message"] == f"bandwidth: not a finite number, so nothing was measured: the row of 2147483648 bytes: busbw {cell!r}"


@pytest.mark.parametrize(("average", "shown"), [("1.2.3", "'1.2.3'"), ("nan", "'nan'"), ("9" * 400, repr("9" * 24 + "..."))])
def test_an_average_that_is_no_finite_number_fails_the_gate_naming_the_line(average, shown):
    # The real table stops before nccl-tests' footer: its average line (src/util.cu L777) is added.
    log = fleets.p5_run_log() + f"0: # Out of bounds values : 0 OK\n0: # Avg bus bandwidth    : {average}\n"
    bandwidth = _judge(log)["bandwidth"]
    assert bandwidth.verdict == "mismatch"
    assert bandwidth.message == f"bandwidth: not a finite number, so nothing was measured: the '# Avg bus bandwidth' line: {shown}"


def test_a_table_of_a_hundred_thousand_rows_is_read_whole():
    """10^5 rows of small messages before the real ones: every row is read, the verdict is the
    largest row's and the floor row's, as in the table nccl-tests printed."""
    header = "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    rows = "".join(
        f"0:   {8 + i}     2     float     sum      -1    30.1    0.00    0.00      0    30.0    0.00    0.00      0\n"
        for i in range(100_000)
    )
    log = fleets.p5_run_log().replace(header, header + rows)
    run = nccl_log.parse(log, catalog.load().facts.charts.nccl_tests.efa_gate.marker)
    assert len(run.rows) == 100_000 + 32 and run.largest.size == 17179869184
    assert {f.verdict for f in _judge(log).values()} == {"match"}


_HOST = "[1,0]<stdout>:nccl-tests-p5-worker-0:31:31 [0] NCCL INFO "
_MEGA = 10**6


@pytest.mark.parametrize(
    "line",
    [
        # a run of spaces inside an NCCL line (the lazy text before `\s*$` tried it from each space)
        _HOST + "Using network" + " " * _MEGA + "Libfabric",
        _HOST + "comment" + " " * _MEGA + ".",
        # the plugin's prefix again and again (`NET/OFI .*(...)` from each one)
        _HOST + "NET/OFI " * (_MEGA // 8),
        # nccl-tests' network error's head again and again (`Error: network .* not found` from each)
        "Error: network " * (_MEGA // 15),
        # one cell of a megabyte in the table, and digits past what int() reads
        "0:   " + "9" * _MEGA + "     2     float     sum      -1    30.1    0.00    0.00      0",
        _HOST + "Channel 00/0 : 0[0] -> 1[0] [send] via NET/Libfabric/" + "7" * _MEGA,
        "[1,0]<stdout>:#  Rank  " + "1" * _MEGA + " Group  0 Pid 25 on HOST device  0",
        "x" * _MEGA,
    ],
    ids=["network-spaces", "text-spaces", "ofi-prefixes", "network-error-heads", "mega-cell", "mega-device", "mega-rank", "no-newline"],
)
def test_a_pathological_line_of_a_megabyte_leaves_the_verdict_as_it_was(line):
    """A log with one line of 10^6 characters and no newline in it, among the healthy run's lines:
    read in time linear in its length (each case here was quadratic, or crashed), and judged as
    the healthy run is. The test holds the verdict, not a time: a quadratic reader never returns."""
    log = fleets.p5_run_log()
    at = log.index("0: #       size")
    verdicts = _judge(log[:at] + line + "\n" + log[at:])
    network = "mismatch" if line.startswith(_HOST + "Using network") else "match"  # a network named "Libfabric" after spaces is another
    assert {topic: f.verdict for topic, f in verdicts.items()} == {
        "run": "match",
        "network": network,
        "NICs": "match",
        "bandwidth": "match",
    }
