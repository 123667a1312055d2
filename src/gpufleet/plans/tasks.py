"""The ECS side of a plan's placement: each capacity provider's instances (from its Auto Scaling
group and launch template) and each task definition's tasks on them, read from the resources of any
program."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import EcsFacts
from gpufleet.plans.index import Index, Resource, as_int, mapping, seq, str_or
from gpufleet.rules import ecs_gpu_sharing, managed_instances
from gpufleet.rules import fargate as fargate_rules
from gpufleet.rules import neuron as neuron_rules
from gpufleet.simulate import ecs_scheduler
from gpufleet.simulate.ecs_placement import PlacementSyntaxError, admitted_instance_types


def task_shape(td: Resource, ecs_facts: EcsFacts) -> tuple[ecs_scheduler.TaskShape, list[str]]:
    notes = []
    text = td.props.get("containerDefinitions")
    try:
        containers = json.loads(text) if isinstance(text, str) else list(text or [])
    except ValueError:
        containers = []
        notes.append("containerDefinitions is not JSON")
    containers = [c for c in containers if isinstance(c, Mapping)]
    cpu = as_int(td.props.get("cpu")) or sum(as_int(c.get("cpu")) for c in containers)
    memory = as_int(td.props.get("memory")) or sum(as_int(c.get("memoryReservation")) or as_int(c.get("memory")) for c in containers)
    chips = set()
    for c in containers:
        if any(isinstance(r, Mapping) and r.get("type") == "NeuronDevice" for r in c.get("resourceRequirements") or []):
            chips.add(0)  # NeuronDevice ALL: every chip from the first, so one task per instance
        for device in (c.get("linuxParameters") or {}).get("devices") or []:
            index = neuron_rules.neuron_device_index(device.get("hostPath") if isinstance(device, Mapping) else None, ecs_facts)
            if index is not None:
                chips.add(index)
    network = td.props.get("networkMode") or "bridge"
    ports = set()
    if network in ("bridge", "host"):
        for c in containers:
            for mapping in c.get("portMappings") or []:
                port = as_int(mapping.get("hostPort")) or (as_int(mapping.get("containerPort")) if network == "host" else 0)
                if port:
                    ports.add((port, str(mapping.get("protocol") or "tcp")))
    family = str_or(td.props.get("family"), td.name)
    task = ecs_scheduler.TaskShape(family, cpu, memory, 0, frozenset(chips), frozenset(ports), td.urn)
    return ecs_scheduler.task_gpus(task, ecs_gpu_sharing.gpu_requests(containers)), notes


def _managed_shapes(cp: Resource, cat: Catalog) -> list[ecs_scheduler.InstanceShape]:
    """A Managed Instances provider's candidate types, each as the instances ECS would launch."""
    provider = str_or(cp.props.get("name"), cp.name)
    shapes = []
    for it in managed_instances.candidates(managed_instances.requirements_of(cp.props), None, cat):
        shapes.append(ecs_scheduler.registered_instances(provider, it, cat.facts.memory_overhead, 0, ecs_scheduler.UNBOUNDED))
    return shapes


def _best(task: ecs_scheduler.TaskShape, shapes: list[ecs_scheduler.InstanceShape]) -> ecs_scheduler.InstanceShape | None:
    """The candidate that holds the most of the task (the smallest among equals): ECS launches one that fits."""
    return max(shapes, key=lambda s: (ecs_scheduler.per_instance(task, s)[0], -s.cpu, -s.memory), default=None)


def _instance_shapes(index: Index, cat: Catalog) -> dict[str, tuple[ecs_scheduler.InstanceShape, Resource]]:
    found = {}
    for cp in index.of(tokens.ECS_CAPACITY_PROVIDER):
        for group in index.deps(cp, tokens.ASG):
            templates = index.deps(group, tokens.LAUNCH_TEMPLATE)
            names = {t.props.get("instanceType") for t in templates}
            it = cat.find(next(iter(names))) if len(names) == 1 else None
            if it is None:
                continue
            provider = str_or(cp.props.get("name"), cp.name)
            managed = ((cp.props.get("autoScalingGroupProvider") or {}).get("managedScaling") or {}).get("status") == "ENABLED"
            sizes = as_int(group.props.get("desiredCapacity")), as_int(group.props.get("maxSize"), 1)
            found[cp.urn] = (
                ecs_scheduler.registered_instances(provider, it, cat.facts.memory_overhead, *sizes, managed_scaling=managed),
                cp,
            )
    return found


def _fargate_providers(service: Resource) -> list[str]:
    """Where a service launches its tasks on Fargate: its launch type, or a strategy of Fargate's
    capacity providers only (their names); none when it launches them elsewhere."""
    strategy = [s.get("capacityProvider") for s in service.props.get("capacityProviderStrategies") or [] if isinstance(s, Mapping)]
    if service.props.get("launchType") == fargate_rules.LAUNCH_TYPE:
        return [fargate_rules.LAUNCH_TYPE]
    if strategy and all(p in fargate_rules.PROVIDERS for p in strategy):
        return [str(p) for p in dict.fromkeys(strategy)]
    return []


