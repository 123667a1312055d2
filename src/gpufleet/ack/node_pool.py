"""A GPU node pool of an ACK cluster, labelled for one GPU sharing mode (reference 004)."""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpufleet.ack.args import AckNodePoolArgs
from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog

# gpufleet's own label: the pool's workloads select it, next to the sharing mode label.
POOL_LABEL = "gpufleet.io/node-pool"


def pool_labels(pool: AckNodePoolArgs, cat: Catalog) -> dict[str, str]:
    """The labels every node of the pool carries: its sharing mode, placement, and the pool's name."""
    ack = cat.facts.ack
    labels = {ack.schedule_label: pool.sharing_mode, POOL_LABEL: pool.name}
    if pool.placement is not None:
        labels[ack.placement_label] = pool.placement
    return labels


def workload_selector(pool: AckNodePoolArgs, cat: Catalog | None = None) -> dict[str, str]:
    """What a workload on the pool selects: the pool, and its sharing mode (so a pod never lands on a
    node of the other mode even if pools are renamed). `cat`: the catalog that names the labels
    (absent: the process's own; a program of yours calls this)."""
    cat = cat or catalog.load()
    placement = cat.facts.ack.placement_label
    return {k: v for k, v in pool_labels(pool, cat).items() if k != placement}


class SharedGpuNodePool(pulumi.ComponentResource):
    """One `alicloud.cs.NodePool`. ACK labels a node when it joins; an existing node cannot be
    relabelled into another sharing mode (004). So a change of the pool's labels replaces the pool:
    the old pool is deleted first (its nodes drain), then the new one is created."""

    def __init__(
        self, name: str, cluster_id: str, pool: AckNodePoolArgs, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None
    ):
        """`cat`: the catalog that names the sharing labels (absent: the process's own)."""
        super().__init__("gpufleet:ack:SharedGpuNodePool", name, None, opts)
        cat = cat or catalog.load()
        sizing: dict = {}
        if pool.autoscaling is not None:
            sizing["scaling_config"] = {"enable": True, "min_size": pool.autoscaling.min_size, "max_size": pool.autoscaling.max_size}
        else:
            sizing["desired_size"] = str(pool.desired_size)  # a string in pulumi-alicloud 4.x
        self.node_pool = alicloud.cs.NodePool(
            name,
            cluster_id=cluster_id,
            node_pool_name=pool.name,
            instance_types=list(pool.instance_types),
            vswitch_ids=list(pool.vswitch_ids),
            labels=[{"key": k, "value": v} for k, v in pool_labels(pool, cat).items()],
            taints=[{"key": pool.taint.key, "value": pool.taint.value, "effect": pool.taint.effect}] if pool.taint else None,
            image_type=pool.image_type,
            **sizing,
            opts=pulumi.ResourceOptions(parent=self, replace_on_changes=["labels"], delete_before_replace=True),
        )
        self.register_outputs({"nodePoolId": self.node_pool.node_pool_id})
