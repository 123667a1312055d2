"""One verification: the plan's resources, what was observed, and (with the gate) the NCCL runs,
into one verdict. Reads nothing itself: the CLI hands it the plan and the fleet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gpufleet.catalog.catalog import Catalog
from gpufleet.plans import dra as plan_dra
from gpufleet.plans import placement as plan_placement
from gpufleet.plans.groups import accelerated_groups
from gpufleet.plans.index import Index, Resource
from gpufleet.plans.releases import release_daemonsets
from gpufleet.verify import dra_checks, ecs_checks, kube_checks, nccl_gate
from gpufleet.verify.fleet import Observed
from gpufleet.verify.verdict import NOT_JUDGED, Finding, PlanItem, Verdict


def verify(
    resources: Sequence[Resource],
    observed: Observed,
    ecs_cluster: str | None,
    nccl_runs: list[tuple[nccl_gate.NcclJob, str | None, str]] | None,
    cat: Catalog,
) -> Verdict:
    """`resources`: the plan's, typed (plans.index.from_plan). The verdict carries the plan's items
    (groups, placed workloads, the NCCL jobs judged, the plan's own gaps) so that its outcome is a
    match only when every one was judged and matched."""
    placement = plan_placement.placement(resources, cat)
    groups = list(accelerated_groups(resources, cat).values())
    urns = {g.name: g.urn for g in groups}
    ecs_groups = [g for g in groups if g.platform == "ecs"]
    verdict = Verdict(observed.where)
    verdict.items += kube_checks.items(placement, urns) + ecs_checks.items(resources, ecs_groups)
    if observed.kube is not None:
        index = Index(resources)
        verdict.findings += kube_checks.check(placement, observed.kube, urns, cat, release_daemonsets(index, cat))
        verdict.findings += dra_checks.check(placement, observed.kube, urns, cat, plan_dra.world(index, cat)[0])
    else:
        reason = "no Kubernetes object was read (--context NAME, or a recording of `kubectl get nodes,pods,daemonsets -A -o json`)"
        verdict.findings += kube_checks.unjudged(placement, urns, reason)
    if observed.ecs is not None:
        verdict.findings += ecs_checks.check(resources, ecs_groups, observed.ecs, ecs_cluster or "<cluster>", cat)
    else:
        reason = "no ECS description was read (--region REGION, or a recording of `aws ecs describe-container-instances`)"
        verdict.findings += ecs_checks.unjudged(resources, ecs_groups, reason)
    for gap in placement.gaps:
        item = PlanItem("gap", f"the plan: {gap}")
        verdict.items.append(item)
        verdict.findings.append(Finding("plan", NOT_JUDGED, "the plan", f"the plan's own gap: {gap}", item=item.subject))
    for gap in observed.gaps:
        verdict.findings.append(Finding("recording", NOT_JUDGED, "the recording", gap))
    for job, text, source in nccl_runs or []:
        # The gate's findings name the job; they are the job's items here (nccl_gate is not told).
        verdict.items.append(PlanItem("workload", f"fabric gate: {job.subject}", job.urn))
        verdict.findings += [replace(f, item=f"fabric gate: {job.subject}") for f in nccl_gate.judge(job, text, source, cat)]
    return verdict
