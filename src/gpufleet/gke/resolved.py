"""What the catalog decides about a GKE GPU node pool from its args: its GPUs, its accelerator block,
its sizes, the tolerations and node selector its workloads need. Free of pulumi_gcp: the spec's
placement and the summary read these without importing the provider SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import GkeFacts
from gpufleet.gke.args import GkeFleetArgs, GkeNodePoolArgs
from gpufleet.k8s.args import ClaimedGpuWorkloadArgs
from gpufleet.k8s.dra_claims import Claim
from gpufleet.k8s.dra_claims import workload_claim as dra_claim
from gpufleet.rules import gke as gke_rules
from gpufleet.rules.gke import GkeGpus


def pool_gpus(pool: GkeNodePoolArgs, gke: GkeFacts) -> GkeGpus | str:
    """The GPUs of one node of the pool, or why its machine type and accelerator do not go together."""
    return gke_rules.gpus(pool.machine_type, pool.accelerator.type, pool.accelerator.count, gke)


def resolved_gpus(pool: GkeNodePoolArgs, cat: Catalog) -> GkeGpus:
    """The pool's GPUs (the spec check has refused a pool without them first)."""
    resolved = pool_gpus(pool, cat.facts.gke)
    if isinstance(resolved, str):
        raise ValueError(f"node pool {pool.name}: {resolved}")
    return resolved


def guest_accelerator(pool: GkeNodePoolArgs, gpus: GkeGpus) -> dict:
    """The accelerator block, always explicit: without gpuDriverInstallationConfig GKE installs no
    driver (the API's default), so even a bundled A2 or G2 type names its GPUs and the driver."""
    accelerator: dict = {
        "type": gpus.accelerator,
        "count": gpus.count,
        "gpu_driver_installation_config": {"gpu_driver_version": pool.driver},
    }
    if pool.partition_size is not None:
        accelerator["gpu_partition_size"] = pool.partition_size
    if pool.sharing is not None:
        accelerator["gpu_sharing_config"] = {
            "gpu_sharing_strategy": pool.sharing.strategy,
            "max_shared_clients_per_gpu": pool.sharing.max_shared_clients_per_gpu,
        }
    return accelerator


def gpu_tolerations(cat: Catalog) -> list[dict]:
    """What a GPU workload tolerates: GKE's own GPU taint (003: GKE taints GPU nodes when the cluster
    has other pools)."""
    taint = cat.facts.gke.gpu_taint
    return [{"key": taint.key, "operator": "Exists", "effect": taint.effect}]


def pool_sizes(pool: GkeNodePoolArgs) -> tuple[int, int, int]:
    """The pool's (min, desired, max) nodes in all its zones: GKE counts nodes per zone."""
    zones = len(pool.zones)
    if pool.autoscaling is not None:
        low, high = pool.autoscaling.min_node_count, pool.autoscaling.max_node_count
        return low * zones, low * zones, high * zones
    return (cast(int, pool.node_count) * zones,) * 3  # nodeCount without autoscaling


def workload_selector(pool: GkeNodePoolArgs, gpus: GkeGpus, cat: Catalog) -> dict[str, str]:
    """The node labels GKE sets on the pool's nodes that a workload selects: the pool, its accelerator,
    and the partition size or sharing settings the pod's request is counted in."""
    labels = cat.facts.gke.labels
    selector = {labels.node_pool: pool.name, labels.accelerator: gpus.accelerator}
    if pool.partition_size is not None:
        selector[labels.partition_size] = pool.partition_size
    if pool.sharing is not None:
        selector[labels.sharing_strategy] = cat.facts.gke.sharing_strategies[pool.sharing.strategy]
        selector[labels.max_shared_clients] = str(pool.sharing.max_shared_clients_per_gpu)
    return selector


def dra(pool: GkeNodePoolArgs) -> bool:
    """Does the NVIDIA DRA driver, not a device plugin, serve the pool's GPUs?"""
    return pool.allocation == "dra"


def fleet_labels(pool: GkeNodePoolArgs, operator: bool, cat: Catalog) -> dict[str, str]:
    """The labels the fleet puts on the pool's nodes before the pool's own: the GPU Operator's (GKE's
    device plugin off, node feature discovery's NVIDIA label) when it runs, and on a DRA pool those
    GKE's DRA guide asks for and the one that keeps any NVIDIA device plugin off (dra.devicePluginOff),
    which the DRA driver's kubelet plugin selects."""
    facts = cat.facts
    labels = {**facts.gke.operator_node_labels.values, **facts.eks.accelerator_labels.nvidia} if operator else {}
    if dra(pool):
        off = facts.dra.device_plugin_off
        labels |= {**facts.gke.dra.node_labels.values, off.key: off.value}
    return labels


def node_labels(pool: GkeNodePoolArgs, operator: bool, cat: Catalog) -> dict[str, str]:
    """Every label gpufleet sets on the pool's nodes: the fleet's, then the pool's own over them."""
    return {**fleet_labels(pool, operator, cat), **pool.labels}


def workload_claim(wl: ClaimedGpuWorkloadArgs, pools: Mapping[str, GkeNodePoolArgs], cat: Catalog) -> Claim | None:
    """The workload's DRA claim when its pool's GPUs are the DRA driver's; else None (nvidia.com/gpu)."""
    pool = pools.get(wl.node_pool)
    return dra_claim(wl, cat.facts.dra) if pool is not None and dra(pool) else None


def dra_pool_taints(fleet: GkeFleetArgs, cat: Catalog) -> list[dict]:
    """The taints of the DRA pools' nodes, which the DRA driver's kubelet plugin tolerates: GKE's GPU
    taint (gpufleet sets none of its own on GKE pools)."""
    if not any(dra(p) for p in fleet.node_pools):
        return []
    taint = cat.facts.gke.gpu_taint
    return [{"key": taint.key, "value": taint.value, "effect": taint.effect}]
