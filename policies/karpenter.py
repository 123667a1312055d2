"""Karpenter NodePool rules on any program's `karpenter.sh/v1` NodePools, read as the provisioning
simulation reads them (components/plans/karpenter.py) and judged by the rule functions the stack
spec calls (components/rules/karpenter.py)."""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs

from gpufleet.components.catalog import catalog, tokens
from gpufleet.components.plans import index as plan_index, karpenter as plan_karpenter
from gpufleet.components.rules import karpenter as karpenter_rules
from gpufleet.policies.inputs import plain
from gpufleet.policies.registry import Policies

POLICIES = Policies(__name__)


def _pool(args: ResourceValidationArgs) -> tuple[plan_karpenter.karpenter.Pool, list[str]] | None:
    """The pool as the simulation launches from it, and what of it is unknown (None: its spec is not known)."""
    resource = plan_index.Resource(args.urn, args.resource_type, args.name, plain(args.props))
    pools, gaps = plan_karpenter.pools(plan_index.Index([resource]), catalog.load())
    return (pools[0], gaps) if pools else None


def _kind(pool) -> str | None:
    cat = catalog.load()
    return karpenter_rules.accelerator_kind([cat.get(c.shape.instance_type) for c in pool.candidates])


@POLICIES.resource("karpenter-nodepool-admits-a-type", on=tokens.KARPENTER_NODE_POOL, subject=_pool)
def _validate_admits(args: ResourceValidationArgs, report: ReportViolation, subject) -> None:
    pool, gaps = subject
    reason = karpenter_rules.admits_no_type(len(pool.candidates), gaps)
    if reason:
        report(f"NodePool {pool.name!r}: {reason}")


@POLICIES.resource("karpenter-accelerator-pool-tainted", on=tokens.KARPENTER_NODE_POOL, subject=_pool)
def _validate_tainted(args: ResourceValidationArgs, report: ReportViolation, subject) -> None:
    pool, _ = subject
    taints = pool.candidates[0].shape.taints if pool.candidates else ()
    reason = karpenter_rules.untainted_accelerator_pool(_kind(pool), taints, catalog.load().facts.eks)
    if reason:
        report(f"NodePool {pool.name!r}: {reason}")


@POLICIES.resource("karpenter-accelerator-pool-limited", on=tokens.KARPENTER_NODE_POOL, subject=_pool)
def _validate_limited(args: ResourceValidationArgs, report: ReportViolation, subject) -> None:
    pool, _ = subject
    reason = karpenter_rules.unlimited_accelerator_pool(_kind(pool), pool.limits, catalog.load().facts.eks)
    if reason:
        report(f"NodePool {pool.name!r}: {reason}")
