"""An AKS GPU fleet: GPU node pools of an existing AKS cluster, and, through the cluster's kubeconfig
context, the NVIDIA device plugin (AKS installs the driver, not the plugin: 003) and the workloads."""

from __future__ import annotations

import pulumi
import pulumi_azure as azure
import pulumi_kubernetes as k8s

from gpufleet.components.aks.args import AksFleetArgs
from gpufleet.components.aks.node_pool import AksGpuNodePool, gpu_taint, workload_selector
from gpufleet.components.catalog import catalog, k8s_rules
from gpufleet.components.k8s.args import NvidiaDevicePluginArgs
from gpufleet.components.k8s.device_plugins import DevicePlugins, ServedGroups
from gpufleet.components.k8s.gpu_operator import GpuOperator
from gpufleet.components.k8s.gpu_workload import GpuWorkload


class AksFleet(pulumi.ComponentResource):
    """GPU node pools on an existing AKS cluster, and with a Kubernetes context the device plugin
    (for the pools whose driver AKS installs) and the workloads."""

    def __init__(self, name: str, args: AksFleetArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpufleet:aks:AksFleet", name, None, opts)
        # One explicit provider: the pools' resource ID names the subscription and resource group.
        self.provider = azure.Provider(f"{name}-azure", features={}, opts=pulumi.ResourceOptions(parent=self))
        pool_opts = pulumi.ResourceOptions(parent=self, provider=self.provider)
        self.node_pools = {pool.name: AksGpuNodePool(f"{name}-{pool.name}", args.cluster_id, pool, opts=pool_opts) for pool in args.node_pools}
        if args.kubernetes is not None:
            self._kubernetes(name, args)
        self.register_outputs({"nodePools": {n: p.node_pool.id for n, p in self.node_pools.items()}})

    def _kubernetes(self, name: str, args: AksFleetArgs) -> None:
        self.k8s_provider = k8s.Provider(f"{name}-k8s", context=args.kubernetes.context, opts=pulumi.ResourceOptions(parent=self))
        aks, eks = catalog.load().facts.aks, catalog.load().facts.eks
        pools = {p.name: p for p in args.node_pools}
        created = [p.node_pool for p in self.node_pools.values()]
        after: list[pulumi.Resource] = list(created)
        taint = gpu_taint()
        served = [p for p in args.node_pools if aks.driver_installed_by.get(p.driver) == "aks"]
        if args.gpu_operator is not None:
            # The operator's device plugin (and driver, when on) instead of the standalone plugin.
            self.gpu_operator = GpuOperator(
                f"{name}-gpu-operator", args.gpu_operator, [taint], eks.accelerator_labels.nvidia,
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=created),
            )
            after.append(self.gpu_operator)
        elif served:
            # MIG pools advertise each instance as nvidia.com/gpu (the plugin's single strategy).
            mig = "single" if any(p.mig_profile for p in served) else "none"
            self.device_plugins = DevicePlugins(
                f"{name}-device-plugins",
                ServedGroups(nvidia=[taint], efa=[], neuron=[]),
                NvidiaDevicePluginArgs(mig_strategy=mig),
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=created),
            )
            after.append(self.device_plugins)
        toleration = k8s_rules.toleration_for(taint, eks)
        self.workloads = [
            GpuWorkload(
                f"{name}-{wl.name}", wl, workload_selector(pools[wl.node_pool]), [toleration],
                opts=pulumi.ResourceOptions(parent=self, provider=self.k8s_provider, depends_on=after),
            )
            for wl in args.workloads
        ]

