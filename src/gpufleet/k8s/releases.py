"""The Helm releases a fleet writes, named as its components name them, and whether their names fit
(rules/helm.py): the spec refuses a fleet name whose releases Helm would refuse or whose chart would
render two objects of one name, before any resource exists."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpufleet.catalog import chart_objects
from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s.args import NvidiaDevicePluginArgs
from gpufleet.k8s.device_plugins import ServedGroups, release_resource_name, release_values
from gpufleet.rules import helm

# The components' names under a fleet's: "<fleet>-<part>".
DEVICE_PLUGINS = "device-plugins"
GPU_OPERATOR = "gpu-operator"
DRA_DRIVER = "dra-driver"
KARPENTER = "karpenter"


def component_name(fleet: str, part: str) -> str:
    return f"{fleet}-{part}"


@dataclass(frozen=True)
class PlannedRelease:
    """A helm.sh/v3 Release a component writes: its resource name (the provider names the Helm
    release after it), chart, namespace and values."""

    resource_name: str
    chart: str
    namespace: str
    values: Mapping


def device_plugin_releases(fleet: str, served: ServedGroups, nvidia_args: NvidiaDevicePluginArgs, cat: Catalog) -> list[PlannedRelease]:
    plugins = cat.facts.charts.plugins()
    name = component_name(fleet, DEVICE_PLUGINS)
    return [
        PlannedRelease(release_resource_name(name, key), plugins[key].chart, plugins[key].namespace, values)
        for key, values in release_values(served, nvidia_args, cat).items()
    ]


def gpu_operator_release(fleet: str, cat: Catalog) -> PlannedRelease:
    chart = cat.facts.charts.gpu_operator
    return PlannedRelease(component_name(fleet, GPU_OPERATOR), chart.chart, chart.namespace, {})


def dra_driver_release(fleet: str, cat: Catalog) -> PlannedRelease:
    chart = cat.facts.charts.dra_driver_nvidia_gpu
    return PlannedRelease(component_name(fleet, DRA_DRIVER), chart.chart, chart.namespace, {})


def karpenter_release(fleet: str, cat: Catalog) -> PlannedRelease:
    facts = cat.facts.karpenter
    return PlannedRelease(component_name(fleet, KARPENTER), facts.chart.chart, facts.install.namespace, {})


def problems(planned: PlannedRelease, cat: Catalog) -> list[str]:
    """Why the release would not install by its names (none: it fits)."""
    release = helm.ReleaseName(planned.resource_name, helm.PROVIDER_RANDOM)  # no name input: the provider names it
    chart = chart_objects.named_chart(planned.chart, cat)
    rendered = chart_objects.release_objects(chart, release.pattern, planned.namespace, planned.values) if chart else None
    return [f"the Helm release {release.shown()!r} of chart {planned.chart}: {p}" for p in helm.release_problems(release, rendered)]


def fleet_name_problems(fleet: str, releases_of: Callable[[str], list[PlannedRelease]], cat: Catalog) -> list[str]:
    """Why the releases a fleet named `fleet` writes would not install by their names, each saying
    how long a fleet name fits (`releases_of(name)`: the releases under that name)."""

    def found(name: str) -> list[str]:
        return [p for r in releases_of(name) for p in problems(r, cat)]

    reasons = found(fleet)
    if not reasons:
        return []
    fits = next((n for n in range(len(fleet) - 1, 0, -1) if not found(fleet[:n])), 0)
    return [f"{reason}; a name of at most {fits} characters fits" for reason in reasons]
