"""The names, labels and selectors a pinned chart's templates render for a release, as its helpers
build them (catalog facts `ChartNames`, each cited to the chart's template lines).

Every chart read here names its objects with Helm's scaffold helpers: `name` is `.Chart.Name` or
the nameOverride value; `fullname` is the fullnameOverride value, else the release name when it
contains `name`, else "<release>-<name>"; each `| trunc 63 | trimSuffix "-"`. An object's name is
the fullname and its suffix, cut again where its template cuts it.

A release the provider names (helm.sh/v3 Release without `name`) gets random characters after its
resource name: the caller passes them as "?" (one per character), so what renders here is a glob
pattern of the names' exact lengths (`fnmatch.fnmatchcase` matches a live name against it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.charts import at, defaults, merge
from gpufleet.catalog.facts import ChartNames, ChartObject

# Sprig's `trunc 63`: the helpers cut at the DNS label length (their own comment says why).
HELPER_CUT = 63


def cut(text: str) -> str:
    """`trunc 63 | trimSuffix "-"`: the first 63 characters, less one trailing dash."""
    text = text[:HELPER_CUT]
    return text[:-1] if text.endswith("-") else text


@dataclass(frozen=True)
class RenderedObject:
    kind: str
    name: str
    namespace: str | None  # None: cluster-scoped
    source: str


@dataclass(frozen=True)
class RenderedDaemonSet:
    """A DaemonSet as its chart renders it: its name, namespace, metadata labels, selector
    (matchLabels), and where its pods go (the template's own nodeSelector entries merged with the
    values', and the values' affinity)."""

    name: str
    namespace: str
    labels: dict[str, str]
    selector: dict[str, str]
    node_selector: dict[str, str]
    affinity: dict | None
    source: str
    suffix: str = ""  # after the fullname: "" is the chart's own plugin, "-mps-control-daemon" the NVIDIA MPS daemon


def _own(names: ChartNames, values: Mapping, key: str):
    found = at(values, [*names.values_path, key])
    return found if found else None


def chart_name(names: ChartNames, values: Mapping) -> str:
    return cut(str(_own(names, values, "nameOverride") or names.chart_name))


def fullname(names: ChartNames, release: str, values: Mapping) -> str:
    override = _own(names, values, "fullnameOverride")
    if override:
        return cut(str(override))
    name = str(_own(names, values, "nameOverride") or names.chart_name)
    return cut(release if name in release else f"{release}-{name}")


def _namespace(names: ChartNames, obj: ChartObject, release_namespace: str, values: Mapping) -> str | None:
    if obj.cluster_scoped:
        return None
    return obj.namespace or str(_own(names, values, "namespaceOverride") or release_namespace)


def _enabled(obj: ChartObject, values: Mapping) -> bool:
    return all(bool(at(values, path)) for path in obj.enabled_paths)


def object_name(names: ChartNames, obj: ChartObject, release: str, values: Mapping) -> str:
    name = fullname(names, release, values) + obj.suffix
    return cut(name) if obj.cut else name


def objects(names: ChartNames, release: str, namespace: str, values: Mapping) -> list[RenderedObject]:
    """The objects of a release whose names the chart builds, with `values` (the chart's values.yaml
    merged with the release's)."""
    return [
        RenderedObject(obj.kind, object_name(names, obj, release, values), _namespace(names, obj, namespace, values), obj.source)
        for obj in names.objects
        if _enabled(obj, values)
    ]


def _formatted(template: Mapping[str, str], fields: Mapping[str, str]) -> dict[str, str]:
    return {key: value.format(**fields) for key, value in template.items()}


def daemonsets(
    names: ChartNames, version: str, release: str, namespace: str, values: Mapping, pod: Mapping | None
) -> list[RenderedDaemonSet]:
    """The DaemonSets of a release: names, labels and selectors as the templates render them;
    `pod`, the plugin pod spec the values give (`charts.device_plugin_pod`), adds its nodeSelector
    and affinity to each (the chart's DaemonSets read the same values)."""
    name = chart_name(names, values)
    fields = {
        "name": name,
        "fullname": fullname(names, release, values),
        "release": release,
        "chart": names.chart_name,
        "version": version,
        "app_version": names.app_version,
    }
    override = _own(names, values, "selectorLabelsOverride")
    template_labels = {**_formatted(names.template_labels, fields), **(dict(override) if override else {})}
    selector_labels = dict(override) if override else _formatted(names.template_labels, fields)
    labels = _formatted(names.labels, fields)
    if "helm.sh/chart" in labels:
        labels["helm.sh/chart"] = cut(labels["helm.sh/chart"].replace("+", "_"))
    pod = pod or {}
    found = []
    for obj in names.objects:
        if obj.kind != "DaemonSet" or not _enabled(obj, values):
            continue
        found.append(
            RenderedDaemonSet(
                name=object_name(names, obj, release, values),
                namespace=str(_namespace(names, obj, namespace, values)),
                labels={**labels, **template_labels},
                selector={**_formatted(obj.selector, fields), **(selector_labels if obj.selector_labels else {})},
                node_selector={**obj.node_selector, **dict(pod.get("nodeSelector") or {})},
                affinity=pod.get("affinity"),
                source=obj.source,
                suffix=obj.suffix,
            )
        )
    return found


@dataclass(frozen=True)
class NamedChart:
    """A chart gpufleet carries whose names it reads: its plugin key (None: not a device plugin),
    pinned version, how it names objects, and its values.yaml (empty where none is kept)."""

    key: str | None
    version: str
    names: ChartNames
    defaults: dict


def named_chart(chart_ref: object, cat: Catalog) -> NamedChart | None:
    """The carried chart a release's `chart` input names, where its names were read."""
    charts_facts = cat.facts.charts
    for key, chart in [*charts_facts.plugins().items(), (None, charts_facts.gpu_operator)]:
        if chart.chart == chart_ref and chart.names is not None:
            return NamedChart(key, chart.version, chart.names, defaults(chart))
    karpenter = cat.facts.karpenter.chart
    if karpenter.chart == chart_ref and karpenter.names is not None:
        return NamedChart(None, karpenter.version, karpenter.names, {})
    return None


def release_objects(chart: NamedChart, release: str, namespace: str, given: Mapping | None) -> list[RenderedObject]:
    """The named objects a release of `chart` renders with its values `given`."""
    return objects(chart.names, release, namespace, merge(chart.defaults, given))
