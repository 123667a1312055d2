"""Placement of a whole plan: node groups, capacity providers, pods and tasks read from any Pulumi
program's resources (types, inputs and property dependencies only), then simulated.

The policy pack hands in the resources of `pulumi preview` (`k8s-pods-schedulable`,
`ecs-tasks-placeable`); gpufleet's plan and `check` hand in a JSON plan's resources. Both reach the
same `placement()`, which calls the same simulators the stack spec calls.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpufleet.components.catalog import catalog, charts, ecs_scheduler, k8s_scheduler, k8s_workloads, node_capacity, predicates
from gpufleet.components.catalog.catalog import Catalog
from gpufleet.components.catalog.ecs_placement import PlacementSyntaxError, admitted_instance_types
from gpufleet.components.catalog.efa import EFA_TYPES
from gpufleet.components.catalog import tokens

NODE_GROUP = tokens.EKS_NODE_GROUP
CLUSTER = tokens.EKS_CLUSTER
ADDON = tokens.EKS_ADDON
LAUNCH_TEMPLATE = tokens.LAUNCH_TEMPLATE
SUBNET = tokens.SUBNET
RELEASE = tokens.HELM_RELEASE
CONFIG_FILES = (tokens.K8S_CONFIG_FILE, tokens.K8S_CONFIG_FILE_V1)
TASK_DEFINITION = tokens.ECS_TASK_DEFINITION
SERVICE = tokens.ECS_SERVICE
CAPACITY_PROVIDER = tokens.ECS_CAPACITY_PROVIDER
AUTO_SCALING_GROUP = tokens.ASG
ACK_NODE_POOL = tokens.ACK_NODE_POOL
ACK_CLUSTER = tokens.ACK_CLUSTER


# The resource types the placement reads (and every Kubernetes object): callers may hand in only these.
READS = frozenset(
    {NODE_GROUP, CLUSTER, ADDON, LAUNCH_TEMPLATE, SUBNET, TASK_DEFINITION, SERVICE, CAPACITY_PROVIDER, AUTO_SCALING_GROUP, ACK_NODE_POOL, ACK_CLUSTER}
)


def reads(type_token: str) -> bool:
    return type_token in READS or type_token.startswith("kubernetes:")


@dataclass(frozen=True)
class Resource:
    """A resource as the placement reads it: inputs in the engine's camelCase shape, and for each
    input the URNs of the resources it depends on."""

    urn: str
    type: str
    name: str
    props: Mapping
    deps: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class PlanPlacement:
    pods: list[k8s_scheduler.Placement]
    tasks: list[ecs_scheduler.TaskPlacement]
    shapes: list[k8s_scheduler.NodeShape]
    gaps: list[str]  # what the plan lacks for a judgement (its verdicts are then advisory)

    def certain(self, placed) -> bool:
        """Is a verdict decided by what the plan holds (no gap, nothing assumed)?"""
        return not self.gaps and not placed.notes

    def pending_pods(self) -> list[k8s_scheduler.Placement]:
        return [p for p in self.pods if p.status == k8s_scheduler.PENDING]

    def unserved(self) -> list[tuple[k8s_scheduler.Placement, k8s_scheduler.NodeShape, list[str]]]:
        """(device plugin, group, resources) where a plugin runs on no node of a group it serves."""
        return [(p, shape, wanted) for p in self.pods for shape, wanted in k8s_scheduler.unserved(p, self.shapes)]

    def pending_tasks(self) -> list[ecs_scheduler.TaskPlacement]:
        return [t for t in self.tasks if t.status == ecs_scheduler.PENDING]

    def as_dict(self) -> dict:
        """The plan's `placement` block (documented in README "Placement")."""
        return {
            "nodeGroups": [
                {"nodeGroup": s.group, "instanceType": s.instance_type, "nodes": {"min": s.min_nodes, "desired": s.nodes, "max": s.max_nodes},
                 "allocatable": {k: k8s_scheduler.show(k, v) for k, v in sorted(s.allocatable.items())}}
                for s in self.shapes
            ],
            "pods": [
                {
                    "pod": p.pod.owner,
                    "urn": p.pod.urn,
                    "replicas": p.pod.replicas if p.pod.replicas is not None else "one per node",
                    "status": p.status,
                    "nodeGroups": {g: {"perNode": n, "placed": p.placed.get(g, 0)} for g, n in sorted(p.per_node.items())},
                    **({"scaleUp": dict(p.scaled_up)} if p.scaled_up else {}),
                    **({"pending": p.pending, "message": p.message} if p.pending else {}),
                    **({"notes": list(p.notes)} if p.notes else {}),
                    **({"source": p.pod.source} if p.pod.source else {}),
                }
                for p in self.pods
            ],
            "tasks": [
                {
                    "task": t.task.family,
                    "urn": t.task.urn,
                    "capacityProvider": t.provider,
                    "status": t.status,
                    "perInstance": t.per_instance,
                    **({"desiredCount": t.desired, "instancesNeeded": t.instances_needed} if t.desired is not None else {}),
                    **({"reason": t.reason} if t.reason else {}),
                    **({"notes": list(t.notes)} if t.notes else {}),
                }
                for t in self.tasks
            ],
            "gaps": list(self.gaps),
        }


