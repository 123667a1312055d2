"""The NVIDIA DRA driver (chart dra-driver-nvidia-gpu, pinned) as a Helm release, on the node groups
whose GPUs it serves (`allocation: dra`): its kubelet plugin selects the label that keeps the device
plugin off those nodes, so one GPU has one allocator, and tolerates the groups' taints.

The chart installs the DeviceClasses the claims name (gpu.nvidia.com, mig.nvidia.com and, with
ComputeDomains, compute-domain-*: templates/deviceclass-*.yaml @v0.4.1); gpufleet writes none."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from gpufleet.catalog import catalog, charts
from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s.device_plugins import chart_release
from gpufleet.rules import k8s as k8s_rules


def driver_values(taints: list[dict], cat: Catalog, platform_values: Mapping | None = None) -> dict:
    """The release's values: the catalog's (GPUs on, the device-plugin override), a platform's over
    them (`platform_values`: GKE's driver root), the kubelet plugin on the DRA nodes only and
    tolerating their taints (`taints`: EKS or Kubernetes spelling)."""
    chart = cat.facts.charts.dra_driver_nvidia_gpu
    eks = cat.facts.eks
    tolerations = charts.default_tolerations(chart)
    for taint in taints:
        if k8s_rules.untolerated(tolerations, [taint], eks):
            tolerations.append(k8s_rules.toleration_for(taint, eks))
    off = cat.facts.dra.device_plugin_off
    kubelet_plugin = {"nodeSelector": {off.key: off.value}, "tolerations": tolerations}
    return charts.merge(charts.merge(dict(chart.values or {}), platform_values), {"kubeletPlugin": kubelet_plugin})


class DraDriver(pulumi.ComponentResource):
    """One Helm release of the pinned DRA driver chart. Give it the cluster's Kubernetes provider."""

    def __init__(
        self,
        name: str,
        taints: list[dict],
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
        values: Mapping | None = None,
    ):
        """`taints`: the DRA groups' taints; `cat`: the catalog whose pinned chart it installs (absent:
        the process's own); `values`: the platform's values over the catalog's (GKE's driver root)."""
        super().__init__("gpufleet:k8s:DraDriver", name, None, opts)
        cat = cat or catalog.load()
        self.release = chart_release(name, cat.facts.charts.dra_driver_nvidia_gpu, driver_values(taints, cat, values), self)
        self.register_outputs({"release": self.release.name})
