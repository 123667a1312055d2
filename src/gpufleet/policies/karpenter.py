"""Karpenter NodePool rules on any program's `karpenter.sh/v1` NodePools, read as the provisioning
simulation reads them (src/gpufleet/plans/karpenter.py) and judged by the rule functions the stack
spec calls (src/gpufleet/rules/karpenter.py)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pulumi
from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.apis import karpenter as karpenter_api
from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.engine.patches.stack_config import per_stack
from gpufleet.plans import index as plan_index
from gpufleet.plans import karpenter as plan_karpenter
from gpufleet.policies.inputs import get, plain
from gpufleet.policies.registry import Policies
from gpufleet.rules import karpenter as karpenter_rules

POLICIES = Policies(__name__)
_LAST: list = []  # (urn, props object, the pools read): the last NodePool (or ConfigGroup) judged
per_stack(_LAST.clear)
# A NodePool, or a yaml/v2 ConfigGroup whose objects may be NodePools (plans/karpenter.py reads them).
POOLS = (tokens.KARPENTER_NODE_POOL, tokens.K8S_CONFIG_GROUP)


def _pools(args: ResourceValidationArgs) -> list[plan_karpenter.karpenter.Pool] | None:
    """The resource's pools as the simulation launches from them (None: none known)."""
    # One NodePool's candidate types are read from the whole catalog: its policies share the reading.
    if _LAST and _LAST[0] == args.urn and _LAST[1] is args.props:
        return _LAST[2]
    resource = plan_index.Resource(args.urn, args.resource_type, args.name, plain(args.props, tokens.UNKNOWN))
    pools, _ = plan_karpenter.pools(plan_index.Index([resource]), catalog.load())
    _LAST[:] = [args.urn, args.props, pools or None]
    return _LAST[2]


def _kind(pool, cat: Catalog) -> str | None:
    return karpenter_rules.accelerator_kind([cat.get(c.shape.instance_type) for c in pool.candidates])


def _crd_subject(args: ResourceValidationArgs):
    if args.resource_type not in karpenter_api.checked_types():
        args.not_applicable("not a Karpenter NodePool, EC2NodeClass or NodeOverlay")
    return plain(args.props, tokens.UNKNOWN)  # the engine's marker where a value is known only after apply


@POLICIES.resource("karpenter-crd-schema", subject=_crd_subject)
def _validate_crd(args: ResourceValidationArgs, report: ReportViolation, obj) -> None:
    found = karpenter_api.check(args.resource_type, obj)
    kind = args.resource_type.rsplit(":", 1)[-1]
    for problem in found.problems:
        report(
            f"{kind} {args.name!r}: {problem} (its CRD's schema, Karpenter {catalog.load().facts.karpenter.version}; its {found.cel_rules} CEL rules are not evaluated)",
            None,
        )


@POLICIES.resource("karpenter-values-in-range", subject=_crd_subject)
def _validate_in_range(args: ResourceValidationArgs, report: ReportViolation, obj) -> None:
    kind = args.resource_type.rsplit(":", 1)[-1]
    for path, _, reason in karpenter_rules.out_of_range(args.resource_type, obj):
        report(f"{kind} {args.name!r}: {path}: {reason}", None)


def _admission_unjudged(resource) -> str | None:
    """Pools that admit no type where some of their requirements could not be judged."""
    said = ["; ".join(p.unjudged) for p in _pools(resource) or [] if not p.candidates and p.unjudged]
    return "; ".join(said) or None


def _report_each(report: ReportViolation, pools, reason_of) -> None:
    for pool in pools:
        reason = reason_of(pool)
        if reason:
            report(f"NodePool {pool.name!r}: {reason}", None)


@POLICIES.resource("karpenter-nodepool-admits-a-type", on=POOLS, subject=_pools, unjudged=_admission_unjudged)
def _validate_admits(args: ResourceValidationArgs, report: ReportViolation, pools) -> None:
    _report_each(report, pools, lambda pool: karpenter_rules.admits_no_type(len(pool.candidates), pool.unjudged))


@POLICIES.resource("karpenter-accelerator-pool-tainted", on=POOLS, subject=_pools)
def _validate_tainted(args: ResourceValidationArgs, report: ReportViolation, pools) -> None:
    cat = catalog.load()

    def reason(pool):
        taints = pool.candidates[0].shape.taints if pool.candidates else ()
        return karpenter_rules.untainted_accelerator_pool(_kind(pool, cat), taints, cat.facts.eks)

    _report_each(report, pools, reason)


