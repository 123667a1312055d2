"""Pod templates read from Kubernetes objects in their API shape (camelCase, as the engine and the
policy pack see them): every workload kind, the Kubeflow MPIJob, and the pods EKS and the pinned
charts run. The placement simulator takes the PodTemplates these functions return."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from gpufleet.catalog import charts
from gpufleet.catalog.facts import (
    Addon,
    Chart,
    DraDriverChart,
    EksFacts,
    Karpenter,
    KarpenterChart,
    ManifestObject,
    NodeHealth,
    NodeLabel,
)
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.simulate.k8s_requests import host_ports, pod_requests
from gpufleet.simulate.k8s_shapes import PodClaim, PodTemplate
from gpufleet.simulate.k8s_terms import pod_rules
from gpufleet.simulate.k8s_topology import namespace_of
from gpufleet.simulate.loose import mapping

# Pulumi type tokens of the workload kinds: kubernetes:<group>/<version>:<Kind>.
KINDS_WITH_TEMPLATE = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "DaemonSet", "Job")


def kind_of(type_token: str) -> str | None:
    """The Kubernetes kind of a pulumi-kubernetes type token; None for other providers."""
    if not type_token.startswith("kubernetes:"):
        return None
    return type_token.rsplit(":", 1)[-1]


def _count(value: object, default: int) -> int:
    """A replica count; the engine's wire carries every number as a double (2.0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        return default
    return int(value)


def pod_specs(type_token: str, obj: Mapping) -> list[tuple[str, int | None, Mapping]]:
    """(where, replicas or None for a DaemonSet, pod spec) of every pod template of an object."""
    kind = kind_of(type_token)
    spec = obj.get("spec") if isinstance(obj, Mapping) else None
    if kind is None or not isinstance(spec, Mapping):
        return []
    if kind == "Pod":
        return [("spec", 1, spec)]
    if kind == "CronJob":
        job = (spec.get("jobTemplate") or {}).get("spec") or {}
        template = (job.get("template") or {}).get("spec")
        return (
            [("spec.jobTemplate.spec.template.spec", _count(job.get("parallelism"), 1), template)] if isinstance(template, Mapping) else []
        )
    if kind == "MPIJob":
        found: list[tuple[str, int | None, Mapping]] = []
        for role, default in (("Launcher", 1), ("Worker", 0)):
            replica = (spec.get("mpiReplicaSpecs") or {}).get(role) or {}
            template = (replica.get("template") or {}).get("spec")
            if isinstance(template, Mapping):
                found.append((f"spec.mpiReplicaSpecs.{role}.template.spec", _count(replica.get("replicas"), default), template))
        return found
    if kind not in KINDS_WITH_TEMPLATE:
        return []
    template = (spec.get("template") or {}).get("spec")
    if not isinstance(template, Mapping):
        return []
    if kind == "DaemonSet":
        replicas = None
    elif kind == "Job":
        replicas = _count(spec.get("parallelism"), 1)
    else:
        replicas = _count(spec.get("replicas"), 1)
    return [("spec.template.spec", replicas, template)]


def pod_template(
    owner: str,
    replicas: int | None,
    spec: Mapping,
    *,
    urn: str | None = None,
    source: str = "",
    advertises=(),
    labels: Mapping[str, str] | None = None,
) -> PodTemplate:
    notes: list[str] = []
    requests = pod_requests(spec, notes)
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = None
    if isinstance(affinity, Mapping):
        terms = tuple(t for t in affinity.get("nodeSelectorTerms") or [] if isinstance(t, Mapping))
    selector = spec.get("nodeSelector") or {}
    return PodTemplate(
        owner=owner,
        replicas=replicas,
        node_selector={str(k): str(v) for k, v in selector.items()} if isinstance(selector, Mapping) else {},
        affinity_terms=terms,
        tolerations=tuple(t for t in spec.get("tolerations") or [] if isinstance(t, Mapping)),
        requests=requests,
        host_ports=host_ports(spec),
        advertises=tuple(advertises),
        urn=urn,
        source=source,
        notes=tuple(notes),
        labels=labels,
        claims=pod_claims(spec),
        **pod_rules(spec, namespace_of(owner), labels),
    )


