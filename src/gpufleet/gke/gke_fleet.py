"""A GKE GPU fleet: the cluster (a regional Standard cluster gpufleet creates, or an existing one),
its system pool, the GPU node pools, and the GPU workloads through the cluster's Kubernetes provider."""

from __future__ import annotations

from typing import cast

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.gke.args import GkeClusterCreateArgs, GkeFleetArgs, GkeKubernetesArgs
from gpufleet.gke.driver_installer import GkeDriverInstaller
from gpufleet.gke.node_pool import GkeGpuNodePool
from gpufleet.gke.resolved import dra, dra_pool_taints, fleet_labels, gpu_tolerations, workload_claim, workload_selector
from gpufleet.k8s import releases
from gpufleet.k8s.dra_driver import DraDriver
from gpufleet.k8s.gpu_operator import GpuOperator
from gpufleet.k8s.gpu_workload import GpuWorkload
from gpufleet.k8s.kubeconfig import exec_kubeconfig


class GkeFleet(pulumi.ComponentResource):
    """GPU node pools of a GKE cluster (one Google provider in the fleet's project and region), and,
    with cluster access, the workloads on them."""

    def __init__(self, name: str, args: GkeFleetArgs, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog the pools' GPUs and the charts come from (absent: the process's own)."""
        super().__init__("gpufleet:gke:GkeFleet", name, None, opts)
        self._cat = cat = cat or catalog.load()
        self.provider = gcp.Provider(
            f"gcp-{args.project}-{args.region}", project=args.project, region=args.region, opts=pulumi.ResourceOptions(parent=self)
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        self.cluster: gcp.container.Cluster | None = None
        self.system_pool: gcp.container.NodePool | None = None
        cluster_name: pulumi.Input[str] = args.cluster.name
        if args.cluster.create is not None:
            cluster_name = self._create_cluster(name, args, child).name
        self.node_pools = {
            pool.name: GkeGpuNodePool(
                f"{name}-{pool.name}",
                pool,
                cluster=cluster_name,
                location=args.region,
                project=args.project,
                extra_labels=fleet_labels(pool, args.gpu_operator is not None, cat),
                # GKE taints GPU nodes only when the cluster has other pools: the system pool first.
                opts=pulumi.ResourceOptions(
                    parent=self, provider=self.provider, depends_on=[self.system_pool] if self.system_pool else None
                ),
                cat=cat,
            )
            for pool in args.node_pools
        }
        if args.workloads or args.gpu_operator or any(dra(p) for p in args.node_pools):
            self._kubernetes(name, args)
        self.register_outputs({"nodePools": {n: p.node_pool.id for n, p in self.node_pools.items()}})

    def _create_cluster(self, name: str, args: GkeFleetArgs, child: pulumi.ResourceOptions) -> gcp.container.Cluster:
        create = cast(GkeClusterCreateArgs, args.cluster.create)  # given: __init__ calls this only then
        self.cluster = gcp.container.Cluster(
            name,
            name=args.cluster.name,
            location=args.region,
            project=args.project,
            network=create.network,
            subnetwork=create.subnetwork,
            release_channel={"channel": create.release_channel},
            min_master_version=create.version,
            deletion_protection=create.deletion_protection,
            # The default pool goes: the system pool and the GPU pools are managed as node pools.
            remove_default_node_pool=True,
            initial_node_count=1,
            opts=child,
        )
        system = create.system_pool
        self.system_pool = gcp.container.NodePool(
            f"{name}-system",
            # A prefix, not a name: a replacement creates the new pool before the old one goes, so
            # CoreDNS and the controllers always have a node.
            name_prefix="system-",
            cluster=self.cluster.name,
            location=args.region,
            project=args.project,
            node_count=system.node_count,
            node_config={"machine_type": system.machine_type},
            management={"auto_repair": True, "auto_upgrade": True},
            opts=child,
        )
        return self.cluster

    def _kubernetes(self, name: str, args: GkeFleetArgs) -> None:
        if self.cluster is not None:
            # Credentials from gke-gcloud-auth-plugin, as `gcloud container clusters get-credentials` writes them.
            server = self.cluster.endpoint.apply(lambda endpoint: f"https://{endpoint}")
            config = exec_kubeconfig(
                self.cluster.name,
                server,
                self.cluster.master_auth.cluster_ca_certificate,
                lambda _: {"command": "gke-gcloud-auth-plugin", "provideClusterInfo": True},
            )
            self.k8s_provider = k8s.Provider(f"{name}-k8s", kubeconfig=config, opts=pulumi.ResourceOptions(parent=self))
        else:
            # The context of the ambient kubeconfig: nothing secret is stored in the stack.
            # An existing cluster is reached through the given context (kubernetes-access).
            kubernetes = cast(GkeKubernetesArgs, args.kubernetes)
            self.k8s_provider = k8s.Provider(f"{name}-k8s", context=kubernetes.context, opts=pulumi.ResourceOptions(parent=self))
        pools, cat = {p.name: p for p in args.node_pools}, self._cat
        taint = cat.facts.gke.gpu_taint
        after: list[pulumi.Resource] = [p.node_pool for p in self.node_pools.values()]
        if args.gpu_operator is not None:
            labels = {**cat.facts.eks.accelerator_labels.nvidia}
            self.gpu_operator = GpuOperator(
                releases.component_name(name, releases.GPU_OPERATOR),
                args.gpu_operator,
                [{"key": taint.key, "value": taint.value, "effect": taint.effect}],
                labels,
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=list(after)),
                cat=cat,
            )
            after.append(self.gpu_operator)
        if any(dra(p) for p in args.node_pools):
            after += self._dra_drivers(name, args, after)
        tolerations = gpu_tolerations(cat)
        self.workloads = [
            GpuWorkload(
                f"{name}-{wl.name}",
                wl,
                workload_selector(pools[wl.node_pool], self.node_pools[wl.node_pool].gpus, cat),
                tolerations,
                # The pods need the pool's nodes (and the operator's device plugin, when it runs).
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=after),
                cat=cat,
                claim=workload_claim(wl, pools, cat),
            )
            for wl in args.workloads
        ]

    def _dra_drivers(self, name: str, args: GkeFleetArgs, after: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """What GKE's DRA guide installs for DRA pools: GKE's NVIDIA driver installer (the pools take
        no driver from GKE), then the NVIDIA DRA driver with GKE's values, on the pools' nodes."""
        opts = pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=list(after))
        self.driver_installer = GkeDriverInstaller(f"{name}-nvidia-driver-installer", opts=opts, cat=self._cat)
        self.dra_driver = DraDriver(
            releases.component_name(name, releases.DRA_DRIVER),
            dra_pool_taints(args, self._cat),
            opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=[*after, self.driver_installer]),
            cat=self._cat,
            values=self._cat.facts.gke.dra.chart_values.values,
        )
        return [self.driver_installer, self.dra_driver]
