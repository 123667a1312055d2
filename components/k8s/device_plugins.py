"""The device plugins an accelerated EKS fleet needs, as Helm releases with pinned charts: NVIDIA
(tolerating the GPU groups' taints, optional time-slicing or MIG), EFA (tolerating the EFA groups'
taints, which its chart does not by default) and Neuron.

A chart's `tolerations` value replaces its default list (Helm replaces lists), so each release gets
the chart's defaults plus a toleration for every taint of the node groups it serves.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog import catalog, k8s_rules


@dataclass(frozen=True)
class ServedGroups:
    """The taints (EKS spelling) of the node groups each plugin must run on, by the charts' `serves`
    (nvidia, neuron: the groups' accelerator; efa: the groups with EFA)."""

    nvidia: list[dict]
    efa: list[dict]
    neuron: list[dict]


def tolerations(chart: dict, taints: list[dict]) -> list[dict]:
    """The chart's default tolerations plus one for every taint the release would not tolerate."""
    eks = catalog.load().curated["eks"]
    added = []
    for taint in k8s_rules.untolerated(k8s_rules.release_tolerations(chart, None), taints, eks):
        toleration = k8s_rules.toleration_for(taint, eks)
        if toleration not in added:
            added.append(toleration)
    return [*chart["defaultTolerations"], *added]


def _at(path: list[str], value) -> dict:
    """`value` nested under the chart's values path ([devicePlugin, tolerations] -> {devicePlugin: {tolerations: value}})."""
    for key in reversed(path):
        value = {key: value}
    return value


def time_slicing_config(replicas: int) -> str:
    """The device plugin's config file for time-slicing (charts.md: api/config/v1 sharing.timeSlicing)."""
    return "\n".join(
        [
            "version: v1",
            "sharing:",
            "  timeSlicing:",
            "    renameByDefault: false",
            "    failRequestsGreaterThanOne: true",
            "    resources:",
            f"    - name: {catalog.load().curated['eks']['acceleratorResources']['nvidia']}",
            f"      replicas: {replicas}",
        ]
    )


class DevicePlugins(pulumi.ComponentResource):
    """One Helm release per accelerator the node groups have (NVIDIA, EFA, Neuron)."""

    def __init__(self, name: str, served: ServedGroups, nvidia_args, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpufleet:k8s:DevicePlugins", name, None, opts)
        charts = catalog.load().curated["charts"]
        self.releases: dict[str, k8s.helm.v3.Release] = {}
        if served.nvidia:
            chart = charts["nvidiaDevicePlugin"]
            values: dict = _at(chart["tolerationsPath"], tolerations(chart, served.nvidia))
            if nvidia_args.time_slicing_replicas is not None:
                values["config"] = {"default": "default", "map": {"default": time_slicing_config(nvidia_args.time_slicing_replicas)}}
            if nvidia_args.mig_strategy != "none":
                values["migStrategy"] = nvidia_args.mig_strategy
            self.releases["nvidia"] = self._release(f"{name}-nvidia", chart, values)
        if served.efa:
            chart = charts["efaDevicePlugin"]
            self.releases["efa"] = self._release(f"{name}-efa", chart, _at(chart["tolerationsPath"], tolerations(chart, served.efa)))
        if served.neuron:
            chart = charts["neuronHelmChart"]
            values = {**chart["values"], **_at(chart["tolerationsPath"], tolerations(chart, served.neuron))}
            self.releases["neuron"] = self._release(f"{name}-neuron", chart, values)
        self.register_outputs({"releases": {k: r.name for k, r in self.releases.items()}})

    def _release(self, name: str, chart: dict, values: dict) -> k8s.helm.v3.Release:
        return k8s.helm.v3.Release(
            name,
            chart=chart["chart"],
            version=chart["version"],
            repository_opts={"repo": chart["repository"]} if "repository" in chart else None,
            namespace=chart["namespace"],
            create_namespace=chart["namespace"] != "kube-system",
            values=values,
            opts=pulumi.ResourceOptions(parent=self),
        )
