"""Dynamic Resource Allocation rules over the plan's placement (plans/placement.py, computed once
per stack and shared with the placement policies): a pod's resourceClaims are satisfied by a node of
the plan. The verdict is rules/dra.py's, the function the stack spec calls too. And what a DRA
install needs, read by plans/dra_install.py: the API version against the EKS clusters' Kubernetes
versions, one allocator per GPU, and a ComputeDomain for P6e-GB200 groups."""

from __future__ import annotations

from pulumi_policy import ReportViolation, StackValidationArgs

from gpufleet.catalog import catalog
from gpufleet.plans import dra_install
from gpufleet.plans import index as plan_index
from gpufleet.plans.placement import PlanPlacement
from gpufleet.policies.inputs import once_per_stack, plan_resources
from gpufleet.policies.placement import placement_of
from gpufleet.policies.registry import Policies
from gpufleet.rules import dra as dra_rules

POLICIES = Policies(__name__)


def _verdicts(found: PlanPlacement) -> list[tuple[str, dra_rules.Verdict]]:
    verdicts = []
    for p in found.pending_pods():
        unknowns = [*found.gaps, *p.notes]
        verdict = dra_rules.claims_unsatisfied(p.pod.owner, p.claims_refused, p.pending, p.message, found.certain(p), unknowns)
        if verdict is not None:
            verdicts.append((p.pod.urn or "", verdict))
    return verdicts


def _unjudged(args: StackValidationArgs) -> list[tuple[str, str]]:
    return [(urn, v.message) for urn, v in _verdicts(placement_of(args)) if not v.mandatory]


@POLICIES.stack("dra-claims-satisfiable", unjudged=_unjudged)
def _validate_claims(args: StackValidationArgs, report: ReportViolation) -> None:
    for urn, verdict in _verdicts(placement_of(args)):
        if verdict.mandatory:
            report(verdict.message, urn)


@once_per_stack
def _read(args: StackValidationArgs) -> dra_install.DraInstall:
    """The plan's DRA install, read once for the four policies that judge it (each read had cost a
    200-service ECS stack's AnalyzeStack about 8 ms)."""
    return dra_install.read(plan_index.Index(plan_resources(args)), catalog.load())


def _unknown_versions(args: StackValidationArgs) -> list[tuple[str, str]]:
    """DRA objects in a plan whose cluster (and so its version) the plan does not hold."""
    found = _read(args)
    if found.writes and not [v for _, v in found.clusters if v is not None]:
        return [
            (urn, f"it writes {api}, and no EKS or GKE cluster in the plan has a Kubernetes version known before apply to judge it by")
            for urn, api in found.writes
        ]
    return []


@POLICIES.stack("dra-api-version", unjudged=_unknown_versions)
def _validate_api_version(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    found, facts = _read(args), cat.facts.dra
    for urn, api in found.writes:
        for _, version in found.clusters:
            reason = dra_rules.api_version_problem(api, version, facts) if version is not None else None
            if reason:
                report(reason, urn)


@POLICIES.stack("dra-one-allocator")
def _validate_one_allocator(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    for group in _read(args).groups:
        reason = dra_rules.two_allocators_problem(group.device_plugin, group.dra_driver, cat.facts.dra)
        if reason:
            report(f"node group {group.name!r}: {reason}", group.urn)


@POLICIES.stack("dra-gb200-compute-domain")
def _validate_compute_domain(args: StackValidationArgs, report: ReportViolation) -> None:
    cat = catalog.load()
    found = _read(args)
    for urn, name, instance_type in found.typed_groups:
        reason = dra_rules.compute_domain_problem(instance_type, found.compute_domains > 0, cat.facts.dra)
        if reason:
            report(f"node group {name!r}: {reason}", urn)