def pod_claims(spec: Mapping) -> tuple[PodClaim, ...]:
    """spec.resourceClaims (core/v1 PodResourceClaim): a name and one of resourceClaimName and
    resourceClaimTemplateName. Containers' resources.claims only say which container uses which
    of these; the scheduler allocates every one of the pod's."""
    found = []
    for entry in spec.get("resourceClaims") or []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        claim, template = entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName")
        found.append(PodClaim(entry["name"], claim if isinstance(claim, str) else None, template if isinstance(template, str) else None))
    return tuple(found)


def runtime_class_admitted(spec: Mapping, runtime_classes: Mapping[str, Mapping] | None) -> tuple[Mapping, list[str]]:
    """The pod spec as the RuntimeClass admission plugin leaves it at create (kubernetes/kubernetes
    plugin/pkg/admission/runtimeclass/admission.go, Admit: setOverhead, setScheduling): the
    class's `overhead.podFixed` becomes the pod's `overhead`, its `scheduling.nodeSelector` joins the
    pod's, its `scheduling.tolerations` are added. `runtime_classes` are the plan's, by name; a class
    the plan does not hold (None: the plan's classes are not known), or a pod the plugin would
    refuse, is a note: the spec is read as written."""
    name = spec.get("runtimeClassName")
    if not isinstance(name, str) or not name or runtime_classes is None:
        return spec, []
    found = runtime_classes.get(name)
    if found is None:
        return spec, [f"RuntimeClass {name!r} is not in the plan: its overhead and scheduling are not counted"]
    admitted = dict(spec)
    overhead = mapping(found.get("overhead")).get("podFixed")
    if isinstance(overhead, Mapping) and overhead:
        if spec.get("overhead") not in (None, overhead):
            return spec, [f"RuntimeClass {name!r}: the API server refuses the pod (its overhead is not the class's podFixed)"]
        admitted["overhead"] = overhead
    scheduling = mapping(found.get("scheduling"))
    wanted = mapping(scheduling.get("nodeSelector"))
    given = mapping(spec.get("nodeSelector"))
    clash = sorted(k for k, v in wanted.items() if k in given and given[k] != v)
    if clash:
        return spec, [f"RuntimeClass {name!r}: the API server refuses the pod (its nodeSelector conflicts on {', '.join(map(str, clash))})"]
    if wanted:
        admitted["nodeSelector"] = {**given, **wanted}
    tolerations = [t for t in scheduling.get("tolerations") or [] if isinstance(t, Mapping)]
    if tolerations:
        held = list(spec.get("tolerations") or [])
        admitted["tolerations"] = held + [t for t in tolerations if t not in held]
    return admitted, []


def object_pods(
    type_token: str, name: str, obj: Mapping, urn: str | None = None, runtime_classes: Mapping[str, Mapping] | None = None
) -> list[PodTemplate]:
    """The pod templates of a Kubernetes object (none for kinds that run no pods), each as the
    RuntimeClass admission plugin leaves it where `runtime_classes` (the plan's, by name) are given."""
    kind = kind_of(type_token)
    metadata = mapping(obj.get("metadata")) if isinstance(obj, Mapping) else {}
    namespace = metadata.get("namespace") if isinstance(metadata.get("namespace"), str) else "default"
    label = f"{kind} {namespace}/{metadata.get('name') if isinstance(metadata.get('name'), str) else name}"
    found = []
    for where, replicas, spec in pod_specs(type_token, obj):
        role = where.split(".")[2] if kind == "MPIJob" else None
        # Labels known only after apply stay None, not empty: what a selector matches is not known.
        labels = _metadata(obj, where, "labels")
        spec, admission = runtime_class_admitted(spec, runtime_classes)
        template = pod_template(f"{label} ({role})" if role else label, replicas, spec, urn=urn, labels=labels)
        notes = (*template.notes, *admission)
        found.append(dataclasses.replace(template, annotations=_metadata(obj, where, "annotations") or {}, notes=notes))
    return found


