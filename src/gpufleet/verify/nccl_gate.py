"""The NCCL gate: the plan's all-reduce MPIJob, its launcher's log read, and the verdict recorded
against the job. It fails closed: a log that shows no run over the fabric, a worker short of EFA
devices, or a network other than the pinned one is a failure, never a pass."""

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

    @property
    def subject(self) -> str:
        return f"MPIJob {self.namespace}/{self.name}"


def jobs(resources: Sequence[Resource], cat: Catalog) -> list[NcclJob]:
    """The plan's MPIJobs that run all_reduce_perf, read from their inputs (any program's)."""
    found = []
    efa = cat.facts.eks.efa_resource
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
            )
        )
    return found


def judge(job: NcclJob, text: str | None, source: str, cat: Catalog) -> list[Finding]:
    """The gate's verdict on one run: its fabric (pre-check, network, NICs) and its bandwidth."""
    facts = cat.facts
    gate = facts.charts.nccl_tests.efa_gate
    if text is None:
        return [Finding("nccl", MISMATCH, job.subject, f"no run to judge: {source}", job.urn)]
    try:
        run = nccl_log.parse(text, gate.marker)
    except nccl_log.NotAnNcclLog as err:
        raise BadInput(f"{source}: {err}; expected the launcher log of an all_reduce_perf run (NCCL_DEBUG=INFO)") from None
    found = []
    problems = nccl_rules.efa_check_problems(run.efa_checks, job.workers, job.efa_per_worker) if run.efa_checks else []
    if not run.rows:
        why = run.failure or (problems[0] if problems else "the run printed no bus bandwidth table")
        found.append(Finding("nccl", MISMATCH, job.subject, f"the all-reduce did not run: {why} (log: {source})", job.urn))
        return found
    if problems:
        found.append(Finding("nccl", MISMATCH, job.subject, "EFA pre-check: " + "; ".join(problems), job.urn))
    elif not run.efa_checks:
        found.append(
            Finding(
                "nccl",
                NOT_JUDGED,
                job.subject,
                f"the log holds no EFA pre-check line ({gate.marker}): a job gpufleet did not write",
                job.urn,
            )
        )
    network = nccl_rules.network_problem(run.networks, run.providers, gate.net, job.efa_per_worker)
    if network:
        found.append(Finding("nccl", MISMATCH, job.subject, f"network: {network}", job.urn, observed=sorted(set(run.networks))))
    elif not any(n is not None for _, n in run.providers):
        found.append(
            Finding(
                "nccl",
                NOT_JUDGED,
                job.subject,
                "network: the provider line gives no NIC count (an OFI plugin before 1.x reports none)",
                job.urn,
            )
        )
    else:
        found.append(
            Finding(
                "nccl",
                MATCH,
                job.subject,
                f"network: {', '.join(sorted(set(run.networks)))} over {nccl_rules.EFA_PROVIDER}, {job.efa_per_worker} NIC(s) per node",
                job.urn,
            )
        )
    largest = run.largest
    assert largest is not None  # run.rows is not empty (returned above when it is)
    size, busbw, _ = largest
    measured = {"messageBytes": size, "busbwGBps": busbw, **({"averageBusbwGBps": run.average} if run.average is not None else {})}
    threshold = facts.nccl_bandwidth.thresholds.get(job.instance_type or "")
    if threshold is None:
        message = f"bandwidth: {busbw:g} GB/s at {size} bytes; no published threshold for {job.instance_type or 'its instance type'}: printed, not judged"
        found.append(Finding("nccl", NOT_JUDGED, job.subject, message, job.urn, observed=measured))
        return found
    expected = {
        "busbwGBps": threshold.busbw_gbps,
        "tolerance": threshold.tolerance,
        "messageBytes": threshold.message_bytes,
        "source": threshold.source,
    }
    problem, unjudged = nccl_rules.bandwidth_problem(run.rows, threshold, job.workers)
    if problem:
        found.append(Finding("nccl", MISMATCH, job.subject, f"bandwidth: {problem}", job.urn, expected=expected, observed=measured))
    elif unjudged:
        found.append(
            Finding(
                "nccl",
                NOT_JUDGED,
                job.subject,
                f"bandwidth: {busbw:g} GB/s at {size} bytes; not judged: {unjudged}",
                job.urn,
                expected=expected,
                observed=measured,
            )
        )
    else:
        row = next(r for r in run.rows if r[0] == threshold.message_bytes)
        message = f"bandwidth: {row[1]:g} GB/s at {row[0]} bytes, at least {threshold.busbw_gbps * threshold.tolerance:g} GB/s"
        found.append(Finding("nccl", MATCH, job.subject, message, job.urn, expected=expected, observed=measured))
    return found
