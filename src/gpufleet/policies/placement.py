"""Placement rules: every pod template has a node and every task an instance to run on, as the
placement simulator (src/gpufleet/plans/placement.py, the functions the stack spec calls)
finds them in the plan. A verdict the plan cannot decide (an existing cluster's other node groups, a
fact assumed, memory that may be tight) goes to the advisory policy with what is missing."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pulumi_policy import ReportViolation, StackValidationArgs

from gpufleet.catalog import catalog
from gpufleet.plans import placement as plan_placement
from gpufleet.policies.inputs import once_per_stack, plan_resources
from gpufleet.policies.registry import Policies
from gpufleet.rules import karpenter as karpenter_rules
from gpufleet.simulate import k8s_scheduler

POLICIES = Policies(__name__)


@once_per_stack
def placement_of(args: StackValidationArgs) -> plan_placement.PlanPlacement:
    """The stack's placement, worked out once for the policies that read it (four judge one stack)."""
    found = plan_placement.placement(plan_resources(args))
    out = os.environ.get(plan_placement.PLACEMENT_OUT)
    if out:
        # Written whole, then renamed: the engine never reads half a placement.
        partial = Path(out + ".partial")
        partial.write_text(json.dumps(found.as_dict()))
        partial.replace(out)
    return found


def _pod_message(p: k8s_scheduler.Placement) -> str:
    if p.pod.replicas and p.pod.replicas > 1:
        return f"{p.pod.owner}: {p.pending} of {p.pod.replicas} replicas stay Pending: {p.message}"
    return f"{p.pod.owner}: the pod stays Pending: {p.message}"


@POLICIES.stack("k8s-pods-schedulable")
def _validate_pods(args: StackValidationArgs, report: ReportViolation) -> None:
    found = placement_of(args)
    for p in found.pending_pods():
        if found.certain(p):
            report(_pod_message(p), p.pod.urn)
    if not found.gaps:
        for p, shape, wanted in found.unserved():
            report(k8s_scheduler.unserved_message(p, shape, wanted), p.pod.urn)


@POLICIES.stack("ecs-tasks-placeable")
def _validate_tasks(args: StackValidationArgs, report: ReportViolation) -> None:
    found = placement_of(args)
    for t in found.pending_tasks():
        if found.certain(t):
            what = f"service of {t.desired} tasks" if t.desired is not None else "task"
            report(f"{t.task.family} ({what}) is never placed: {t.reason}", t.task.urn)


@POLICIES.stack("placement-unverified")
def _validate_unverified(args: StackValidationArgs, report: ReportViolation) -> None:
    found = placement_of(args)
    gaps = f" ({'; '.join(found.gaps)})" if found.gaps else ""
    for p in found.pods:
        if p.status == k8s_scheduler.PENDING and not found.certain(p):
            report(f"{_pod_message(p)}; not certain{gaps}: {'; '.join(p.notes) or 'the plan is incomplete'}", p.pod.urn)
        elif p.status == k8s_scheduler.AFTER_SCALE_UP:
            report(
                f"{p.pod.owner} is placeable only after scale-up ({k8s_scheduler.new_nodes(p.scaled_up)}): a cluster autoscaler or a larger desiredSize adds them",
                p.pod.urn,
            )
        elif p.notes:
            report(f"{p.pod.owner}: {'; '.join(p.notes)}", p.pod.urn)
    for t in found.tasks:
        if t.status == "pending" and not found.certain(t):
            report(f"{t.task.family} may never be placed{gaps}: {t.reason}; {'; '.join(t.notes)}", t.task.urn)
        elif t.notes:
            report(f"{t.task.family}: {'; '.join(t.notes)}", t.task.urn)


@POLICIES.stack("karpenter-batch-pods-not-disrupted")
def _validate_batch_pods(args: StackValidationArgs, report: ReportViolation) -> None:
    found = placement_of(args)
    consolidation = {p.name: p.consolidation for p in found.pools}
    facts = catalog.load().facts.karpenter
    for p in found.pods:
        for pool in sorted({launch["nodePool"] for launch in p.provisioned}):
            reason = karpenter_rules.batch_pod_consolidated(
                p.pod.owner.split(" ", 1)[0], p.pod.annotations, consolidation.get(pool, ""), facts
            )
            if reason:
                report(f"{p.pod.owner} on NodePool {pool}: {reason}", p.pod.urn)
