"""The NCCL gate: the plan's all-reduce MPIJob, its launcher's log read, and the verdict recorded
against the job. A pass needs positive evidence from the log: several hosts, provider efa, the
group's NIC count and a busbw at least the type's floor (rules/nccl.py). A run on one host, a plugin
that failed, a fallback to sockets, another provider, a short NIC count or a busbw below the floor
is a failure, named; what the log does not show is not judged, never passed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.plans.index import Resource
from gpufleet.rules import nccl as nccl_rules
from gpufleet.verify import nccl_log
from gpufleet.verify.verdict import MATCH, MISMATCH, NOT_JUDGED, BadInput, Finding


@dataclass(frozen=True)
class NcclJob:
    """The plan's NCCL job: what its run should show."""

    urn: str
    name: str
    namespace: str
    instance_type: str | None
    workers: int
    efa_per_worker: int
    inputs: Mapping  # the MPIJob's inputs, to create it where it does not exist
    gpus_per_worker: int = 0  # its workers' nvidia.com/gpu limit (0: the plan gives none)

    @property
    def subject(self) -> str:
        return f"MPIJob {self.namespace}/{self.name}"


def jobs(resources: Sequence[Resource], cat: Catalog) -> list[NcclJob]:
    """The plan's MPIJobs that run all_reduce_perf, read from their inputs (any program's)."""
    found = []
    efa, gpu = cat.facts.eks.efa_resource, cat.facts.eks.accelerator_resources.nvidia
    for r in resources:
        if r.type != tokens.MPIJOB:
            continue
        inputs = r.props
        specs = (inputs.get("spec") or {}).get("mpiReplicaSpecs") or {}
        launcher = ((specs.get("Launcher") or {}).get("template") or {}).get("spec") or {}
        command = " ".join(str(a) for c in launcher.get("containers") or [] for a in (c.get("command") or []) + (c.get("args") or []))
        if "all_reduce_perf" not in command:
            continue
        worker = specs.get("Worker") or {}
        spec = (worker.get("template") or {}).get("spec") or {}
        limits = [((c.get("resources") or {}).get("limits") or {}) for c in spec.get("containers") or []]
        metadata = inputs.get("metadata") or {}
        found.append(
            NcclJob(
                r.urn,
                str(metadata.get("name") or r.name),
                str(metadata.get("namespace") or "default"),
                (spec.get("nodeSelector") or {}).get("node.kubernetes.io/instance-type"),
                int(worker.get("replicas") or 1),
                sum(int(lim.get(efa) or 0) for lim in limits),
                inputs,
                sum(int(lim.get(gpu) or 0) for lim in limits),
            )
        )
    return found


def judge(job: NcclJob, text: str | None, source: str, cat: Catalog) -> list[Finding]:
    """The gate's verdict on one run: who ran (hosts, ranks), the fabric (pre-check, plugin, network,
    provider, NICs) and the bandwidth against the type's floor. Each is proven from the log's own
    lines; what the log does not show is not judged, never passed."""
    gate = cat.facts.charts.nccl_tests.efa_gate
    if text is None:
        return [Finding("nccl", MISMATCH, job.subject, f"no run to judge: {source}", job.urn)]
    try:
        run = nccl_log.parse(text, gate.marker)
    except nccl_log.NotAnNcclLog as err:
        raise BadInput(f"{source}: {err}; expected the launcher log of an all_reduce_perf run (NCCL_DEBUG=INFO)") from None
    found = [_finding(job, verdict, message, **extra) for verdict, message, extra in _evidence(job, run, gate.net)]
    if not run.rows:
        why = run.failure or "the run printed no bus bandwidth table"
        stopped = _finding(job, MISMATCH, f"the all-reduce did not run: {why} (log: {source})", failure="no-run")
        return [stopped] + [f for f in found if f.verdict == MISMATCH]
    return found + [_bandwidth(job, run, cat)]


def _finding(
    job: NcclJob, verdict: str, message: str, failure: str | None = None, expected: object = None, observed: object = None
) -> Finding:
    if failure is not None:
        observed = {"failure": failure, **(observed if isinstance(observed, dict) else {})}
    return Finding("nccl", verdict, job.subject, message, job.urn, expected=expected, observed=observed)


_Evidence = tuple[str, str, dict]


def _evidence(job: NcclJob, run: nccl_log.NcclRun, net: str) -> list[_Evidence]:
    return [e for e in (_precheck(job, run), _span(job, run), _network(run, net), _nics(job, run)) if e is not None]


def _precheck(job: NcclJob, run: nccl_log.NcclRun) -> _Evidence | None:
    """gpufleet's job stops before the run when a worker is short; a job that is not gpufleet's has no
    such line, and the NIC count NCCL reports stands for it."""
    problems = nccl_rules.efa_check_problems(run.efa_checks, job.workers, job.efa_per_worker) if run.efa_checks else []
    return (MISMATCH, "EFA pre-check: " + "; ".join(problems), {"failure": "short-efa-devices"}) if problems else None


def _span(job: NcclJob, run: nccl_log.NcclRun) -> _Evidence:
    """Several hosts, from the log: nccl-tests' rank lines, else NCCL's own line prefixes."""
    hosts = sorted(run.hosts)
    observed = {"hosts": hosts, "ranks": len(run.ranks) or None, "gpusPerProcess": run.gpus_per_process}
    if hosts:
        problem = nccl_rules.span_problem(len(hosts), len(run.ranks), job.workers, job.gpus_per_worker)
        if problem:
            failure = "single-node" if len(hosts) == 1 else "short-span"
            return MISMATCH, f"run: {problem} ({', '.join(hosts)})", {"failure": failure, "observed": observed}
        ranks = f", {len(run.ranks)} ranks" if run.ranks else ""
        return MATCH, f"run: {len(hosts)} hosts{ranks} ({', '.join(hosts)})", {"observed": observed}
    inferred = run.inferred_ranks()
    problem = nccl_rules.ranks_problem(inferred, job.workers, job.gpus_per_worker) if inferred else None
    if problem:
        single = "single-node" if inferred and inferred <= job.gpus_per_worker else "short-span"
        return MISMATCH, f"run: {problem}", {"failure": single, "observed": {**observed, "ranks": inferred}}
    return NOT_JUDGED, "run: the log names no host (no '# Rank' line, no NCCL line): several hosts are not proven", {"observed": observed}


