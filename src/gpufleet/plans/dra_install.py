"""What a plan installs for Dynamic Resource Allocation, read once for the pack's DRA rules: which
NVIDIA node groups the NVIDIA DRA driver and the NVIDIA device plugin serve, which resources write
the DRA API (and at which version), and the EKS and GKE clusters' Kubernetes versions.

A release serves a group when its pods would run on the group's nodes by the labels the plan gives
them, plus the one node feature discovery adds at run time on every NVIDIA node
(feature.node.kubernetes.io/pci-10de.present=true: NVIDIA/k8s-device-plugin v0.20.0
deployments/helm/nvidia-device-plugin/values.yaml L72-L76, which the charts' affinities name)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.catalog import charts, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.plans import dra
from gpufleet.plans.groups import accelerated_groups, eks_instance_types
from gpufleet.plans.index import Index, Resource
from gpufleet.plans.pods import plugins
from gpufleet.simulate.k8s_filters import expression_matches

NFD_NVIDIA = {"feature.node.kubernetes.io/pci-10de.present": "true"}
API_GROUP = "resource.k8s.io/"


@dataclass(frozen=True)
class ServedGroup:
    """An NVIDIA node group and the allocators that would serve its GPUs."""

    urn: str
    name: str
    dra_driver: bool
    device_plugin: bool


@dataclass(frozen=True)
class DraInstall:
    groups: tuple[ServedGroup, ...]
    writes: tuple[tuple[str, str], ...]  # (URN, the DRA API version it needs) of each DRA object and driver
    clusters: tuple[tuple[str, str | None], ...]  # (URN, Kubernetes version or None) of each EKS or GKE cluster
    # (URN, name, instance type) of each EKS node group (its instanceTypes or its launch template's), by
    # name: the catalog may lack the type (p6e-gb200 is not in moto's snapshot).
    typed_groups: tuple[tuple[str, str, str], ...] = ()
    compute_domains: int = 0


def _chart_name(release: Resource) -> str:
    chart = release.props.get("chart")
    return chart.rsplit("/", 1)[-1] if isinstance(chart, str) else ""


def _values(release: Resource) -> Mapping:
    values = release.props.get("values")
    return values if isinstance(values, Mapping) else {}


def _runs_on(pod: Mapping, labels: Mapping[str, str]) -> bool:
    """Does a pod spec (nodeSelector, required node affinity) take a node with these labels?"""
    if any(labels.get(k) != str(v) for k, v in (pod.get("nodeSelector") or {}).items()):
        return False
    required = charts.at(pod.get("affinity") or {}, ["nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"])
    if not required:
        return True
    return any(all(expression_matches(e, labels) for e in term.get("matchExpressions") or []) for term in required)


def _driver_serves(release: Resource, labels: Mapping[str, str]) -> bool:
    values = _values(release)
    if charts.at(values, ["resources", "gpus", "enabled"]) is False:
        return False
    return _runs_on({"nodeSelector": charts.at(values, ["kubeletPlugin", "nodeSelector"]) or {}}, labels)


def _plugin_serves(index: Index, labels: Mapping[str, str], cat: Catalog) -> bool:
    """The NVIDIA device plugin's chart as released, or the GPU Operator's plugin, which runs where its
    nvidia.com/gpu.deploy.device-plugin label is not "false" (curated dra.devicePluginOff)."""
    for key, chart, release in plugins(index, cat):
        if key == "nvidiaDevicePlugin":
            pod = charts.device_plugin_pod(key, chart, _values(release))
            if pod is not None and _runs_on(pod, labels):
                return True
    off = cat.facts.dra.device_plugin_off
    operator = cat.facts.charts.gpu_operator.chart
    for release in index.of(tokens.HELM_RELEASE):
        if _chart_name(release) == operator and charts.at(_values(release), ["devicePlugin", "enabled"]) is not False:
            if labels.get(off.key) != off.value:
                return True
    return False


# Where a cluster names its Kubernetes version: an EKS cluster's version, a GKE cluster's minimum
# control-plane version (GKE upgrades it, never below: what serves the API at that version still does).
CLUSTER_VERSIONS = {tokens.EKS_CLUSTER: "version", tokens.GKE_CLUSTER: "minMasterVersion"}


def read(index: Index, cat: Catalog) -> DraInstall:
    drivers = [r for r in index.of(tokens.HELM_RELEASE) if dra.driver_chart(r, cat) is not None]
    groups = []
    for urn, group in accelerated_groups(index.resources, cat).items():
        resource = index.by_urn[urn]
        if resource.type != tokens.EKS_NODE_GROUP or not group.gpus:
            continue
        labels = {**NFD_NVIDIA, **{str(k): str(v) for k, v in (resource.props.get("labels") or {}).items()}}
        served = any(_driver_serves(d, labels) for d in drivers)
        groups.append(ServedGroup(urn, group.name, served, _plugin_serves(index, labels, cat)))
    api = cat.facts.dra.api.api_version
    writes = [(r.urn, r.type.split(":")[1]) for r in index.resources if r.type.startswith(f"kubernetes:{API_GROUP}")]
    writes += [(d.urn, api) for d in drivers]
    clusters = [
        (c.urn, v if isinstance(v := c.props.get(field), str) else None)
        for token, field in CLUSTER_VERSIONS.items()
        for c in index.of(token)
    ]
    typed_groups = [(g.urn, g.name, t) for g in index.of(tokens.EKS_NODE_GROUP) for t in eks_instance_types(g, index, cat)[0]]
    return DraInstall(tuple(groups), tuple(writes), tuple(clusters), tuple(typed_groups), len(index.of(tokens.DRA_COMPUTE_DOMAIN)))
