"""Rules over a whole ACK fleet spec: each check calls an `ack_rules` predicate (the ones the policy
pack calls) and returns Violations with the stack file's field paths."""

from __future__ import annotations

from gpufleet.ack.args import AckFleetArgs, AckNodePoolArgs
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import AckFacts
from gpufleet.platform.model import Violation, pool_fleet_names
from gpufleet.rules import ack as ack_rules
from gpufleet.rules import k8s as k8s_rules


def check_fleet(fleet: AckFleetArgs, region: str | None, cat: Catalog) -> list[Violation]:
    """Every rule broken by the fleet (the stack's AWS region is not ACK's: its pools name their own)."""
    ack, kubernetes = cat.facts.ack, cat.facts.kubernetes
    found = pool_fleet_names(fleet)
    for i, pool in enumerate(fleet.node_pools):
        if pool.taint is not None:
            for where, value, problem in k8s_rules.node_label_problems({}, [pool.taint.model_dump()], kubernetes):
                found.append(Violation("k8s-node-labels", ("nodePools", i, "taint", where[-1]), value, problem))
        for j, instance_type in enumerate(pool.instance_types):
            reason = ack_rules.gpu_type_known(instance_type, ack)
            if reason:
                found.append(Violation("ack-gpu-type-known", ("nodePools", i, "instanceTypes", j), instance_type, reason))
        reason = ack_rules.sharing_region(fleet.region, pool.sharing_mode, ack)
        if reason:
            found.append(Violation("ack-region", ("region",), fleet.region, f"node pool {pool.name} ({pool.sharing_mode}): {reason}"))
    versions = {
        "kubernetes": (("kubernetesVersion",), fleet.kubernetes_version),
        "chart": (("sharingComponent", "version"), fleet.sharing_component.version if fleet.sharing_component else None),
        "cgpu": (("cgpuVersion",), fleet.cgpu_version),
    }
    problems = ack_rules.cluster_prerequisites(versions["kubernetes"][1], versions["chart"][1], versions["cgpu"][1], ack)
    for key, problem in problems.items():
        field, value = versions[key]
        found.append(Violation("ack-cluster-prerequisites", field, value, problem))
    if (fleet.workloads or fleet.sharing_component) and fleet.kubernetes is None:
        found.append(
            Violation(
                "kubernetes-access",
                ("kubernetes",),
                None,
                "workloads and the sharing component are installed through the cluster: give kubernetes.context",
            )
        )
    pools = {p.name: p for p in fleet.node_pools}
    for i, wl in enumerate(fleet.workloads):
        found += [v.under("workloads", i) for v in _check_workload(wl, pools, ack)]
    return found


def _check_workload(wl, pools: dict[str, AckNodePoolArgs], ack: AckFacts) -> list[Violation]:
    found = []
    if wl.gpu_core_percentage is not None:
        reason = ack_rules.core_percentage(wl.gpu_core_percentage, ack)
        if reason:
            found.append(Violation("ack-gpu-core-percentage", ("gpuCorePercentage",), wl.gpu_core_percentage, reason))
    pool = pools.get(wl.node_pool)
    if pool is None:
        return [
            *found,
            Violation("node-pool-exists", ("nodePool",), wl.node_pool, f"no node pool of that name (pools: {', '.join(pools)})"),
        ]
    reason = ack_rules.sharing_mode_allows(pool.sharing_mode, wl.gpu_core_percentage is not None, ack)
    if reason:
        found.append(Violation("ack-pool-sharing-mode", ("nodePool",), wl.node_pool, reason))
    smallest = ack_rules.smallest_gpu(pool.instance_types, ack)
    if smallest is not None:
        reason = ack_rules.gpu_mem_fits(wl.gpu_mem_gib, smallest.shared_gib, smallest.name)
        if reason:
            found.append(Violation("ack-gpu-mem-fits", ("gpuMemGib",), wl.gpu_mem_gib, reason))
    return found
