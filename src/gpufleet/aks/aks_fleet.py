"""An AKS GPU fleet: GPU node pools of an existing AKS cluster, and, through the cluster's kubeconfig
context, the NVIDIA device plugin (AKS installs the driver, not the plugin: 003) and the workloads."""

from __future__ import annotations

from typing import Literal, cast

import pulumi
import pulumi_azure as azure
import pulumi_kubernetes as k8s

from gpufleet.aks.args import AksFleetArgs, AksKubernetesArgs
from gpufleet.aks.node_pool import AksGpuNodePool
from gpufleet.aks.resolved import gpu_taint, gpu_tolerations, rotation_name, workload_selector
from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s import releases
from gpufleet.k8s.args import NvidiaDevicePluginArgs
from gpufleet.k8s.device_plugins import DevicePlugins, ServedGroups
from gpufleet.k8s.gpu_operator import GpuOperator
from gpufleet.k8s.gpu_workload import GpuWorkload


class AksFleet(pulumi.ComponentResource):
    """GPU node pools on a new or existing AKS cluster, and, with cluster access, the device plugin
    (for the pools whose driver AKS installs) or the GPU Operator, and the workloads."""

    def __init__(self, name: str, args: AksFleetArgs, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog the pools' GPUs and the charts come from (absent: the process's own)."""
        super().__init__("gpufleet:aks:AksFleet", name, None, opts)
        self._cat = cat = cat or catalog.load()
        # One explicit provider in the cluster's subscription (azurerm 4 requires it named).
        self.provider = azure.Provider(
            f"{name}-azure", features={}, subscription_id=args.subscription_id, opts=pulumi.ResourceOptions(parent=self)
        )
        pool_opts = pulumi.ResourceOptions(parent=self, provider=self.provider)
        self.cluster = self._create_cluster(name, args.create_cluster, pool_opts) if args.create_cluster is not None else None
        # Without createCluster, clusterId is given (_one_cluster).
        cluster_id = self.cluster.id if self.cluster is not None else cast(str, args.cluster_id)
        self.node_pools = {
            pool.name: AksGpuNodePool(f"{name}-{pool.name}", cluster_id, pool, opts=pool_opts, cat=cat) for pool in args.node_pools
        }
        if args.kubernetes is not None or self.cluster is not None:
            self._kubernetes(name, args)
        self.register_outputs({"nodePools": {n: p.node_pool.id for n, p in self.node_pools.items()}})

    def _create_cluster(self, name: str, create, opts: pulumi.ResourceOptions) -> azure.containerservice.KubernetesCluster:
        """The cluster, with its system pool as the default pool (untainted: the operators that are not
        DaemonSets, the GPU Operator's among them, run there) and a system-assigned identity."""
        system = create.system_pool
        return azure.containerservice.KubernetesCluster(
            name,
            name=create.name,
            location=create.location,
            resource_group_name=create.resource_group_name,
            dns_prefix=create.name,
            kubernetes_version=create.kubernetes_version,
            default_node_pool={
                "name": "system",
                "vm_size": system.vm_size,
                "node_count": system.node_count,
                # A VM size change rotates the system nodes through this pool (AKS needs it named).
                "temporary_name_for_rotation": rotation_name("system"),
            },
            identity={"type": "SystemAssigned"},
            opts=opts,
        )

    def _kubernetes(self, name: str, args: AksFleetArgs) -> None:
        # A created cluster's own kubeconfig (a secret output), else the ambient kubeconfig's context.
        # Called with a created cluster or with kubernetes given (__init__).
        access = (
            {"kubeconfig": self.cluster.kube_config_raw}
            if self.cluster is not None
            else {"context": cast(AksKubernetesArgs, args.kubernetes).context}
        )
        self.k8s_provider = k8s.Provider(f"{name}-k8s", **access, opts=pulumi.ResourceOptions(parent=self))
        cat = self._cat
        aks, eks = cat.facts.aks, cat.facts.eks
        pools = {p.name: p for p in args.node_pools}
        created = [p.node_pool for p in self.node_pools.values()]
        after: list[pulumi.Resource] = list(created)
        taint = gpu_taint(cat)
        served = [p for p in args.node_pools if aks.driver_installed_by.get(p.driver) == "aks"]
        if args.gpu_operator is not None:
            # The operator's device plugin (and driver, when on) instead of the standalone plugin.
            self.gpu_operator = GpuOperator(
                releases.component_name(name, releases.GPU_OPERATOR),
                args.gpu_operator,
                [taint],
                eks.accelerator_labels.nvidia,
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=created),
                cat=cat,
            )
            after.append(self.gpu_operator)
        elif served:
            # MIG pools advertise each instance as nvidia.com/gpu (the plugin's single strategy).
            mig: Literal["single", "none"] = "single" if any(p.mig_profile for p in served) else "none"
            self.device_plugins = DevicePlugins(
                releases.component_name(name, releases.DEVICE_PLUGINS),
                ServedGroups(nvidia=[taint], efa=[], neuron=[], needed=frozenset({"nvidia"})),
                NvidiaDevicePluginArgs(mig_strategy=mig),
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=created),
                cat=cat,
            )
            after.append(self.device_plugins)
        self.workloads = [
            GpuWorkload(
                f"{name}-{wl.name}",
                wl,
                workload_selector(pools[wl.node_pool], cat),
                gpu_tolerations(cat),
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=after),
                cat=cat,
            )
            for wl in args.workloads
        ]
