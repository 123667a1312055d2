"""Google GKE as gpufleet's stack file, program and summary reach it (src/gpufleet/platform/record.py)."""

from __future__ import annotations

from gpufleet.platform.record import Platform
from gpufleet.platform.summary_rows import gpu_pool


def _build(fleet, region, opts, cat):
    from gpufleet.gke.gke_fleet import GkeFleet

    gke = GkeFleet(fleet.cluster.name, fleet, cat=cat)
    return {"gkeNodePools": {name: pool.node_pool.id for name, pool in gke.node_pools.items()}}


def _summary(fleet, region, cat):
    return {"groups": [_pool(pool, cat) for pool in fleet.node_pools]}


def _pool(pool, cat) -> dict:
    from gpufleet.gke.resolved import pool_sizes, resolved_gpus
    from gpufleet.rules import gke as gke_rules

    gke = cat.facts.gke
    gpus = resolved_gpus(pool, cat)
    accelerator = gke.accelerators[gpus.accelerator]
    clients = pool.sharing.max_shared_clients_per_gpu if pool.sharing is not None else None
    resources = gke_rules.gpu_resources_per_node(gpus, pool.partition_size, clients, gke)
    group = {
        **gpu_pool(
            "gke",
            pool,
            gke.driver_installed_by,
            pool.machine_type,
            accelerator.model,
            accelerator.memory_gib,
            gpus.count,
            resources,
            pool_sizes(pool),
        ),
        "zones": list(pool.zones),
        "repair": gke.node_repair.value,
    }
    if pool.allocation == "dra":
        # The pool's driver comes from GKE's driver installer DaemonSet, its GPUs from the DRA driver.
        group |= {"allocation": pool.allocation, "driverInstalledBy": "gke-driver-installer"}
    if pool.partition_size is not None:
        group["partitionSize"] = pool.partition_size
    if pool.sharing is not None:
        group["sharing"] = {"strategy": pool.sharing.strategy, "maxSharedClientsPerGpu": clients}
    return group


PLATFORM = Platform(
    "gke",
    "GPU node pools (MIG partitions, time-sharing or MPS) in a new or existing Google GKE cluster; absent provisions none.",
    _build,
    _summary,
    placement=True,
)
