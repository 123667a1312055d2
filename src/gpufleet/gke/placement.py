"""The spec's door of the placement for a GKE fleet: its workloads on the GPU pools it creates, with
the nodes GKE gives them (labels, its GPU taint, nvidia.com/gpu per partition and sharing client)."""

from __future__ import annotations

from collections.abc import Iterator

from gpufleet.catalog.catalog import Catalog
from gpufleet.gke.args import GkeFleetArgs
from gpufleet.gke.resolved import gpu_tolerations, pool_sizes, resolved_gpus, workload_selector
from gpufleet.k8s.workload_placement import pending_workloads
from gpufleet.platform.model import Violation
from gpufleet.simulate import node_capacity


def check_placement(fleet: GkeFleetArgs, region: str | None, cat: Catalog) -> Iterator[Violation]:
    """Call it on a fleet whose other rules hold (known machine types, valid partitions)."""
    gke, resource = cat.facts.gke, cat.facts.eks.accelerator_resources.nvidia
    shapes, selectors = [], {}
    for pool in fleet.node_pools:
        gpus = resolved_gpus(pool, cat)
        sharing = (pool.sharing.strategy, pool.sharing.max_shared_clients_per_gpu) if pool.sharing is not None else None
        shapes.append(
            node_capacity.gke_node_shape(
                pool.name,
                gpus,
                pool.partition_size,
                sharing,
                dict(pool.labels),
                [],
                pool_sizes(pool),
                resource,
                gke,
                well_known=cat.facts.eks.well_known_labels,
                zones=pool.zones,
            )
        )
        selectors[pool.name] = workload_selector(pool, gpus, cat)
    yield from pending_workloads(
        shapes, [(i, wl, selectors[wl.node_pool], gpu_tolerations(cat)) for i, wl in enumerate(fleet.workloads)], cat
    )
