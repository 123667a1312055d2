"""A GPU node pool of a GKE cluster: one `gcp.container.NodePool` whose guest accelerators carry the
driver choice, the multi-instance GPU partition size and the GPU sharing settings."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.gke.args import GkeNodePoolArgs
from gpufleet.gke.resolved import guest_accelerator, resolved_gpus


class GkeGpuNodePool(pulumi.ComponentResource):
    """One GPU node pool. A change of machine type or accelerators (partition size, sharing, driver)
    replaces the pool. It keeps its name, which is unique in the cluster, so the old pool is deleted
    first (its pods are evicted; `gpufleet diff` says so): creating the new one beside it would fail
    on the name, and would need twice the GPU quota."""

    def __init__(
        self,
        name: str,
        pool: GkeNodePoolArgs,
        *,
        cluster: pulumi.Input[str],
        location: str,
        project: str,
        extra_labels: dict[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`extra_labels`: labels the fleet adds to the nodes (the GPU Operator's, when it runs);
        `cat`: the catalog the machine type's GPUs come from (absent: the process's own)."""
        super().__init__("gpufleet:gke:GpuNodePool", name, None, opts)
        self.gpus = resolved_gpus(pool, cat or catalog.load())
        sizing: dict = {}
        if pool.autoscaling is not None:
            # No initial_node_count: a change of it recreates the pool; the autoscaler's minimum holds.
            sizing["autoscaling"] = {"min_node_count": pool.autoscaling.min_node_count, "max_node_count": pool.autoscaling.max_node_count}
        else:
            sizing["node_count"] = pool.node_count
        self.node_pool = gcp.container.NodePool(
            name,
            name=pool.name,
            cluster=cluster,
            location=location,
            project=project,
            node_locations=list(pool.zones),
            node_config={
                "machine_type": pool.machine_type,
                "guest_accelerators": [guest_accelerator(pool, self.gpus)],
                "spot": pool.spot,
                "labels": {**(extra_labels or {}), **pool.labels},
            },
            management={"auto_repair": True, "auto_upgrade": True},
            **sizing,
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=True),
        )
        self.register_outputs({"nodePoolId": self.node_pool.id})
