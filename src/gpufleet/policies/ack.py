"""Alibaba ACK shared GPU scheduling rules (reference 004): compute percentages, GPU memory that fits
one GPU of the pool, one sharing mode per node, the regions of computing power allocation, and the
prerequisites' versions.

Pods are matched to the stack's `alicloud.cs.NodePool`s by their nodeSelector: a pool is a pod's
target when the pool's labels include every selector entry. Pods that choose nodes otherwise
(affinity only) are judged by what their selector says, if anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.apis.values import decimal
from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.facts import AckFacts
from gpufleet.policies.inputs import get, items, provider_region
from gpufleet.policies.k8s import containers, pod_specs, workload_pods
from gpufleet.policies.registry import Policies
from gpufleet.rules import ack as ack_rules
from gpufleet.rules import k8s as k8s_rules

POLICIES = Policies(__name__)


def _labels(pool) -> dict[str, str]:
    return {get(label, "key"): get(label, "value") for label in items(get(pool.props, "labels")) if isinstance(get(label, "key"), str)}


def _asks(pod: Mapping, resource: str) -> list[tuple[str, int | None]]:
    """(container, amount) of every container that asks for the resource (limits, else requests)."""
    found = []
    for c in containers(pod):
        for part in ("limits", "requests"):
            value = get(c, "resources", part, resource)
            if value is not None:
                text = k8s_rules.quantity(value)
                found.append((c.get("name", "?"), decimal(text)))
                break
    return found


def _shared_gpu_pods(args: StackValidationArgs, ack: AckFacts):
    """(resource, where, pod spec, node selector) of every pod asking for aliyun.com/gpu-mem or gpu-core.percentage."""
    for r in args.resources:
        for where, pod in pod_specs(r.resource_type, r.props):
            if _asks(pod, ack.memory_resource) or _asks(pod, ack.compute_resource):
                selector = get(pod, "nodeSelector")
                yield r, where, pod, dict(selector) if isinstance(selector, Mapping) else {}


def _targets(selector: dict, pools: list) -> list:
    """The stack's pools whose labels include every entry of the pod's node selector."""
    if not selector:
        return []
    return [p for p in pools if selector.items() <= _labels(p).items()]


@POLICIES.resource("ack-gpu-core-percentage", subject=workload_pods)
def _validate_core_percentage(args: ResourceValidationArgs, report: ReportViolation, specs: list) -> None:
    ack = catalog.load().facts.ack
    for where, pod in specs:
        for c in containers(pod):
            for part in ("limits", "requests"):
                value = get(c, "resources", part, ack.compute_resource)
                if value is None:
                    continue
                text = k8s_rules.quantity(value)
                reason = ack_rules.core_percentage(n if (n := decimal(text)) is not None else text, ack)
                if reason:
                    report(f"{where}: container {c.get('name', '?')!r} {part}: {reason}", None)


@POLICIES.stack("ack-gpu-mem-fits")
def _validate_gpu_mem_fits(args: StackValidationArgs, report: ReportViolation) -> None:
    ack = catalog.load().facts.ack
    pools = [r for r in args.resources if r.resource_type == tokens.ACK_NODE_POOL]
    for r, where, pod, selector in _shared_gpu_pods(args, ack):
        for pool in _targets(selector, pools):
            types = [t for t in items(get(pool.props, "instanceTypes")) if isinstance(t, str)]
            smallest = ack_rules.smallest_gpu(types, ack)
            if smallest is None:
                continue  # no sourced GPU facts for the pool's types: nothing to judge against
            for name, gib in _asks(pod, ack.memory_resource):
                if gib is None:
                    continue
                reason = ack_rules.gpu_mem_fits(gib, smallest.shared_gib, smallest.name)
                if reason:
                    report(f"{where}: container {name!r} on pool {pool.name!r}: {reason}; the pod never schedules", r.urn)


@POLICIES.stack("ack-pool-sharing-mode")
def _validate_sharing_mode(args: StackValidationArgs, report: ReportViolation) -> None:
    ack = catalog.load().facts.ack
    pools = [r for r in args.resources if r.resource_type == tokens.ACK_NODE_POOL]
    for r, where, pod, selector in _shared_gpu_pods(args, ack):
        wants_compute = bool(_asks(pod, ack.compute_resource))
        targets = _targets(selector, pools)
        # The mode the selector names decides; else the targeted pools' labels.
        named = ack_rules.pool_mode(selector, ack)
        modes = {named} if named else {ack_rules.pool_mode(_labels(p), ack) for p in targets}
        for mode in sorted(modes, key=str):
            reason = ack_rules.sharing_mode_allows(mode, wants_compute, ack)
            if reason:
                report(f"{where}: {reason}", r.urn)


def _region(resource) -> str | None:
    return provider_region(resource, "alicloud", "ALICLOUD_REGION")


def _region_unknown(resource) -> str | None:
    return (
        None
        if _region(resource) is not None
        else "no region known before apply (its provider's region, alicloud:region or ALICLOUD_REGION)"
    )


@POLICIES.resource("ack-region", on=tokens.ACK_NODE_POOL, unjudged=_region_unknown)
def _validate_region(args: ResourceValidationArgs, report: ReportViolation) -> None:
    ack = catalog.load().facts.ack
    mode = ack_rules.pool_mode(_labels(args), ack)
    region = cast(str, _region(args))  # known: the unjudged guard (_region_unknown) passed
    reason = ack_rules.sharing_region(region, mode, ack)
    if reason:
        report(f"node pool {args.name!r} ({ack.schedule_label}={mode}): {reason}", None)


@POLICIES.resource("ack-cluster-prerequisites")
def _validate_prerequisites(args: ResourceValidationArgs, report: ReportViolation) -> None:
    ack = catalog.load().facts.ack
    if args.resource_type == tokens.HELM_RELEASE and get(args.props, "chart") == ack.sharing_chart:
        version = get(args.props, "version")
        problems = ack_rules.cluster_prerequisites(None, version if isinstance(version, str) else None, None, ack)
    elif args.resource_type == tokens.ACK_CLUSTER:
        version = get(args.props, "version")
        problems = ack_rules.cluster_prerequisites(version if isinstance(version, str) else None, None, None, ack)
    else:
        args.not_applicable("neither the GPU sharing chart nor an ACK managed cluster")
        return
    for problem in problems.values():
        report(problem, None)