def _metadata(obj: Mapping, where: str, part: str) -> dict[str, str] | None:
    """The annotations or labels of the pod template whose spec is at `where` (its metadata beside
    it): none given is empty; None where they are known only after apply."""
    value: object = obj
    for key in [*where.split(".")[:-1], "metadata", part]:
        value = value.get(key) if isinstance(value, Mapping) else None
    if value == UNKNOWN:
        return None
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def addon_pods(
    addons: Mapping[str, Addon], overrides: Mapping[str, Mapping] | None = None, urn: str | None = None, addon_name: str | None = None
) -> list[PodTemplate]:
    """The pods of EKS's default add-ons (curated), with an EKS Addon resource's configurationValues
    (replicaCount, tolerations, nodeSelector, affinity, resources) where one configures them; with
    `addon_name`, the workloads of that one add-on."""
    found = []
    for name, addon in addons.items():
        spec = dict(addon.spec)
        replicas = addon.replicas if addon.kind != "DaemonSet" else None
        given = (overrides or {}).get(name) or {}
        if replicas is not None and "replicaCount" in given:
            replicas = _count(given["replicaCount"], replicas)
        for key in ("tolerations", "nodeSelector", "affinity"):
            if key in given:
                spec[key] = given[key]
        if isinstance(given.get("resources"), Mapping):
            spec["containers"] = [{**spec["containers"][0], "resources": given["resources"]}]
        source = f"EKS add-on {addon_name or name}: {addon.source}"
        found.append(pod_template(f"{addon.kind} {addon.namespace}/{name}", replicas, spec, urn=urn, source=source))
    return found


def monitoring_pods(health: NodeHealth, values: Mapping | None, urn: str | None = None) -> list[PodTemplate]:
    """The node monitoring agent add-on's DaemonSets, with its configuration's values for each."""
    given = values if isinstance(values, Mapping) else {}
    overrides = {pod: mapping(given.get(key)) for pod, key in health.values_keys.items()}
    return addon_pods(health.pods, overrides, urn, health.monitoring_addon)


def release_version(chart: Chart | KarpenterChart | DraDriverChart, pinned: str | None) -> tuple[str, tuple[str, ...]]:
    """The chart version a release's pods are named by (the one it pins, else gpufleet's), and what
    to note on each of them when that is not the version whose values gpufleet holds: it holds one
    per chart, its own, and reads every release of the chart from those. Helm finds a pinned
    version exactly, or as the semantic version or range it names, the newest first ("0.5.30" finds
    v0.5.30; helm/helm pkg/repo/index.go @v3.21.4 L183-L223, IndexFile.Get); a release that pins
    none gets the repository's newest, which gpufleet cannot know."""
    if pinned is None:
        said = "the release pins no chart version (Helm installs the repository's newest)"
    elif pinned == UNKNOWN:
        said = "the release's chart version is not known offline"
    elif pinned.removeprefix("v") == chart.version.removeprefix("v"):
        return pinned, ()
    else:
        said = f"the release pins chart version {pinned}"
    named = pinned if pinned not in (None, UNKNOWN) else chart.version
    return named, (f"{said}; its pods are read from the values of {chart.version}, the version gpufleet has",)


def device_plugin_pods(
    key: str,
    chart: Chart,
    given: Mapping | None,
    release: str,
    urn: str | None,
    resources: tuple[str, ...],
    namespace: str | None = None,
    version: str | None = None,
) -> list[PodTemplate]:
    """The DaemonSet pod of a device-plugin release (none when its values switch the plugin off),
    named as the release writes it (its namespace and chart version, where it gives them). The pod
    is rendered from the pinned chart's values: a release of another version is noted as such
    (`release_version`)."""
    spec = charts.device_plugin_pod(key, chart, given)
    if spec is None:
        return []
    named, notes = release_version(chart, version)
    owner = f"DaemonSet {namespace or chart.namespace}/{release} ({chart.chart.rsplit('/', 1)[-1]} {named})"
    template = pod_template(owner, None, spec, urn=urn, source=f"chart {chart.chart} {chart.version} values", advertises=resources)
    return [dataclasses.replace(template, notes=(*template.notes, *notes))]