@POLICIES.resource("karpenter-accelerator-pool-limited", on=POOLS, subject=_pools)
def _validate_limited(args: ResourceValidationArgs, report: ReportViolation, pools) -> None:
    cat = catalog.load()
    _report_each(report, pools, lambda pool: karpenter_rules.unlimited_accelerator_pool(_kind(pool, cat), pool.limits, cat.facts.eks))


_STACK: list = []  # (the stack's NodePools and EC2NodeClasses by URN, their input objects, the pools read)
per_stack(_STACK.clear)


def _stack_pools(args: StackValidationArgs, cat: Catalog) -> list:
    """The stack's NodePools, each read with the EC2NodeClasses of the stack; read once for the
    stack policies that judge them (the servicer hands each the same input objects, as placement.py says)."""
    wanted = (tokens.KARPENTER_NODE_POOL, tokens.KARPENTER_EC2_NODE_CLASS, tokens.K8S_CONFIG_GROUP)
    mine = [r for r in args.resources if r.resource_type in wanted]
    urns, props = [r.urn for r in mine], [r.props for r in mine]
    if _STACK and _STACK[0] == urns and all(a is b for a, b in zip(_STACK[1], props)):
        return _STACK[2]
    resources = [plan_index.Resource(r.urn, r.resource_type, r.name, plain(r.props, tokens.UNKNOWN)) for r in mine]
    pools, _ = plan_karpenter.pools(plan_index.Index(resources), cat)
    _STACK[:] = [urns, props, pools]
    return pools


def _said_of_pools(
    args: StackValidationArgs, said: Callable[[plan_karpenter.karpenter.Pool], str | None], cat: Catalog
) -> list[tuple[str, str]]:
    """(urn, message) for each of the stack's NodePools that `said` has words for (after the pool's
    name), in the stack's order: the one wording of a finding or an unjudged pool."""
    return [(p.urn, f"NodePool {p.name!r}{words}") for p in _stack_pools(args, cat) if (words := said(p))]


def _node_class_unseen(args: StackValidationArgs) -> list[tuple[str, str]]:
    return _said_of_pools(
        args,
        lambda p: (
            f" allows only reserved capacity, and its EC2NodeClass {p.unseen_node_class!r} is not in this stack"
            if p.unseen_node_class
            else None
        ),
        catalog.load(),
    )


@POLICIES.stack("karpenter-reserved-has-reservations", unjudged=_node_class_unseen)
def _validate_reserved(args: StackValidationArgs, report: ReportViolation) -> None:
    for urn, message in _said_of_pools(args, lambda p: f": {p.refused}" if p.refused else None, catalog.load()):
        report(message, urn)


def _stack_region(args: StackValidationArgs) -> str | None:
    """The region of the stack's AWS resources: aws:region or AWS_REGION, else the one region of
    the AWS providers the stack's resources use (None: none, or several)."""
    given = pulumi.Config("aws").get("region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if given:
        return given
    regions = {get(r.provider.props, "region") for r in args.resources if r.provider is not None and r.resource_type.startswith("aws:")}
    regions.discard(None)
    return next(iter(regions)) if len(regions) == 1 and isinstance(next(iter(regions)), str) else None


def _offering_unjudged(args: StackValidationArgs) -> list[tuple[str, str]]:
    if _stack_region(args) is not None:
        return []
    return _said_of_pools(
        args,
        lambda p: ": no region known before apply (aws:region, AWS_REGION or one AWS provider's region)" if p.candidates else None,
        catalog.load(),
    )


@POLICIES.stack("karpenter-nodepool-offered", unjudged=_offering_unjudged)
def _validate_offered(args: StackValidationArgs, report: ReportViolation) -> None:
    region = _stack_region(args)
    if region is None:
        return
    cat = catalog.load()
    zone = cat.facts.eks.well_known_labels.zone
    for pool in _stack_pools(args, cat):
        zones = pool.defined.get(zone)
        reason = karpenter_rules.offered_nowhere(
            [cat.get(c.shape.instance_type) for c in pool.candidates], region, sorted(zones) if zones else None
        )
        if reason:
            report(f"NodePool {pool.name!r}: {reason}", pool.urn)


@POLICIES.stack("karpenter-ami-runs-accelerator")
def _validate_ami(args: StackValidationArgs, report: ReportViolation) -> None:
    for urn, message in _said_of_pools(args, lambda p: f": {p.ami_problem}" if p.ami_problem else None, catalog.load()):
        report(message, urn)
