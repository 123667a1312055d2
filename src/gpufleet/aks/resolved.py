"""What the catalog decides about an AKS GPU node pool from its args: its GPUs, taint and tolerations,
sizes, labels, the temporary pool a size change rotates through and its workloads' node selector.
Free of pulumi_azure: the spec's placement and the summary read these without importing the
provider SDK.
"""

from __future__ import annotations

from typing import cast

from gpufleet.aks.args import AksNodePoolArgs
from gpufleet.catalog.catalog import Catalog
from gpufleet.rules import aks as aks_rules
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules.aks import AksGpus


def resolved_gpus(pool: AksNodePoolArgs, cat: Catalog) -> AksGpus:
    """The pool's GPUs (the spec check has refused an unknown size first)."""
    node = aks_rules.gpus(pool.vm_size, cat.facts.aks)
    if isinstance(node, str):
        raise ValueError(f"node pool {pool.name}: {node}")
    return node


def gpu_taint(cat: Catalog) -> dict:
    """AKS's recommended GPU taint, in Kubernetes' spelling."""
    taint = cat.facts.aks.gpu_taint
    return {"key": taint.key, "value": taint.value, "effect": taint.effect}


def gpu_tolerations(cat: Catalog) -> list[dict]:
    """What a GPU workload tolerates: the pools' GPU taint."""
    return [k8s_rules.toleration_for(gpu_taint(cat), cat.facts.eks)]


def pool_sizes(pool: AksNodePoolArgs) -> tuple[int, int, int]:
    """The pool's (min, desired, max) nodes."""
    if pool.autoscaling is not None:
        return pool.autoscaling.min_count, pool.autoscaling.min_count, pool.autoscaling.max_count
    return (cast(int, pool.node_count),) * 3  # nodeCount without autoscaling (_one_size)


def node_labels(pool: AksNodePoolArgs, cat: Catalog) -> dict[str, str]:
    """The pool's labels, with the one the NVIDIA device plugin's default affinity selects."""
    return {**cat.facts.eks.accelerator_labels.nvidia, **pool.labels}


def rotation_name(name: str) -> str:
    """The temporary pool a VM size change rotates through: a valid pool name (12 at most) other than the pool's."""
    return f"{name[:9]}tmp" if not name[:9].endswith("tmp") else f"{name[:9]}rot"


def workload_selector(pool: AksNodePoolArgs, cat: Catalog) -> dict[str, str]:
    return {cat.facts.aks.pool_label: pool.name}
