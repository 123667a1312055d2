"""Dynamic Resource Allocation rules over the plan's placement (plans/placement.py, computed once
per stack and shared with the placement policies): a pod's resourceClaims are satisfied by a node of
the plan. The verdict is rules/dra.py's, the function the stack spec calls too."""

from __future__ import annotations

from pulumi_policy import ReportViolation, StackValidationArgs

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.plans.placement import PlanPlacement
from gpufleet.policies.placement import placement_of
from gpufleet.policies.registry import Policies
from gpufleet.rules import dra as dra_rules

POLICIES = Policies(__name__)


def _relevant(gap: str, cat: Catalog) -> bool:
    """A plan's gap that may hide a node or a device for a claim: any but the pods of the DRA driver
    charts whose DeviceClasses and devices gpufleet reads (their controller and kubelet plugin take
    no devices)."""
    return not any(gap.startswith("Helm release") and f"chart {c.chart} " in gap for c in cat.facts.dra.charts)


def _verdicts(found: PlanPlacement, cat: Catalog) -> list[tuple[str, dra_rules.Verdict]]:
    verdicts = []
    gaps = [g for g in found.gaps if _relevant(g, cat)]
    for p in found.pending_pods():
        verdict = dra_rules.claims_unsatisfied(p.pod.owner, bool(p.pod.claims), p.pending, p.message, [*gaps, *p.notes])
        if verdict is not None:
            verdicts.append((p.pod.urn or "", verdict))
    return verdicts


def _unjudged(args: StackValidationArgs) -> list[tuple[str, str]]:
    return [(urn, v.message) for urn, v in _verdicts(placement_of(args), catalog.load()) if not v.mandatory]


@POLICIES.stack("dra-claims-satisfiable", unjudged=_unjudged)
def _validate_claims(args: StackValidationArgs, report: ReportViolation) -> None:
    for urn, verdict in _verdicts(placement_of(args), catalog.load()):
        if verdict.mandatory:
            report(verdict.message, urn)