def gpu_operator_pods(
    chart: Chart,
    given: Mapping | None,
    release: str,
    urn: str | None,
    resource: str,
    state_label: NodeLabel,
    version: str | None = None,
) -> list[PodTemplate]:
    """The GPU Operator's pods as the scheduler sees them: its device plugin, a DaemonSet with the
    operands' tolerations (daemonsets.tolerations) on the nodes node feature discovery labels (its
    workers' nodeSelector), advertising nvidia.com/gpu, unless the release turns it off; then its
    controllers (controller_pods). Each read from the values gpufleet holds, and noted so where the
    release pins another `version` (`release_version`).

    The plugin's DaemonSet selects its state label (`state_label.key`) "true", which the operator
    writes on a GPU node only where the label is missing or empty: a node group that sets it to
    anything else (DRA's "false") keeps the plugin off. So the pod takes a node whose label is
    absent, empty or "true"."""
    defaults = charts.defaults(chart)
    values = charts.merge(defaults, given)
    controllers = controller_pods(chart, defaults, given, values, release, urn, version)
    if charts.at(values, ["devicePlugin", "enabled"]) is False:
        return controllers
    spec = {
        "tolerations": list(charts.at(values, chart.tolerations_path) or []),
        "nodeSelector": dict(charts.at(values, ["node-feature-discovery", "worker", "nodeSelector"]) or {}),
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": state_label.key, "operator": "DoesNotExist"}]},
                        {"matchExpressions": [{"key": state_label.key, "operator": "In", "values": ["", "true"]}]},
                    ]
                }
            }
        },
        "containers": [{"name": "nvidia-device-plugin"}],
    }
    named, notes = release_version(chart, version)
    owner = f"DaemonSet {chart.namespace}/nvidia-device-plugin-daemonset ({chart.chart} {named})"
    source = f"chart {chart.chart} {chart.version} values"
    plugin = pod_template(owner, None, spec, urn=urn, source=source, advertises=(resource,))
    return [dataclasses.replace(plugin, notes=(*plugin.notes, *notes)), *controllers]


def dra_driver_pods(
    chart: DraDriverChart,
    given: Mapping | None,
    release_namespace: str,
    urn: str | None,
    version: str | None = None,
    gpu_resource: str | None = None,
) -> list[PodTemplate]:
    """The workloads a release of an NVIDIA DRA driver chart renders (its kubelet plugin DaemonSet,
    and where its values turn them on the ComputeDomain controller and the webhook), from the
    chart's values.yaml under the release's `given` values, named as its templates name them. Each
    pod notes what the release sets that gpufleet does not read, a release Helm refuses to render,
    and a release of another chart `version` (`release_version`). With GPUs on, the kubelet plugin
    serves the nodes' GPUs instead of a device plugin's `gpu_resource`."""
    named, notes = release_version(chart, version)
    values = charts.merge(charts.defaults(chart), given)
    gpus = charts.at(values, ["resources", "gpus", "enabled"]) is True
    notes += _dra_value_notes(chart, given, gpus and charts.at(values, [chart.gpus_override.value]) is not True)
    overrides = mapping(given)
    # _helpers.tpl: name is nameOverride or the chart's name, cut at 63; namespace is namespaceOverride
    # or the release's.
    name = str(overrides.get("nameOverride") or chart.chart)[:63].removesuffix("-")
    namespace = str(overrides.get("namespaceOverride") or release_namespace)
    found = []
    for pod, replicas, spec in charts.dra_driver_pods(chart, given):
        owner = f"{pod.kind} {namespace}/{name}{pod.suffix} ({chart.chart} {named})"
        count = None if pod.kind == "DaemonSet" else _count(replicas, 1)
        template = pod_template(owner, count, spec, urn=urn, source=pod.source)
        instead = (gpu_resource,) if pod.publishes and gpus and gpu_resource else ()
        found.append(dataclasses.replace(template, notes=(*template.notes, *notes), serves_instead=instead))
    return found


def dra_publisher(chart: DraDriverChart, given: Mapping | None) -> PodTemplate | None:
    """The pod of a DRA driver release's kubelet plugin, where its values render it: the nodes it
    runs on publish the driver's devices."""
    rendered = [pod_template(pod.kind, None, spec) for pod, _, spec in charts.dra_driver_pods(chart, given) if pod.publishes]
    return rendered[0] if rendered else None


def _dra_value_notes(chart: DraDriverChart, given: Mapping | None, refused: bool) -> tuple[str, ...]:
    notes = []
    unread = charts.unread_values(given, charts.dra_read_paths(chart))
    if unread:
        notes.append(f"the release sets values gpufleet does not read for its pods: {', '.join(sorted(unread))}")
    if refused:
        override = chart.gpus_override
        notes.append(f"Helm refuses to render the release: resources.gpus.enabled is on without {override.value} ({override.source})")
    return tuple(notes)


