"""The spec's door of the placement for an AKS fleet: its workloads on the GPU pools it creates
(AKS's pool label, the GPU taint, nvidia.com/gpu per GPU or MIG instance)."""

from __future__ import annotations

from collections.abc import Iterator

from gpufleet.aks.args import AksFleetArgs
from gpufleet.aks.resolved import gpu_taint, gpu_tolerations, node_labels, pool_sizes, resolved_gpus, workload_selector
from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s.workload_placement import pending_workloads
from gpufleet.platform.model import Violation
from gpufleet.simulate import node_capacity


def check_placement(fleet: AksFleetArgs, region: str | None, cat: Catalog) -> Iterator[Violation]:
    """Call it on a fleet whose other rules hold (known VM sizes, valid MIG profiles)."""
    aks, resource = cat.facts.aks, cat.facts.eks.accelerator_resources.nvidia
    shapes = [
        node_capacity.aks_node_shape(
            pool.name,
            resolved_gpus(pool, cat),
            pool.mig_profile,
            node_labels(pool, cat),
            [gpu_taint(cat)],
            pool_sizes(pool),
            resource,
            aks,
            well_known=cat.facts.eks.well_known_labels,
        )
        for pool in fleet.node_pools
    ]
    pools = {p.name: p for p in fleet.node_pools}
    yield from pending_workloads(
        shapes, [(i, wl, workload_selector(pools[wl.node_pool], cat), gpu_tolerations(cat)) for i, wl in enumerate(fleet.workloads)], cat
    )