class _Index:
    def __init__(self, resources: Sequence[Resource]):
        self.resources = list(resources)
        self.by_urn = {r.urn: r for r in resources}

    def of(self, type_: str) -> list[Resource]:
        return [r for r in self.resources if r.type == type_]

    def deps(self, r: Resource, *types: str, prop: str | None = None) -> list[Resource]:
        urns = r.deps.get(prop, ()) if prop else [u for us in r.deps.values() for u in us]
        found = []
        for urn in dict.fromkeys(urns):
            dep = self.by_urn.get(urn)
            if dep is not None and dep.type in types:
                found.append(dep)
        return found


def _int(value: object, default: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return default
    try:
        return int(float(value))
    except ValueError:
        return default


# --- EKS ----------------------------------------------------------------------------------------


def node_group_instance_type(index: _Index, group: Resource, cat: Catalog):
    """The one type a managed group runs: its instanceTypes, else its launch template's (capacity blocks)."""
    names = [t for t in group.props.get("instanceTypes") or [] if isinstance(t, str)]
    if not names:
        names = [t.props.get("instanceType") for t in index.deps(group, LAUNCH_TEMPLATE) if isinstance(t.props.get("instanceType"), str)]
    return cat.find(names[0]) if len(names) == 1 else None


def _efa_interfaces(index: _Index, group: Resource) -> int:
    return sum(
        1
        for template in index.deps(group, LAUNCH_TEMPLATE)
        for ni in template.props.get("networkInterfaces") or []
        if isinstance(ni, Mapping) and ni.get("interfaceType") in EFA_TYPES
    )


def _zones(index: _Index, group: Resource) -> list[str]:
    subnets = index.deps(group, SUBNET)
    zones = [s.props.get("availabilityZone") for s in subnets]
    return [z for z in zones if isinstance(z, str)] if subnets and all(isinstance(z, str) for z in zones) else []


def _plugins(index: _Index, cat: Catalog) -> list[tuple[str, dict, Resource]]:
    by_chart = {c["chart"]: (key, c) for key, c in cat.curated["charts"].items() if "serves" in c}
    return [(*by_chart[r.props["chart"]], r) for r in index.of(RELEASE) if r.props.get("chart") in by_chart]


def advertised(chart: dict, values: Mapping | None, eks: dict) -> tuple[str, ...]:
    """The extended resources a device-plugin release advertises on the nodes it runs on."""
    if chart["serves"] == "efa":
        return (eks["efaResource"],)
    if chart["serves"] == "neuron":
        return (eks["acceleratorResources"]["neuron"], eks["neuronCoreResource"])
    sharing = charts.nvidia_sharing(values, eks["acceleratorResources"]["nvidia"])
    return (sharing.get("resource", eks["acceleratorResources"]["nvidia"]),)


def node_shapes(index: _Index, cat: Catalog, gpu_sharing: dict) -> tuple[list[k8s_scheduler.NodeShape], list[str]]:
    eks = cat.curated["eks"]
    shapes, gaps = [], []
    for group in index.of(NODE_GROUP):
        it = node_group_instance_type(index, group, cat)
        if it is None:
            gaps.append(f"node group {group.name!r}: its instance type is not one known type")
            continue
        scaling = group.props.get("scalingConfig") or {}
        sizes = (_int(scaling.get("minSize")), _int(scaling.get("desiredSize")), _int(scaling.get("maxSize"), 1))
        taints = [k8s_scheduler.taint(t) for t in group.props.get("taints") or [] if isinstance(t, Mapping)]
        ami_type = group.props.get("amiType") if isinstance(group.props.get("amiType"), str) else "AL2023_x86_64_STANDARD"
        labels = {str(k): str(v) for k, v in (group.props.get("labels") or {}).items()}
        name = node_group_name(group.props, group.name)
        shapes.append(
            node_capacity.eks_node_shape(
                it,
                group=name,
                ami_type=ami_type,
                labels=labels,
                taints=taints,
                sizes=sizes,
                capacity_type=group.props.get("capacityType") or "ON_DEMAND",
                zones=_zones(index, group),
                efa_interfaces=_efa_interfaces(index, group),
                gpu_sharing=gpu_sharing,
                facts=cat.curated,
            )
        )
    for pool in index.of(ACK_NODE_POOL):
        shape = _ack_shape(pool, cat)
        if shape is None:
            gaps.append(f"ACK node pool {pool.name!r}: none of its instance types has sourced GPU facts")
        else:
            shapes.append(shape)
    if index.of(ACK_NODE_POOL) and not index.of(ACK_CLUSTER):
        gaps.append("the ACK node pools join an existing cluster: its other node pools are not in the plan")
    return shapes, gaps


def _ack_shape(pool: Resource, cat: Catalog) -> k8s_scheduler.NodeShape | None:
    props = pool.props
    labels = {str(l.get("key")): str(l.get("value")) for l in props.get("labels") or [] if isinstance(l, Mapping)}
    taints = [k8s_scheduler.taint(t) for t in props.get("taints") or [] if isinstance(t, Mapping)]
    scaling = props.get("scalingConfig") or {}
    if scaling.get("enable"):
        sizes = (_int(scaling.get("minSize")), _int(scaling.get("minSize")), _int(scaling.get("maxSize"), 1))
    else:
        desired = _int(props.get("desiredSize"))
        sizes = (desired, desired, desired)
    name = props.get("nodePoolName") if isinstance(props.get("nodePoolName"), str) else pool.name
    types = [t for t in props.get("instanceTypes") or [] if isinstance(t, str)]
    return node_capacity.ack_node_shape(name, types, labels, taints, sizes, cat.curated["ack"])


def _addon_overrides(index: _Index) -> dict[str, Mapping]:
    found = {}
    for addon in index.of(ADDON):
        text = addon.props.get("configurationValues")
        try:
            values = json.loads(text) if isinstance(text, str) else {}
        except ValueError:
            values = {}
        if isinstance(values, Mapping) and isinstance(addon.props.get("addonName"), str):
            found[addon.props["addonName"]] = values
    return found


def pod_templates(index: _Index, cat: Catalog) -> tuple[list[k8s_scheduler.PodTemplate], list[str]]:
    """Device-plugin DaemonSets, EKS's default add-ons, pinned manifests, then the plan's workloads."""
    eks, charts_facts = cat.curated["eks"], cat.curated["charts"]
    pods: list[k8s_scheduler.PodTemplate] = []
    gaps: list[str] = []
    for key, chart, release in _plugins(index, cat):
        values = release.props.get("values") if isinstance(release.props.get("values"), Mapping) else {}
        name = release.props.get("name") if isinstance(release.props.get("name"), str) else release.name
        pods += k8s_workloads.device_plugin_pods(key, chart, values, name, release.urn, advertised(chart, values, eks))
    clusters = index.of(CLUSTER)
    if clusters:
        if any(c.props.get("bootstrapSelfManagedAddons") is not False for c in clusters):
            pods += k8s_workloads.addon_pods(eks["defaultAddons"], _addon_overrides(index), clusters[0].urn)
    elif index.of(NODE_GROUP):
        gaps.append("the plan joins an existing cluster: its other node groups and running pods are not in the plan")
    elif any(k8s_workloads.kind_of(r.type) for r in index.resources) and not index.of(ACK_NODE_POOL):
        gaps.append("the plan creates no cluster and no node group: the nodes its pods run on are not in the plan")
    if len(clusters) > 1:
        gaps.append("the plan has several clusters: pods are judged against every node group")
    operator = charts_facts["mpiOperator"]
    for config in (r for t in CONFIG_FILES for r in index.of(t)):
        if config.props.get("file") == operator["manifest"]:
            pods += k8s_workloads.manifest_pods(operator["operator"], config.urn)
    for r in index.resources:
        if k8s_workloads.kind_of(r.type) and r.type != RELEASE:
            pods += k8s_workloads.object_pods(r.type, r.name, r.props, r.urn)
    return pods, gaps


# --- ECS ----------------------------------------------------------------------------------------


def task_shape(td: Resource, ecs_facts: dict) -> tuple[ecs_scheduler.TaskShape, list[str]]:
    notes = []
    text = td.props.get("containerDefinitions")
    try:
        containers = json.loads(text) if isinstance(text, str) else list(text or [])
    except ValueError:
        containers, _ = [], notes.append("containerDefinitions is not JSON")
    containers = [c for c in containers if isinstance(c, Mapping)]
    cpu = _int(td.props.get("cpu")) or sum(_int(c.get("cpu")) for c in containers)
    memory = _int(td.props.get("memory")) or sum(_int(c.get("memoryReservation")) or _int(c.get("memory")) for c in containers)
    gpus = sum(_int(r.get("value")) for c in containers for r in c.get("resourceRequirements") or [] if isinstance(r, Mapping) and r.get("type") == "GPU")
    chips = set()
    for c in containers:
        for device in (c.get("linuxParameters") or {}).get("devices") or []:
            index = predicates.neuron_device_index(device.get("hostPath") if isinstance(device, Mapping) else None, ecs_facts)
            if index is not None:
                chips.add(index)
    network = td.props.get("networkMode") or "bridge"
    ports = set()
    if network in ("bridge", "host"):
        for c in containers:
            for mapping in c.get("portMappings") or []:
                port = _int(mapping.get("hostPort")) or (_int(mapping.get("containerPort")) if network == "host" else 0)
                if port:
                    ports.add((port, str(mapping.get("protocol") or "tcp")))
    family = td.props.get("family") if isinstance(td.props.get("family"), str) else td.name
    return ecs_scheduler.TaskShape(family, cpu, memory, gpus, frozenset(chips), frozenset(ports), td.urn), notes


def _instance_shapes(index: _Index, cat: Catalog) -> dict[str, tuple[ecs_scheduler.InstanceShape, Resource]]:
    found = {}
    for cp in index.of(CAPACITY_PROVIDER):
        for group in index.deps(cp, AUTO_SCALING_GROUP):
            templates = index.deps(group, LAUNCH_TEMPLATE)
            names = {t.props.get("instanceType") for t in templates}
            it = cat.find(next(iter(names))) if len(names) == 1 else None
            if it is None:
                continue
            registered = node_capacity.ecs_registered(it, cat.curated["memoryOverhead"])
            provider = cp.props.get("name") if isinstance(cp.props.get("name"), str) else cp.name
            managed = ((cp.props.get("autoScalingGroupProvider") or {}).get("managedScaling") or {}).get("status") == "ENABLED"
            found[cp.urn] = (
                ecs_scheduler.InstanceShape(
                    provider,
                    it.name,
                    registered["cpu"],
                    registered["memory"],
                    registered["memoryEstimate"],
                    predicates.whole_gpus(it) or 0,
                    predicates.neuron_chips(it) or 0,
                    _int(group.props.get("desiredCapacity")),
                    _int(group.props.get("maxSize"), 1),
                    managed,
                ),
                cp,
            )
    return found


def task_placements(index: _Index, cat: Catalog) -> tuple[list[ecs_scheduler.TaskPlacement], list[str]]:
    instances = _instance_shapes(index, cat)
    by_type: dict[str, list[ecs_scheduler.InstanceShape]] = {}
    for shape, _ in instances.values():
        by_type.setdefault(shape.instance_type, []).append(shape)
    results, gaps, served = [], [], set()
    for service in index.of(SERVICE):
        tds = index.deps(service, TASK_DEFINITION, prop="taskDefinition")
        if not tds:
            continue
        task, notes = task_shape(tds[0], cat.ecs())
        served.add(tds[0].urn)
        cps = [instances[cp.urn][0] for cp in index.deps(service, CAPACITY_PROVIDER) if cp.urn in instances]
        distinct = any(isinstance(c, Mapping) and c.get("type") == "distinctInstance" for c in service.props.get("placementConstraints") or [])
        result = ecs_scheduler.place_task(task, cps[0] if cps else None, _int(service.props.get("desiredCount")), distinct)
        result.notes += notes
        if not cps:
            result.notes.append("its capacity is not in this plan (a launch type or another program's capacity provider)")
        results.append(result)
    for td in index.of(TASK_DEFINITION):
        if td.urn in served:
            continue
        task, notes = task_shape(td, cat.ecs())
        candidates = _admitted_instances(td, by_type, cat)
        best = max(candidates, key=lambda s: ecs_scheduler.per_instance(task, s)[0], default=None)
        result = ecs_scheduler.place_task(task, best, None)
        result.notes += notes
        if best is None:
            result.notes.append("no capacity provider of this plan runs a type its memberOf admits")
        results.append(result)
    for placement, why in ecs_scheduler.shared_capacity(results, {s.provider: s for s, _ in instances.values()}):
        placement.status, placement.reason = ecs_scheduler.PENDING, why
    return results, gaps


def _admitted_instances(td: Resource, by_type: dict, cat: Catalog) -> list[ecs_scheduler.InstanceShape]:
    admitted = None
    for constraint in td.props.get("placementConstraints") or []:
        if isinstance(constraint, Mapping) and constraint.get("type") == "memberOf" and isinstance(constraint.get("expression"), str):
            try:
                types = admitted_instance_types(constraint["expression"], cat.types)
            except PlacementSyntaxError:
                types = None
            if types is not None:
                admitted = types if admitted is None else admitted & types
    return [s for name, shapes in by_type.items() if admitted is None or name in admitted for s in shapes]


# --- the plan -----------------------------------------------------------------------------------


def enabled() -> bool:
    """GPUFLEET_PLACEMENT=off skips the simulation everywhere (spec, plan, pack): the bench's baseline."""
    return os.environ.get("GPUFLEET_PLACEMENT") != "off"


def placement(resources: Sequence[Resource], cat: Catalog | None = None) -> PlanPlacement:
    """Every pod template and task definition of the plan, placed."""
    if not enabled():
        return PlanPlacement([], [], [], ["the placement simulation is off (GPUFLEET_PLACEMENT=off)"])
    cat = cat or catalog.load()
    index = _Index(resources)
    eks = cat.curated["eks"]
    nvidia = next((r for key, _, r in _plugins(index, cat) if key == "nvidiaDevicePlugin"), None)
    values = nvidia.props.get("values") if nvidia is not None and isinstance(nvidia.props.get("values"), Mapping) else {}
    shapes, gaps = node_shapes(index, cat, charts.nvidia_sharing(values, eks["acceleratorResources"]["nvidia"]))
    pods, pod_gaps = pod_templates(index, cat)
    gaps += pod_gaps
    placed = k8s_scheduler.simulate(shapes, pods) if pods else []
    tasks, task_gaps = task_placements(index, cat)
    return PlanPlacement(placed, tasks, shapes, gaps + task_gaps)


def from_plan(plan: Mapping) -> list[Resource]:
    """A JSON plan's resources (gpufleet's, or `pulumi preview --json` read into that shape)."""
    return [
        Resource(
            r["urn"],
            r["type"],
            r.get("name") or r["urn"].rsplit("::", 1)[-1],
            r.get("inputs") or {},
            {k: tuple(v) for k, v in (r.get("propertyDependencies") or {}).items()},
        )
        for r in plan.get("resources", [])
    ]


def node_group_name(props: Mapping, fallback: str) -> str:
    """A node group's EKS name as a plan knows it: the name, or `prefix*` for a group the provider
    names from a prefix (the suffix exists only once the group does)."""
    name, prefix = props.get("nodeGroupName"), props.get("nodeGroupNamePrefix")
    if isinstance(name, str):
        return name
    return f"{prefix}*" if isinstance(prefix, str) else fallback
