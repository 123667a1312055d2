"""A plan's Dynamic Resource Allocation objects, read once for the placement: the DeviceClasses,
ResourceClaims, ResourceClaimTemplates and ResourceSlices any program declares (pulumi-kubernetes'
typed classes and CustomResources alike: both carry `kubernetes:<apiVersion>:<Kind>`), the
DeviceClasses NVIDIA's DRA driver charts install (keyed by the chart and version a Helm release
names; catalog `dra.charts`), and the slices each node group's nodes publish where the driver's
kubelet plugin runs (its pod as k8s_workloads renders it, landing as the scheduler lands it).

resource.k8s.io/v1 and v1beta2 are read: v1beta2 has v1's shape (`exactly` / `firstAvailable`
requests, typed attributes). v1beta1 (requests without `exactly`, capacity as `{value}`) is not
read: each such object is a named gap."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import DraDriverChart
from gpufleet.errors import InputError
from gpufleet.plans.index import Index, Resource, mapping, str_or
from gpufleet.plans.wire import json_value
from gpufleet.simulate import dra_objects, dra_slices, k8s_workloads
from gpufleet.simulate.k8s_dra import DraWorld
from gpufleet.simulate.k8s_filters import lands
from gpufleet.simulate.k8s_shapes import NodeShape

GROUP = "resource.k8s.io"
READ_VERSIONS = ("v1", "v1beta2")
UNREAD_VERSIONS = ("v1beta1", "v1alpha3")


@dataclass(frozen=True)
class DriverRelease:
    """A Helm release of an NVIDIA DRA driver chart gpufleet carries, with the values it sets."""

    name: str
    chart: DraDriverChart
    values: Mapping


def _objects(index: Index, kind: str) -> tuple[list[Resource], list[str]]:
    """The plan's objects of a resource.k8s.io kind that gpufleet reads; a gap for each of a version it does not."""
    found, gaps = [], []
    for r in index.resources:
        if not r.type.startswith(f"kubernetes:{GROUP}/") or not r.type.endswith(f":{kind}"):
            continue
        version = r.type.split(":")[1].split("/", 1)[1]
        if version in READ_VERSIONS:
            found.append(r)
        else:
            gaps.append(f"{kind} {r.name!r} is {GROUP}/{version}, whose shape gpufleet does not read: its claims are not judged")
    return found, gaps


def _namespaced(r: Resource) -> tuple[str, str]:
    metadata = mapping(r.props.get("metadata"))
    return str_or(metadata.get("namespace"), "default"), str_or(metadata.get("name"), r.name)


def _named(r: Resource) -> dict:
    """The object with the name and namespace it gets (pulumi-kubernetes names an unnamed one after
    the resource), its numbers as the API reads them (the engine's wire carries only doubles)."""
    namespace, name = _namespaced(r)
    return json_value({**r.props, "metadata": {**mapping(r.props.get("metadata")), "name": name, "namespace": namespace}})


def _read(r: Resource, kind: str, read, gaps: list[str]):
    try:
        return read(_named(r))
    except InputError as err:
        gaps.append(f"{kind} {r.name!r} is not read: {err}")
        return None


def _template_claim(r: Resource) -> dict:
    namespace, name = _namespaced(r)
    return {"metadata": {"name": name, "namespace": namespace}, "spec": json_value(mapping(mapping(r.props.get("spec")).get("spec")))}


def driver_chart(release: Resource, cat: Catalog) -> DraDriverChart | None:
    """The DRA driver chart a Helm release installs, where gpufleet carries it. A chart from an OCI
    registry is named by its URL (oci://registry.k8s.io/.../dra-driver-nvidia-gpu): its last segment
    is the chart's name."""
    named = str_or(release.props.get("chart"), "").rsplit("/", 1)[-1]
    return next((c for c in cat.facts.dra.charts if c.chart == named), None)


def driver_releases(index: Index, cat: Catalog) -> tuple[list[DriverRelease], list[str]]:
    """The releases of the DRA driver charts gpufleet carries; a gap for a version it does not."""
    found, gaps = [], []
    for release in index.of(tokens.HELM_RELEASE):
        chart = driver_chart(release, cat)
        if chart is None:
            continue
        name = str_or(release.props.get("name"), release.name)
        version = str_or(release.props.get("version"), "").removeprefix("v")
        if version != chart.version:
            gaps.append(
                f"Helm release {name!r}: {chart.chart} {version or '(unpinned)'} is not a version whose DeviceClasses gpufleet read"
            )
            continue
        found.append(DriverRelease(name, chart, mapping(release.props.get("values"))))
    return found, gaps


