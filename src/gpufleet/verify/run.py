"""One verification: the plan's resources, what was observed, and (with the gate) the NCCL runs,
into one verdict. Reads nothing itself: the CLI hands it the plan and the fleet."""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.catalog.catalog import Catalog
from gpufleet.plans import placement as plan_placement
from gpufleet.plans.groups import accelerated_groups
from gpufleet.plans.index import Resource
from gpufleet.verify import ecs_checks, kube_checks, nccl_gate
from gpufleet.verify.fleet import Observed
from gpufleet.verify.verdict import NOT_JUDGED, Finding, Verdict


def verify(
    resources: Sequence[Resource],
    observed: Observed,
    ecs_cluster: str | None,
    nccl_runs: list[tuple[nccl_gate.NcclJob, str | None, str]] | None,
    cat: Catalog,
) -> Verdict:
    """`resources`: the plan's, typed (plans.index.from_plan)."""
    placement = plan_placement.placement(resources, cat)
    groups = list(accelerated_groups(resources, cat).values())
    verdict = Verdict(observed.where)
    kube_planned = bool(placement.shapes or placement.pools)
    if observed.kube is not None:
        verdict.findings += kube_checks.check(placement, observed.kube, {g.name: g.urn for g in groups}, cat)
    elif kube_planned:
        verdict.findings.append(
            Finding(
                "nodes",
                NOT_JUDGED,
                "Kubernetes nodes",
                "the plan has Kubernetes node groups; none were read (--context NAME, or a recording)",
            )
        )
    ecs_groups = [g for g in groups if g.platform == "ecs"]
    if observed.ecs is not None:
        verdict.findings += ecs_checks.check(resources, ecs_groups, observed.ecs, ecs_cluster or "<cluster>", cat)
    elif ecs_groups:
        verdict.findings.append(
            Finding(
                "ecs-instances",
                NOT_JUDGED,
                "ECS capacity providers",
                "the plan has ECS capacity providers; none were read (--region REGION, or a recording)",
            )
        )
    for gap in placement.gaps:
        verdict.findings.append(Finding("plan", NOT_JUDGED, "the plan", f"the plan's own gap: {gap}"))
    for gap in observed.gaps:
        verdict.findings.append(Finding("recording", NOT_JUDGED, "the recording", gap))
    for job, text, source in nccl_runs or []:
        verdict.findings += nccl_gate.judge(job, text, source, cat)
    return verdict