def _network(run: nccl_log.NcclRun, net: str) -> _Evidence:
    problem = nccl_rules.network_problem(run.networks, run.plugin_failures, net)
    observed = {"networks": sorted(set(run.networks)), "providers": sorted({p for _, p, _ in run.providers})}
    if problem:
        failure, reason = problem
        return MISMATCH, f"network: {reason}", {"failure": failure, "observed": observed}
    if not run.networks:
        return (
            NOT_JUDGED,
            "network: no 'Using network' line (NCCL_DEBUG=INFO was off, or the log was cut): the fabric is not proven",
            {"observed": observed},
        )
    wrong = nccl_rules.provider_problem(run.providers)
    if wrong:
        return MISMATCH, f"network: {wrong}", {"failure": "wrong-provider", "observed": observed}
    if not run.providers:
        return NOT_JUDGED, f"network: {', '.join(observed['networks'])}, but no provider line: EFA is not proven", {"observed": observed}
    return MATCH, f"network: {', '.join(observed['networks'])} over {nccl_rules.EFA_PROVIDER}", {"observed": observed}


def _nics(job: NcclJob, run: nccl_log.NcclRun) -> _Evidence | None:
    if not run.networks or not run.providers:
        return None  # the network finding already says the fabric is not proven
    counts, basis = nccl_rules.nic_counts(run.providers, run.net_devices)
    observed = {"nicsPerHost": counts, "from": basis}
    from_provider = any(n is not None for _, _, n in run.providers)
    short = {h: n for h, n in counts.items() if (n != job.efa_per_worker if from_provider else n < job.efa_per_worker)}
    if short and from_provider:
        named = ", ".join(f"{h} {n}" for h, n in sorted(short.items()))
        return (
            MISMATCH,
            f"NICs: NCCL found {named} EFA NIC(s); the group has {job.efa_per_worker} per node",
            {"failure": "short-nics", "observed": observed},
        )
    if short or not counts:
        return (
            NOT_JUDGED,
            f"NICs: the provider line gives no NIC count (an older OFI plugin), and {basis} show fewer than {job.efa_per_worker}: not proven",
            {"observed": observed},
        )
    return MATCH, f"NICs: {job.efa_per_worker} per node on every host ({basis})", {"observed": observed}


def _bandwidth(job: NcclJob, run: nccl_log.NcclRun, cat: Catalog) -> Finding:
    if run.bad_numbers:
        # A NaN compares false with any floor, and is no JSON: the run measured nothing to compare.
        return _finding(
            job,
            MISMATCH,
            f"bandwidth: not a finite number, so nothing was measured: {'; '.join(run.bad_numbers[:5])}",
            failure="not-finite",
            observed={"notFinite": list(run.bad_numbers[:5])},
        )
    largest = run.largest
    assert largest is not None  # judge returns before this when the run printed no table
    measured = {
        "messageBytes": largest.size,
        "busbwGBps": largest.busbw,
        **({"averageBusbwGBps": run.average} if run.average is not None else {}),
    }
    printed = f"bandwidth: {largest.busbw:g} GB/s at {largest.size} bytes"
    fl = nccl_rules.floor(cat, job.instance_type)
    if fl is None:
        it = cat.find(job.instance_type)
        bandwidth = f" (its EFA: {it.network_performance})" if it else ""
        why = (
            f"no public multi-node run on {job.instance_type}'s fabric gives an efficiency{bandwidth}"
            if job.instance_type
            else "the job names no instance type"
        )
        return _finding(
            job, NOT_JUDGED, f"{printed}; the bandwidth was not judged: {why}; the run is judged on its evidence alone", observed=measured
        )
    expected = {
        "floorGBps": fl.busbw_gbps,
        "messageBytes": fl.message_bytes,
        "maxNodes": fl.max_nodes,
        "efaGbps": fl.efa_gbps,
        "efficiency": round(fl.efficiency, 4),
        "margin": fl.margin,
        "derivation": fl.derivation(),
        "sources": fl.sources(),
    }
    at = {r.size: r.busbw for r in run.rows}
    measured |= {"floorRowGBps": at[fl.message_bytes]} if fl.message_bytes in at else {}
    nodes = len(run.hosts)
    if nodes < 2:
        return _finding(
            job,
            NOT_JUDGED,
            f"{printed}; not judged against the floor: the run is not proven to span several hosts",
            expected=expected,
            observed=measured,
        )
    problem, unjudged = nccl_rules.bandwidth_problem(at, nodes, fl)
    if problem:
        return _finding(
            job, MISMATCH, f"bandwidth: {problem} ({fl.derivation()})", failure="below-floor", expected=expected, observed=measured
        )
    if unjudged:
        return _finding(job, NOT_JUDGED, f"{printed}; not judged: {unjudged}", expected=expected, observed=measured)
    message = f"bandwidth: {at[fl.message_bytes]:g} GB/s at {fl.message_bytes} bytes, at least the floor {fl.busbw_gbps:g} GB/s ({fl.derivation()})"
    return _finding(job, MATCH, message, expected=expected, observed=measured)
