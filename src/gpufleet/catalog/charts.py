"""The device-plugin charts gpufleet pins, as their templates render them: each chart's verbatim
values.yaml (data/charts/) merged with a release's values the way Helm merges them, then the pod
spec its DaemonSet template builds from them (tolerations, node selector, affinity, requests).

The components take a chart's default tolerations from here, and the placement simulator and the
policy pack take the plugin's pod from here, so all three read the chart the same way.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping

from ruamel.yaml import YAML

from gpufleet.catalog.catalog import shipped_yaml
from gpufleet.catalog.facts import Chart, DraDriverChart, DraDriverPod


@functools.cache
def _values_file(name: str) -> dict:
    return shipped_yaml(f"charts/{name}")


def defaults(chart: Chart | DraDriverChart) -> dict:
    """The chart's own values.yaml (a copy: callers may change it)."""
    return copy.deepcopy(_values_file(chart.values_file))


def merge(base: dict, given: Mapping | None) -> dict:
    """Helm's merge of user values over a chart's: maps merge key by key, anything else (lists
    included) replaces, and a null removes the chart's key."""
    merged = dict(base)
    for key, value in (given or {}).items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def at(values: Mapping, path: list[str]):
    found: object = values  # each step's value, a Mapping or not
    for key in path:
        if not isinstance(found, Mapping):
            return None
        found = found.get(key)
    return found


def default_tolerations(chart: Chart) -> list[dict]:
    """The tolerations the chart's values list (what a release replaces when it sets its own)."""
    return list(at(defaults(chart), chart.tolerations_path) or [])


def _pod(tolerations, node_selector, affinity, resources, name: str) -> dict:
    spec: dict = {"tolerations": list(tolerations or []), "containers": [{"name": name, "resources": dict(resources or {})}]}
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = affinity
    return spec


def _nvidia(chart: Chart, v: dict) -> dict | None:
    # templates/daemonset-device-plugin.yml: the top-level nodeSelector, affinity, tolerations, resources.
    if at(v, ["devicePlugin", "enabled"]) is False:
        return None
    return _pod(v.get("tolerations"), v.get("nodeSelector"), v.get("affinity"), v.get("resources"), "nvidia-device-plugin-ctr")


