"""Alibaba ACK as gpufleet's stack file, program and summary reach it (src/gpufleet/platform/record.py)."""

from __future__ import annotations

from typing import cast

from gpufleet.platform.record import Platform
from gpufleet.rules import ack as ack_rules
from gpufleet.rules.ack import AckGpuType


def _build(fleet, region, opts, cat):
    from gpufleet.ack.ack_fleet import AckFleet

    ack = AckFleet("ack", fleet, cat=cat)
    return {"ackNodePools": {name: pool.node_pool.node_pool_id for name, pool in ack.node_pools.items()}}


def _summary(fleet, region, cat):
    return {"ackPools": [_pool(pool, fleet, cat.facts.ack) for pool in fleet.node_pools]}


def _pool(pool, fleet, ack) -> dict:
    """A shared-GPU pool: its GPUs, and how many pods of each declared size fit one GPU and one node."""
    gpus_per_node = ack_rules.pool_gpus(pool.instance_types, ack)
    # A validated spec's pools have only sourced types (ack-gpu-type-known): none of these is None.
    gib_per_gpu = cast(AckGpuType, ack_rules.smallest_gpu(pool.instance_types, ack)).shared_gib
    models = sorted({cast(AckGpuType, ack_rules.gpu_type(t, ack)).model for t in pool.instance_types})
    if pool.autoscaling is not None:
        nodes = {"min": pool.autoscaling.min_size, "max": pool.autoscaling.max_size}
    else:
        nodes = {"min": pool.desired_size, "desired": pool.desired_size, "max": pool.desired_size}
    sizes: dict[tuple, dict] = {}
    for wl in fleet.workloads:
        if wl.node_pool != pool.name:
            continue
        key = (wl.gpu_mem_gib, wl.gpu_core_percentage)
        per_gpu = ack_rules.shares_per_gpu(gib_per_gpu, *key, ack)
        size = sizes.setdefault(
            key,
            {
                "gpuMemGiB": key[0],
                "gpuCorePercentage": key[1],
                "podsPerGpu": per_gpu,
                "podsPerNode": per_gpu * gpus_per_node,
                "workloads": [],
            },
        )
        size["workloads"].append(wl.name)
    return {
        "pool": pool.name,
        "sharingMode": pool.sharing_mode,
        "placement": pool.placement,
        "instanceTypes": list(pool.instance_types),
        "model": ", ".join(models),
        "gpusPerNode": gpus_per_node,
        "gpuMemGiBPerGpu": gib_per_gpu,
        "nodes": nodes,
        "gpus": {k: n * gpus_per_node for k, n in nodes.items()},
        "sizes": list(sizes.values()),
        "replacement": "a change of sharingMode, placement or labels replaces this pool: ACK labels a node only when it "
        "joins, so the old pool is deleted (its pods are evicted) before the new one is created",
    }


PLATFORM = Platform(
    "ack",
    "GPU node pools for shared GPU scheduling on an existing Alibaba ACK Pro cluster; absent provisions none.",
    _build,
    _summary,
)