def _fargate_task(
    td: Resource, task: ecs_scheduler.TaskShape, providers: list[str], desired: int | None, cat: Catalog, platform: object = None
) -> ecs_scheduler.TaskPlacement:
    """A task on Fargate, whose capacity is AWS's: each task on a VM of its own, so what decides is
    whether Fargate runs its size (the task-level cpu and memory, as ECS registers them)."""
    facts = cat.facts.fargate
    given = td.props.get("cpu"), td.props.get("memory")
    cpu, memory = fargate_rules.task_cpu_units(given[0]), fargate_rules.task_memory_mib(given[1])
    system = str_or(mapping(td.props.get("runtimePlatform")).get("operatingSystemFamily"), fargate_rules.LINUX)
    notes = []
    problem = fargate_rules.task_problem(task.gpus, bool(task.mps_memory or task.gpu_fraction), bool(task.neuron_chips), facts)
    if problem is None and tokens.UNKNOWN in given:
        notes.append("its task-level cpu and memory are known only after apply: whether Fargate runs that size is not judged")
    elif problem is None:
        problem = fargate_rules.task_size_problem(
            cpu,
            memory,
            facts,
            fargate_rules.WINDOWS if system.startswith(fargate_rules.WINDOWS) else fargate_rules.LINUX,
            platform if isinstance(platform, str) else None,
        )
    shape = replace(task, cpu=cpu or task.cpu, memory=memory or task.memory)
    provider = ", ".join(providers)
    if problem:
        return ecs_scheduler.TaskPlacement(shape, provider, ecs_scheduler.PENDING, desired=desired, reason=problem, notes=notes)
    needed = desired if desired is not None else 1
    return ecs_scheduler.TaskPlacement(
        shape, provider, ecs_scheduler.PLACED, per_instance=1, desired=desired, instances_needed=needed, notes=notes
    )


def task_placements(index: Index, cat: Catalog) -> tuple[list[ecs_scheduler.TaskPlacement], list[str]]:
    instances = _instance_shapes(index, cat)
    by_type: dict[str, list[ecs_scheduler.InstanceShape]] = {}
    for shape, _ in instances.values():
        by_type.setdefault(shape.instance_type, []).append(shape)
    results: list[ecs_scheduler.TaskPlacement] = []
    gaps: list[str] = []
    served: set[str] = set()
    for service in index.of(tokens.ECS_SERVICE):
        tds = index.deps(service, tokens.ECS_TASK_DEFINITION, prop="taskDefinition")
        if not tds:
            continue
        task, notes = task_shape(tds[0], cat.ecs())
        served.add(tds[0].urn)
        providers = index.deps(service, tokens.ECS_CAPACITY_PROVIDER)
        cps = [instances[cp.urn][0] for cp in providers if cp.urn in instances]
        cps += [best for cp in providers if cp.props.get("managedInstancesProvider") and (best := _best(task, _managed_shapes(cp, cat)))]
        distinct = any(
            isinstance(c, Mapping) and c.get("type") == "distinctInstance" for c in service.props.get("placementConstraints") or []
        )
        desired = as_int(service.props.get("desiredCount"))
        fargate = [] if cps else _fargate_providers(service)
        if fargate:
            result = _fargate_task(tds[0], task, fargate, desired, cat, service.props.get("platformVersion"))
        else:
            result = ecs_scheduler.place_task(task, cps[0] if cps else None, desired, distinct)
        result.notes += notes + [r.derived for r in (service, tds[0]) if r.derived][:1]
        if not cps and not fargate:
            result.notes.append("its capacity is not in this plan (a launch type or another program's capacity provider)")
        results.append(result)
    for td in index.of(tokens.ECS_TASK_DEFINITION):
        if td.urn in served:
            continue
        task, notes = task_shape(td, cat.ecs())
        candidates = _admitted_instances(td, by_type, cat)
        best = max(candidates, key=lambda s: ecs_scheduler.per_instance(task, s)[0], default=None)
        if best is None and fargate_rules.LAUNCH_TYPE in seq(td.props.get("requiresCompatibilities")):
            # No service runs it and no instance of the plan takes it: RunTask may launch it on
            # Fargate, which it asks to be validated for; where it runs is the caller's choice.
            result = _fargate_task(td, task, [fargate_rules.LAUNCH_TYPE], None, cat)
            notes.append("no service of the plan runs it: judged as a Fargate task, as its requiresCompatibilities asks")
        else:
            result = ecs_scheduler.place_task(task, best, None)
        result.notes += notes + ([td.derived] if td.derived else [])
        if best is None and result.provider is None:
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
