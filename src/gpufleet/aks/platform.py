"""Azure AKS as gpufleet's stack file, program and summary reach it (src/gpufleet/platform/record.py)."""

from __future__ import annotations

from gpufleet.platform.record import Platform
from gpufleet.platform.summary_rows import gpu_pool


def _build(fleet, region, opts, cat):
    from gpufleet.aks.aks_fleet import AksFleet

    aks = AksFleet("aks", fleet, cat=cat)
    return {"aksNodePools": {name: pool.node_pool.id for name, pool in aks.node_pools.items()}}


def _summary(fleet, region, cat):
    # An existing cluster's region is in no resource of the plan: the summary carries it for the prices.
    return {
        "groups": [_pool(pool, cat) for pool in fleet.node_pools],
        **({"regions": {"azure": fleet.region}} if fleet.region else {}),
    }


def _pool(pool, cat) -> dict:
    from gpufleet.aks.resolved import pool_sizes, resolved_gpus
    from gpufleet.rules import aks as aks_rules

    aks = cat.facts.aks
    node = resolved_gpus(pool, cat)
    gpu = aks.gpus[node.gpu]
    resources = aks_rules.gpu_resources_per_node(node, pool.mig_profile, aks)
    group = gpu_pool("aks", pool, aks.driver_installed_by, pool.vm_size, gpu.model, gpu.memory_gib, node.count, resources, pool_sizes(pool))
    group["repair"] = aks.node_repair.value
    if pool.mig_profile is not None:
        group["partitionSize"] = pool.mig_profile
    return group


PLATFORM = Platform(
    "aks",
    "GPU node pools (MIG instance profiles, the GPU driver) in an existing Azure AKS cluster; absent provisions none.",
    _build,
    _summary,
    placement=True,
)
