"""The device plugins an accelerated EKS fleet needs, as Helm releases with pinned charts: NVIDIA
(tolerating the GPU groups' taints, optional time-slicing or MIG), EFA (tolerating the EFA groups'
taints, which its chart does not by default) and Neuron.

A chart's `tolerations` value replaces its default list (Helm replaces lists), so each release gets
the chart's defaults plus a toleration for every taint of the node groups it serves.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog, charts
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import Chart
from gpufleet.k8s.args import NvidiaDevicePluginArgs
from gpufleet.rules import k8s as k8s_rules


@dataclass(frozen=True)
class ServedGroups:
    """The taints (EKS spelling) of the node groups each plugin must run on, by the charts' `serves`
    (nvidia, neuron: the groups' accelerator; efa: the groups with EFA), and which plugins some group
    needs: an untainted group needs its plugin though it adds no taint."""

    nvidia: list[dict]
    efa: list[dict]
    neuron: list[dict]
    needed: frozenset[str] = frozenset()  # nvidia | efa | neuron | dra
    # The taints of the NVIDIA groups whose GPUs the DRA driver serves (allocation: dra): the NVIDIA
    # device plugin stays off their nodes, the driver's kubelet plugin runs there.
    dra: list[dict] = field(default_factory=list)

    def needs(self, serves: str) -> bool:
        return bool(getattr(self, serves)) or serves in self.needed

    def without(self, serves: str) -> ServedGroups:
        """The same groups with no `serves` plugin (another component brings it: the GPU Operator's)."""
        return replace(self, **{serves: []}, needed=self.needed - {serves})


def tolerations(key: str, taints: list[dict], cat: Catalog) -> list[dict]:
    """The chart's default tolerations plus one for every taint its pod would not tolerate."""
    eks = cat.facts.eks
    chart = cat.facts.charts.plugins()[key]
    added = []
    for taint in k8s_rules.untolerated(charts.release_tolerations(key, chart, None), taints, eks):
        toleration = k8s_rules.toleration_for(taint, eks)
        if toleration not in added:
            added.append(toleration)
    return [*charts.default_tolerations(chart), *added]


def _at(path: list[str], value) -> dict:
    """`value` nested under the chart's values path ([devicePlugin, tolerations] -> {devicePlugin: {tolerations: value}})."""
    for key in reversed(path):
        value = {key: value}
    return value


def time_slicing_config(replicas: int, cat: Catalog) -> str:
    """The device plugin's config file for time-slicing (charts.md: api/config/v1 sharing.timeSlicing)."""
    return "\n".join(
        [
            "version: v1",
            "sharing:",
            "  timeSlicing:",
            "    renameByDefault: false",
            "    failRequestsGreaterThanOne: true",
            "    resources:",
            f"    - name: {cat.facts.eks.accelerator_resources.nvidia}",
            f"      replicas: {replicas}",
        ]
    )


def off_dra_nodes(affinity: dict, cat: Catalog) -> dict:
    """The chart's node affinity with every term also requiring a node that is not the DRA driver's
    (label dra.devicePluginOff): terms are ORed, so each must exclude it."""
    off = cat.facts.dra.device_plugin_off
    excluded = {"key": off.key, "operator": "NotIn", "values": [off.value]}
    required = charts.at(affinity, ["nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"]) or [{}]
    terms = [{**term, "matchExpressions": [*term.get("matchExpressions", []), excluded]} for term in required]
    node_affinity = {**affinity.get("nodeAffinity", {}), "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    return {**affinity, "nodeAffinity": node_affinity}


def release_values(served: ServedGroups, nvidia_args, cat: Catalog) -> dict[str, dict]:
    """The values of each device-plugin release the served groups need, by chart key."""
    charts_facts = cat.facts.charts
    found: dict[str, dict] = {}
    if served.needs("nvidia"):
        values: dict = _at(charts_facts.nvidia_device_plugin.tolerations_path, tolerations("nvidiaDevicePlugin", served.nvidia, cat))
        if nvidia_args.time_slicing_replicas is not None:
            values["config"] = {"default": "default", "map": {"default": time_slicing_config(nvidia_args.time_slicing_replicas, cat)}}
        if nvidia_args.mig_strategy != "none":
            values["migStrategy"] = nvidia_args.mig_strategy
        if served.needs("dra"):
            values["affinity"] = off_dra_nodes(charts.defaults(charts_facts.nvidia_device_plugin).get("affinity") or {}, cat)
        found["nvidiaDevicePlugin"] = values
    if served.needs("efa"):
        found["efaDevicePlugin"] = _at(charts_facts.efa_device_plugin.tolerations_path, tolerations("efaDevicePlugin", served.efa, cat))
    if served.needs("neuron"):
        chart = charts_facts.neuron_helm_chart
        found["neuronHelmChart"] = {
            **(chart.values or {}),
            **_at(chart.tolerations_path, tolerations("neuronHelmChart", served.neuron, cat)),
        }
    return found


RELEASE_SUFFIX = {"nvidiaDevicePlugin": "nvidia", "efaDevicePlugin": "efa", "neuronHelmChart": "neuron"}


def release_resource_name(component: str, key: str) -> str:
    """The resource name of a plugin's release under the component's (the provider names the Helm release after it)."""
    return f"{component}-{RELEASE_SUFFIX[key]}"


def chart_release(name: str, chart: Chart, values: dict, parent: pulumi.Resource) -> k8s.helm.v3.Release:
    """A Helm release of a pinned chart under `parent` (its namespace created unless kube-system)."""
    return k8s.helm.v3.Release(
        name,
        chart=chart.chart,
        version=chart.version,
        repository_opts={"repo": chart.repository} if chart.repository is not None else None,
        namespace=chart.namespace,
        create_namespace=chart.namespace != "kube-system",
        values=values,
        opts=pulumi.ResourceOptions(parent=parent),
    )


class DevicePlugins(pulumi.ComponentResource):
    """One Helm release per accelerator the node groups have (NVIDIA, EFA, Neuron)."""

    def __init__(
        self,
        name: str,
        served: ServedGroups,
        nvidia_args: NvidiaDevicePluginArgs | None = None,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`served`: the taints of the groups each plugin runs on (`served_groups(node_group_args)`);
        `nvidia_args`: time-slicing and MIG of the NVIDIA plugin (none by default); `cat`: the catalog
        whose pinned charts it installs (absent: the process's own)."""
        super().__init__("gpufleet:k8s:DevicePlugins", name, None, opts)
        nvidia_args = nvidia_args or NvidiaDevicePluginArgs()
        cat = cat or catalog.load()
        charts_facts = cat.facts.charts.plugins()
        self.releases: dict[str, k8s.helm.v3.Release] = {}
        for key, values in release_values(served, nvidia_args, cat).items():
            self.releases[RELEASE_SUFFIX[key]] = chart_release(release_resource_name(name, key), charts_facts[key], values, self)
        self.register_outputs({"releases": {k: r.name for k, r in self.releases.items()}})
