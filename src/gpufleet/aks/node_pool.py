"""A GPU node pool of an AKS cluster: one `azure.containerservice.KubernetesClusterNodePool` with the
VM size's GPUs, the MIG instance profile, the driver choice, GPU taint and labels."""

from __future__ import annotations

import pulumi
import pulumi_azure as azure

from gpufleet.aks.args import AksNodePoolArgs
from gpufleet.aks.resolved import gpu_taint, node_labels, resolved_gpus, rotation_name
from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog


class AksGpuNodePool(pulumi.ComponentResource):
    """One GPU node pool (mode User). A change of the VM size or zones rotates the nodes through a
    temporary pool (AKS needs its name given beforehand); a change of the MIG profile or driver
    replaces the pool, deleting the old one first: the name is unique in the cluster."""

    def __init__(
        self,
        name: str,
        cluster_id: pulumi.Input[str],
        pool: AksNodePoolArgs,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`cat`: the catalog the VM size's GPUs and the taint come from (absent: the process's own)."""
        super().__init__("gpufleet:aks:GpuNodePool", name, None, opts)
        cat = cat or catalog.load()
        self.gpus = resolved_gpus(pool, cat)
        taint = gpu_taint(cat)
        sizing: dict = (
            {"auto_scaling_enabled": True, "min_count": pool.autoscaling.min_count, "max_count": pool.autoscaling.max_count}
            if pool.autoscaling is not None
            else {"node_count": pool.node_count}
        )
        self.node_pool = azure.containerservice.KubernetesClusterNodePool(
            name,
            name=pool.name,
            kubernetes_cluster_id=cluster_id,
            vm_size=pool.vm_size,
            mode="User",
            os_type="Linux",
            zones=list(pool.zones) if pool.zones else None,
            gpu_driver=pool.driver,
            gpu_instance=pool.mig_profile,
            node_taints=[f"{taint['key']}={taint['value']}:{taint['effect']}"],
            node_labels=node_labels(pool, cat),
            temporary_name_for_rotation=rotation_name(pool.name),
            priority="Spot" if pool.spot else "Regular",
            # Spot nodes are deleted on eviction (the pool's autoscaler adds fresh ones).
            eviction_policy="Delete" if pool.spot else None,
            **sizing,
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
        self.register_outputs({"nodePoolId": self.node_pool.id})