def controller_pods(
    chart: Chart, defaults: Mapping, given: Mapping | None, values: Mapping, release: str, urn: str | None, version: str | None = None
) -> list[PodTemplate]:
    """The Deployments a chart runs besides its node agents (the GPU Operator's controller, node
    feature discovery's master and garbage collector). `values` are the chart's `defaults` merged
    with the release's `given` ones; a Deployment's own merge as Helm's: the subchart's defaults,
    the chart's values.yaml, the release's values (where a null removes a key, and a Deployment
    without replicas gets Kubernetes' one). A release of another chart `version` is noted
    (`release_version`)."""
    named, notes = release_version(chart, version)
    found = []
    for c in chart.controllers:
        if any(charts.at(values, path) is False for path in c.enabled_paths):
            continue
        merged = c.defaults
        for layer in (defaults, given or {}):
            part = charts.at(layer, c.values_path)
            merged = charts.merge(merged, part if isinstance(part, Mapping) else {})
        replicas = c.replicas if c.replicas is not None else _count(merged.get("replicaCount"), 1)
        spec = {key: merged[key] for key in ("nodeSelector", "tolerations", "affinity") if merged.get(key)}
        spec["containers"] = [{"name": c.name, "resources": merged.get("resources") or {}}]
        name = f"{_fullname(release, c.subchart)}-{c.name}" if c.subchart else c.name
        template = pod_template(f"Deployment {chart.namespace}/{name} ({chart.chart} {named})", replicas, spec, urn=urn, source=c.source)
        found.append(dataclasses.replace(template, notes=(*template.notes, *notes)))
    return found


def karpenter_pods(
    karpenter: Karpenter, given: Mapping | None, namespace: str | None, urn: str | None, version: str | None = None
) -> list[PodTemplate]:
    """Karpenter's controller pods as its chart's values make them (the release's over the chart's),
    noted where the release pins another chart `version` (`release_version`)."""
    c = karpenter.controller
    values = charts.merge(c.defaults, given)
    spec = {key: values[key] for key in ("nodeSelector", "tolerations", "affinity") if values.get(key)}
    spec["containers"] = [{"name": "controller", "resources": charts.at(values, ["controller", "resources"]) or {}}]
    named, notes = release_version(karpenter.chart, version)
    owner = f"Deployment {namespace or karpenter.install.namespace}/{c.name} ({karpenter.chart.chart.rsplit('/', 1)[-1]} {named})"
    # What is not simulated only narrows where a replica may go: the pod's source says it, and a
    # replica the simulation leaves Pending is Pending under it too.
    source = f"{c.source}; not simulated: {'; '.join(c.not_simulated)}"
    template = pod_template(owner, _count(values.get("replicas"), 1), spec, urn=urn, source=source)
    template = dataclasses.replace(template, notes=(*template.notes, *notes))
    anti = charts.at(values, ["affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"])
    # The chart gives a term without a selector its own pods' labels: on the hostname, one per node.
    one = any(isinstance(t, Mapping) and t.get("topologyKey") == "kubernetes.io/hostname" and "labelSelector" not in t for t in anti or [])
    return [dataclasses.replace(template, one_per_node=one)]


def _fullname(release: str, chart: str) -> str:
    """Helm's conventional <chart>.fullname helper (node feature discovery's _helpers.tpl): the
    release name when it holds the chart's, else both, cut at 63 characters without a trailing hyphen."""
    return (release if chart in release else f"{release}-{chart}")[:63].removesuffix("-")


def manifest_pods(entry: ManifestObject, urn: str | None) -> list[PodTemplate]:
    """The pods of a pinned manifest's Deployment (curated: the MPI operator)."""
    return [pod_template(f"{entry.kind} {entry.namespace}/{entry.name}", entry.replicas, entry.spec, urn=urn, source=entry.source)]


def advertised(chart: Chart, values: Mapping | None, eks: EksFacts) -> tuple[str, ...]:
    """The extended resources a device-plugin release advertises on the nodes it runs on."""
    if chart.serves == "efa":
        return (eks.efa_resource,)
    if chart.serves == "neuron":
        return (eks.accelerator_resources.neuron, eks.neuron_core_resource)
    sharing = charts.nvidia_sharing(values, eks.accelerator_resources.nvidia)
    return (sharing.get("resource", eks.accelerator_resources.nvidia),)