def _enabled(release: DriverRelease, switch: str) -> bool:
    return mapping(mapping(release.values.get("resources")).get(switch)).get("enabled", True) is not False


def _chart_classes(releases: Sequence[DriverRelease]) -> list[dra_objects.DeviceClass]:
    return [
        dra_objects.DeviceClass(c.name, (c.selector,))
        for release in releases
        for c in release.chart.device_classes
        if _enabled(release, c.when)
    ]


def world(index: Index, cat: Catalog) -> tuple[DraWorld, list[str]]:
    """The plan's DRA objects as the scheduler's plugin reads them, and what of them is not read."""
    releases, gaps = driver_releases(index, cat)
    classes = _chart_classes(releases)
    found, unread = _objects(index, "DeviceClass")
    gaps += unread
    classes += [c for c in (_read(r, "DeviceClass", dra_objects.device_class, gaps) for r in found) if c]
    claims = {}
    found, unread = _objects(index, "ResourceClaim")
    gaps += unread
    for r in found:
        claim = _read(r, "ResourceClaim", dra_objects.resource_claim, gaps)
        if claim:
            claims[(claim.namespace, claim.name)] = claim
    templates = {}
    found, unread = _objects(index, "ResourceClaimTemplate")
    gaps += unread
    for r in found:
        claim = _read(Resource(r.urn, r.type, r.name, _template_claim(r)), "ResourceClaimTemplate", dra_objects.resource_claim, gaps)
        if claim:
            templates[(claim.namespace, claim.name)] = claim
    facts = cat.facts.dra
    unique = tuple({c.name: c for c in classes}.values())
    runtime, unmodelled = frozenset(facts.runtime_attributes.values), frozenset(facts.unmodelled_drivers.values)
    return DraWorld(unique, claims, templates, runtime, unmodelled), gaps


def declared_slices(index: Index) -> tuple[list[dra_objects.ResourceSlice], list[str]]:
    """ResourceSlices a program declares itself (a driver of its own, network-attached devices)."""
    found, gaps = _objects(index, "ResourceSlice")
    slices = [s for s in (_read(r, "ResourceSlice", dra_objects.resource_slice, gaps) for r in found) if s]
    return slices, gaps


def _plugin_runs(release: DriverRelease, shape: NodeShape, cat: Catalog) -> bool:
    """The driver's kubelet plugin DaemonSet lands on the group's nodes: its pod as the chart
    renders it under the release's values (tolerations, nodeSelector, required affinity)."""
    plugin = k8s_workloads.dra_publisher(release.chart, release.values)
    return plugin is not None and lands(plugin, shape, cat)


def with_slices(shapes: Sequence[NodeShape], index: Index, cat: Catalog) -> tuple[list[NodeShape], list[str]]:
    """Each group's shape with the slices one of its nodes publishes: the driver's GPUs (or MIG
    devices) where its kubelet plugin runs, and the slices the program declares for that node."""
    releases, _ = driver_releases(index, cat)
    declared, gaps = declared_slices(index)
    gaps += [
        f"ResourceSlice {s.name!r} is for node {s.node_name}, which the plan does not name: not placed" for s in declared if s.node_name
    ]
    out = []
    for shape in shapes:
        slices: list[dra_objects.ResourceSlice] = [s for s in declared if s.node_name is None]
        if any(_plugin_runs(r, shape, cat) for r in releases if _enabled(r, "gpus")):
            it = cat.find(shape.instance_type)
            gpu = shape.gpu or (it.gpu if it else None)
            published, unknown = dra_slices.node_slices(shape.group, gpu, shape.labels, cat.facts.dra)
            slices += published
            if unknown:
                gaps.append(f"node group {shape.group}: its DRA devices are not known: {unknown}")
                shape = dataclasses.replace(shape, slices_unknown=unknown)
        out.append(dataclasses.replace(shape, slices=tuple(slices)) if slices else shape)
    return out, gaps
