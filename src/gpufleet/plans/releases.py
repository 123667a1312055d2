"""The objects a plan's Helm releases of charts gpufleet carries put in the cluster, as the pinned
charts' templates render them (catalog/chart_objects.py): what `gpufleet verify` holds the live
DaemonSets against, by name, labels and selector."""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from gpufleet.catalog import chart_objects, charts
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.chart_objects import RenderedDaemonSet
from gpufleet.plans.index import Index
from gpufleet.plans.pods import plugins
from gpufleet.rules import helm


def release_daemonsets(index: Index, cat: Catalog) -> dict[str, list[RenderedDaemonSet]]:
    """Per device-plugin release of the plan (by URN), the DaemonSets its pinned chart renders with
    the release's values: name, namespace, labels, selector, and where the pods go (the NVIDIA
    chart's MPS control daemon only on nodes labelled nvidia.com/mps.capable=true). A release the
    provider names renders names with "?" for each random character: match a live name with
    `fnmatch.fnmatchcase`. Left out: a release whose name is known only after apply, or of another
    chart version than the one gpufleet pins (its templates were not read)."""
    found: dict[str, list[RenderedDaemonSet]] = {}
    for key, chart, release in plugins(index, cat):
        name = helm.release_name(release.type, release.name, release.props.get("name"))
        named = chart_objects.named_chart(chart.chart, cat)
        if name is None or named is None or release.props.get("version") not in (None, named.version):
            continue
        given = release.props.get("values") if isinstance(release.props.get("values"), Mapping) else {}
        namespace = release.props.get("namespace")
        found[release.urn] = chart_objects.daemonsets(
            named.names,
            named.version,
            name.pattern,
            namespace if isinstance(namespace, str) else chart.namespace,
            charts.merge(named.defaults, given),
            charts.device_plugin_pod(key, chart, given),
        )
    return found


def matches(expected: RenderedDaemonSet, live: Mapping) -> bool:
    """Is the live DaemonSet (the API's JSON) the one the chart renders: same namespace, its name and
    every selector label of the rendered ones (globs where the provider named the release)?"""
    metadata = live.get("metadata") or {}
    selector = ((live.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return (
        metadata.get("namespace") == expected.namespace
        and fnmatchcase(str(metadata.get("name", "")), expected.name)
        and selector.keys() == expected.selector.keys()
        and all(fnmatchcase(str(selector[key]), value) for key, value in expected.selector.items())
    )
