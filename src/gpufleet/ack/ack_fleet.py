"""An ACK shared-GPU fleet: GPU node pools of an existing ACK Pro cluster, and, through the cluster's
kubeconfig context, the GPU sharing component and the shared-GPU workloads."""

from __future__ import annotations

from typing import cast

import pulumi
import pulumi_alicloud as alicloud
import pulumi_kubernetes as k8s

from gpufleet.ack.args import AckFleetArgs, AckKubernetesArgs
from gpufleet.ack.gpu_sharing import GpuSharing
from gpufleet.ack.node_pool import SharedGpuNodePool, workload_selector
from gpufleet.ack.shared_gpu_workload import SharedGpuWorkload
from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.rules import k8s as k8s_rules


class AckFleet(pulumi.ComponentResource):
    """Shared-GPU node pools on an existing ACK Pro cluster (one Alibaba Cloud provider in the
    fleet's region), and, with a Kubernetes context, the sharing component and the workloads."""

    def __init__(self, name: str, args: AckFleetArgs, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog that names the sharing labels and resources (absent: the process's own)."""
        super().__init__("gpufleet:ack:AckFleet", name, None, opts)
        self._cat = cat = cat or catalog.load()
        # One explicit provider in the fleet's region: every pool goes through it.
        self.provider = alicloud.Provider(f"alicloud-{args.region}", region=args.region, opts=pulumi.ResourceOptions(parent=self))
        pool_opts = pulumi.ResourceOptions(parent=self, provider=self.provider)
        self.node_pools = {
            pool.name: SharedGpuNodePool(f"{name}-{pool.name}", args.cluster_id, pool, opts=pool_opts, cat=cat) for pool in args.node_pools
        }
        if args.kubernetes is not None and (args.sharing_component or args.workloads):
            self._kubernetes(name, args)
        self.register_outputs({"nodePools": {n: p.node_pool.node_pool_id for n, p in self.node_pools.items()}})

    def _kubernetes(self, name: str, args: AckFleetArgs) -> None:
        # The context of the ambient kubeconfig: nothing secret is stored in the stack.
        kubernetes = cast(AckKubernetesArgs, args.kubernetes)  # given: __init__ calls this only then
        self.k8s_provider = k8s.Provider(f"{name}-k8s", context=kubernetes.context, opts=pulumi.ResourceOptions(parent=self))
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=self.k8s_provider)
        after: list[pulumi.Resource] = [p.node_pool for p in self.node_pools.values()]
        if args.sharing_component is not None:
            self.sharing = GpuSharing(f"{name}-gpu-sharing", args.sharing_component, opts=k8s_opts, cat=self._cat)
            after.append(self.sharing)
        pools = {p.name: p for p in args.node_pools}
        cat = self._cat
        eks = cat.facts.eks
        self.workloads = []
        for wl in args.workloads:
            pool = pools[wl.node_pool]
            tolerations = [k8s_rules.toleration_for(pool.taint.model_dump(), eks)] if pool.taint else []
            self.workloads.append(
                SharedGpuWorkload(
                    f"{name}-{wl.name}",
                    wl,
                    workload_selector(pool, cat),
                    tolerations,
                    # The pods need the pool's nodes and the sharing plugin's resources.
                    opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=after),
                    cat=cat,
                )
            )