def _efa(chart: Chart, v: dict) -> dict | None:
    # templates/daemonset.yaml: CriticalAddonsOnly always, then `tolerations`; one required term per
    # supportedInstanceLabels key (In its values), the last one also excluding EKS Auto Mode nodes.
    labels = v.get("supportedInstanceLabels") or {}
    terms = [
        {"matchExpressions": [{"key": key, "operator": "In", "values": list(labels.get("values") or [])}]}
        for key in labels.get("keys") or []
    ]
    if terms:
        terms[-1]["matchExpressions"].append({"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["auto"]})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    tolerations = [*(t.model_dump(exclude_none=True) for t in chart.always_tolerations or []), *(v.get("tolerations") or [])]
    return _pod(tolerations, v.get("nodeSelector"), affinity, v.get("resources"), "aws-efa-k8s-device-plugin")


def _neuron(chart: Chart, v: dict) -> dict | None:
    # templates/device-plugin/device-plugin-daemonset.yaml and _helpers.tpl: devicePlugin.* values; the
    # affinity's placeholders are the instance-type label and the top-level neuronInstances.
    plugin = v.get("devicePlugin") or {}
    if not plugin.get("enabled"):
        return None

    def fill(node):
        if node == "__INSTANCE_TYPE_KEY__":
            return "node.kubernetes.io/instance-type"
        if node == "__NEURON_INSTANCES__":
            return list(v.get("neuronInstances") or [])
        if isinstance(node, Mapping):
            return {k: fill(x) for k, x in node.items()}
        if isinstance(node, list):
            return [fill(x) for x in node]
        return node

    affinity = fill(plugin.get("affinity")) if plugin.get("affinity") else None
    return _pod(plugin.get("tolerations"), plugin.get("nodeSelector"), affinity, plugin.get("resources"), "neuron-device-plugin")


_TEMPLATES = {"nvidiaDevicePlugin": _nvidia, "efaDevicePlugin": _efa, "neuronHelmChart": _neuron}


def device_plugin_pod(key: str, chart: Chart, given: Mapping | None) -> dict | None:
    """The pod spec (API shape) the chart's device-plugin DaemonSet runs with the release values
    `given`; None when those values switch the plugin off."""
    return _TEMPLATES[key](chart, merge(defaults(chart), given))


def release_tolerations(key: str, chart: Chart, given: Mapping | None) -> list[dict]:
    """What a device-plugin release's pod tolerates."""
    pod = device_plugin_pod(key, chart, given)
    return list(pod["tolerations"]) if pod else []


def _switched_on(values: Mapping, switch: str) -> bool:
    return at(values, ["resources", switch, "enabled"]) is True


def _dra_renders(pod: DraDriverPod, values: Mapping) -> bool:
    if pod.enabled_path is not None:
        return at(values, pod.enabled_path) is True
    return any(_switched_on(values, w) for w in pod.when)


def dra_driver_pods(chart: DraDriverChart, given: Mapping | None) -> list[tuple[DraDriverPod, object, dict]]:
    """(workload, its replicas as the template writes them, pod spec) of each workload a DRA driver
    release renders under its values `given` (merged over the chart's values.yaml as Helm merges
    them)."""
    values = merge(defaults(chart), given)
    found = []
    for pod in chart.pods:
        if not _dra_renders(pod, values):
            continue
        containers = [c for c in pod.containers if c.when is None or _switched_on(values, c.when)]
        part = at(values, pod.values_path)
        # The templates render each of these under `with`: an empty one is left out.
        spec = {key: part[key] for key in ("nodeSelector", "affinity", "tolerations") if isinstance(part, Mapping) and part.get(key)}
        spec["containers"] = [{"name": c.name, "resources": dict(at(values, c.resources_path) or {})} for c in containers]
        replicas = pod.replicas if pod.replicas is not None else at(values, pod.replicas_path or [])
        found.append((pod, replicas, spec))
    return found


def dra_read_paths(chart: DraDriverChart) -> list[list[str]]:
    """The value paths a DRA driver release's workloads are rendered from: its switches, names,
    each workload's placement, replicas and requests, and the GPU override."""
    paths = [["resources"], ["nameOverride"], ["namespaceOverride"], [chart.gpus_override.value]]
    for pod in chart.pods:
        paths += [[*pod.values_path, key] for key in ("nodeSelector", "affinity", "tolerations")]
        paths += [p for p in (pod.enabled_path, pod.replicas_path) if p] + [c.resources_path for c in pod.containers]
    return paths


def unread_values(given: Mapping | None, read: list[list[str]], prefix: tuple[str, ...] = ()) -> list[str]:
    """The dotted paths of the values a release sets (`given`) that no path of `read` covers."""
    found = []
    for key, value in (given or {}).items():
        path = (*prefix, str(key))
        covered = [r for r in read if tuple(r[: len(path)]) == path]
        if any(len(r) <= len(path) for r in covered):
            continue
        if covered and isinstance(value, Mapping):
            found += unread_values(value, read, path)
        elif not (isinstance(value, Mapping) and not value):
            found.append(".".join(path))
    return found


def nvidia_sharing(values: Mapping | None, gpu_resource: str) -> dict:
    """What the NVIDIA device plugin's values make of each GPU: the migStrategy, or the time-slicing
    of its default config (config.map[config.default], api/config/v1 sharing.timeSlicing):
    the resource it advertises (`gpu_resource`, or its .shared name with renameByDefault), replicas per GPU
    and failRequestsGreaterThanOne. Empty: whole GPUs as nvidia.com/gpu."""
    values = values or {}
    strategy = values.get("migStrategy")
    if strategy not in (None, "none"):
        return {"migStrategy": strategy}
    config = values.get("config") or {}
    files = config.get("map") or {}
    text = files.get(config.get("default") or "default") if isinstance(files, Mapping) else None
    if not isinstance(text, str):
        return {}
    document = YAML(typ="safe", pure=True).load(text) or {}
    slicing = (document.get("sharing") or {}).get("timeSlicing") or {}
    for resource in slicing.get("resources") or []:
        if resource.get("name") == gpu_resource:
            renamed = resource.get("rename") or (f"{gpu_resource}.shared" if slicing.get("renameByDefault") else gpu_resource)
            return {
                "resource": renamed,
                "replicas": int(resource.get("replicas", 1)),
                "failRequestsGreaterThanOne": bool(slicing.get("failRequestsGreaterThanOne")),
            }
    return {}


def operator_plugin_values(values: Mapping | None) -> dict:
    """The GPU Operator's device-plugin time-slicing in the NVIDIA device plugin chart's shape (its
    config file under devicePlugin.config.data instead of config.map), for `nvidia_sharing`."""
    config = at(values or {}, ["devicePlugin", "config"]) or {}
    if not isinstance(config, Mapping) or not isinstance(config.get("data"), Mapping):
        return {}
    return {"config": {"default": config.get("default"), "map": dict(config["data"])}}
