"""Rules over a whole ECS fleet spec: each check calls a catalog predicate and returns Violations.

Field paths use the stack file's keys (camelCase) so an error points at the line to fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import cast

from gpufleet import simulate
from gpufleet.apis import aws_rules as api_rules
from gpufleet.catalog.catalog import Catalog, UnknownInstanceType
from gpufleet.ecs.args import CapacityProviderArgs, EcsFleetArgs, GpuShareArgs, ManagedInstanceProviderArgs, WorkloadArgs
from gpufleet.ecs.container_definitions import container_definitions
from gpufleet.ecs.neuron import device_counts, per_chip_families
from gpufleet.ecs.resolved import capacity_provider_name, gpu_requests, instance_shape, provider_of, task_shape, workload_type
from gpufleet.network import zones
from gpufleet.platform.capacity import offered_and_purchasable
from gpufleet.platform.model import Violation, duplicate_names, names_taken
from gpufleet.rules import ecs_amis as ami_rules
from gpufleet.rules import ecs_gpu_sharing, managed_instances
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import neuron as neuron_rules
from gpufleet.rules.quotas import quota_problem
from gpufleet.simulate import ecs_scheduler

RESERVED_CAPACITY_PROVIDER_PREFIXES = ("aws", "ecs", "fargate")  # CreateCapacityProvider `name` rule


def check_fleet(fleet: EcsFleetArgs, region: str, cat: Catalog) -> list[Violation]:
    """Every rule broken by the fleet, in file order."""
    found: list[Violation] = []
    found += _unique_names(fleet)
    found += _capacity_provider_names(fleet)
    types: dict[str, object] = {}
    for i, cp in enumerate(fleet.capacity_providers):
        where = ("capacityProviders", i)
        try:
            it = cat.get(cp.instance_type)
        except UnknownInstanceType as err:
            found.append(Violation("instance-type-known", (*where, "instanceType"), cp.instance_type, str(err)))
            continue
        types[cp.name] = it
        found += [v.under(*where) for v in _capacity_provider(cp, it, region, cat)]
    known = set(types)  # providers whose instance types are known
    for i, mp in enumerate(fleet.managed_instance_providers):
        problems = list(_managed_provider(mp, region, cat))
        found += [v.under("managedInstanceProviders", i) for v in problems]
        if not problems:
            known.add(mp.name)
    for i, wl in enumerate(fleet.workloads):
        wl_type = workload_type(wl, fleet, region, cat) if wl.capacity_provider in known else None
        found += [v.under("workloads", i) for v in _workload(wl, fleet, wl_type, region, cat)]
    found += _family_names(fleet, types)
    found += _vpc_zones(fleet, types, region, cat)
    found += _quotas(fleet, cat)
    if not found and simulate.enabled():
        found += _placement(fleet, region, cat)
    return found


def _managed_provider(mp: ManagedInstanceProviderArgs, region: str, cat: Catalog) -> Iterator[Violation]:
    for j, name in enumerate(mp.instance_types):
        try:
            cat.get(name)
        except UnknownInstanceType as err:
            yield Violation("instance-type-known", ("instanceTypes", j), name, str(err))
            return
    reason = managed_instances.no_match_problem(mp.requirements(), region, cat)
    if reason:
        field = (
            ("instanceTypes",) if mp.instance_types else ("acceleratorNames",) if mp.accelerator_names else ("acceleratorManufacturers",)
        )
        yield Violation("ecs-managed-instances-match", field, list(mp.instance_types) or list(mp.accelerator_names), reason)


def _quotas(fleet: EcsFleetArgs, cat: Catalog) -> Iterator[Violation]:
    """The ECS quotas AWS does not raise: capacity providers per cluster, container instances per
    cluster (maxSize summed), containers per task definition."""
    quotas = cat.facts.quotas
    for field, quota, count, what in (
        (
            ("capacityProviders",),
            "ecsCapacityProvidersPerCluster",
            len(fleet.capacity_providers) + len(fleet.managed_instance_providers),
            "capacity providers (managedInstanceProviders included)",
        ),
        (
            ("capacityProviders",),
            "ecsContainerInstancesPerCluster",
            sum(cp.max_size for cp in fleet.capacity_providers),
            "container instances (the providers' maxSize summed)",
        ),
    ):
        problem = quota_problem(quota, count, quotas)
        if problem:
            yield Violation("aws-service-quotas", field, f"{count} {what}", problem.message)
    for i, wl in enumerate(fleet.workloads):
        problem = quota_problem("ecsContainersPerTaskDefinition", len(wl.containers), quotas)
        if problem:
            yield Violation("aws-service-quotas", ("workloads", i, "containers"), f"{len(wl.containers)} containers", problem.message)


def _family_names(fleet: EcsFleetArgs, types: dict) -> Iterator[Violation]:
    """A task per chip adds families `<name>-chipK`: they may not take another workload's name."""
    names = {wl.name for wl in fleet.workloads}
    for i, wl in enumerate(fleet.workloads):
        it = types.get(wl.capacity_provider)
        if wl.service is None or not wl.service.per_chip or it is None:
            continue
        taken = sorted(names & set(per_chip_families(wl.name, it)))
        if taken:
            yield Violation(
                "names-unique",
                ("workloads", i, "name"),
                wl.name,
                f"a task per chip names its task definitions and services {wl.name}-chip0.., which takes the name of "
                f"workload {', '.join(taken)}",
            )


def _vpc_zones(fleet: EcsFleetArgs, types: dict, region: str, cat: Catalog) -> Iterator[Violation]:
    create = fleet.network.create
    if create is None or len(types) != len(fleet.capacity_providers):
        return
    field = ("network", "create", "zones")
    if create.zones is None:
        suggestion = zones.suggested_zones(list(types.values()), region, 2)
        yield Violation(
            "vpc-zones-required",
            field,
            None,
            f"name the VPC's zones (for example [{', '.join(suggestion)}], which offer every capacity provider's type): "
            "gpufleet does not choose them, so a later change cannot move them",
        )
        return
    groups = [(("capacityProviders", i, "instanceType"), types[cp.name]) for i, cp in enumerate(fleet.capacity_providers)]
    yield from zones.zone_problems(list(create.zones), region, groups, cat, field)


def _unique_names(fleet: EcsFleetArgs) -> Iterator[Violation]:
    for key, items in (
        ("capacityProviders", fleet.capacity_providers),
        ("managedInstanceProviders", fleet.managed_instance_providers),
        ("workloads", fleet.workloads),
    ):
        yield from duplicate_names([item.name for item in items], (key,), key)
    # One namespace for both kinds of provider: a workload names its provider.
    yield from names_taken(
        [mp.name for mp in fleet.managed_instance_providers],
        {cp.name for cp in fleet.capacity_providers},
        ("managedInstanceProviders",),
        "capacity provider names must be unique across capacityProviders and managedInstanceProviders",
    )
    for i, wl in enumerate(fleet.workloads):
        yield from duplicate_names([c.name for c in wl.containers], ("workloads", i, "containers"), "a workload's container")


def _capacity_provider_names(fleet: EcsFleetArgs) -> Iterator[Violation]:
    providers: list[tuple[str, int, CapacityProviderArgs | ManagedInstanceProviderArgs]]
    providers = [("capacityProviders", i, cp) for i, cp in enumerate(fleet.capacity_providers)]
    providers += [("managedInstanceProviders", i, mp) for i, mp in enumerate(fleet.managed_instance_providers)]
    for key, i, cp in providers:
        full = capacity_provider_name(fleet.cluster_name, cp.name)
        # The same name is the launch template's (at most 128 characters) and the group's.
        if full.lower().startswith(RESERVED_CAPACITY_PROVIDER_PREFIXES) or len(full) > 128:
            yield Violation(
                "ecs-capacity-provider-name",
                (key, i, "name"),
                cp.name,
                f"the capacity provider would be named {full!r}: ECS names may not start with aws, ecs or fargate "
                f"and, as the launch template's name too, have at most 128 characters (rename clusterName or the provider)",
            )


def _capacity_provider(cp: CapacityProviderArgs, it, region: str, cat: Catalog) -> Iterator[Violation]:
    reason = ami_rules.ecs_ami_support(it, cp.ami_variant, cat.ecs())
    if reason:
        neuron = it.neuron is not None
        # al2-kernel-5.10 exists for the GPU AMI only: then the variant is what to change.
        variant = neuron and cp.ami_variant not in cat.ecs().neuron_ami_variants
        yield Violation(
            "ecs-neuron-ami-supported" if neuron else "ecs-gpu-ami-supported",
            ("amiVariant",) if variant else ("instanceType",),
            cp.ami_variant if variant else cp.instance_type,
            reason,
        )
    if it.neuron is not None:
        reason = ami_rules.neuron_ami_region(region, cat.ecs())
        if reason:
            yield Violation(
                "ecs-neuron-region",
                ("instanceType",),
                cp.instance_type,
                f"{cp.instance_type} needs the ECS Neuron AMI: {reason} (gpufleet:region)",
            )
    yield from offered_and_purchasable(it, region, cp.purchase == "spot", ("purchase", cp.purchase))


def _workload(wl: WorkloadArgs, fleet: EcsFleetArgs, it, region: str, cat: Catalog) -> Iterator[Violation]:
    names = [cp.name for cp in fleet.capacity_providers] + [mp.name for mp in fleet.managed_instance_providers]
    if wl.capacity_provider not in names:
        yield Violation(
            "workload-capacity-provider",
            ("capacityProvider",),
            wl.capacity_provider,
            f"no capacity provider of that name (have: {', '.join(names)})",
        )
    reason = api_rules.essential_container_problem([{"essential": c.essential} for c in wl.containers])
    if reason:
        yield Violation("ecs-essential-container", ("containers", 0, "essential"), False, reason)
    for j, c in enumerate(wl.containers):
        where = ("containers", j)
        if "NVIDIA_VISIBLE_DEVICES" in c.environment:
            yield Violation(
                "ecs-gpu-visible-devices",
                (*where, "environment", "NVIDIA_VISIBLE_DEVICES"),
                c.environment["NVIDIA_VISIBLE_DEVICES"],
                "ECS sets NVIDIA_VISIBLE_DEVICES to the GPUs it pins to the container; request GPUs with `gpus`",
            )
        if "NVIDIA_DRIVER_CAPABILITIES" in c.environment and "driver_capabilities" in c.model_fields_set:
            yield Violation(
                "ecs-gpu-driver-capabilities",
                (*where, "driverCapabilities"),
                c.driver_capabilities,
                "set NVIDIA_DRIVER_CAPABILITIES either in environment or as driverCapabilities, not both",
            )
        reason = gpu_rules.driver_capabilities(c.driver_capabilities, cat.ecs())
        if reason:
            yield Violation("ecs-gpu-driver-capabilities", (*where, "driverCapabilities"), c.driver_capabilities, reason)
    yield from _gpu_requests(wl, it, cat)
    if it is None:
        return
    managed = isinstance(provider_of(fleet, wl), ManagedInstanceProviderArgs)
    yield from _neuron_workload(wl, it, managed, cat)
    task = task_shape(wl, it, cat)
    _, short = ecs_scheduler.per_instance(task, instance_shape(provider_of(fleet, wl), it, cat))
    for rule, reason, field in (
        ("ecs-gpus-fit-instance", gpu_rules.gpus_fit(it, task.gpus), "gpus"),
        ("ecs-memory-fits-instance", short.get("memory"), "memory"),
        ("ecs-cpu-fits-instance", short.get("cpu"), "cpu"),
    ):
        if reason:
            # Point at the container that tips the total over, the one a reader edits.
            j = _tipping_container(wl, field)
            yield Violation(rule, ("containers", j, field), getattr(wl.containers[j], field), f"task total: {reason}")


def _gpu_requests(wl: WorkloadArgs, it, cat: Catalog) -> Iterator[Violation]:
    """How the containers ask for GPUs: the sharing rules of ecs_gpu_sharing, at the field to edit."""
    requests = gpu_requests(wl, cat)
    for r in requests:
        c = wl.containers[r.index]
        reason = ecs_gpu_sharing.value_or_share_problem(r)
        if reason:
            yield Violation("ecs-gpu-value-or-share", ("containers", r.index, "gpuShare"), c.gpus, reason)
        reason = ecs_gpu_sharing.value_problem(r, cat.ecs())
        if reason:
            yield Violation("ecs-gpu-value-or-share", ("containers", r.index, "gpus"), c.gpus, reason)
        reason = ecs_gpu_sharing.compute_percent_problem(r.max_compute_percent)
        if reason:
            yield Violation(
                "ecs-mps-compute-percent", ("containers", r.index, "gpuShare", "maxComputePercent"), r.max_compute_percent, reason
            )
    reason = ecs_gpu_sharing.one_option_problem(requests)
    if reason:
        last = requests[-1]
        yield Violation("ecs-gpu-one-option", *_ask(wl, last), reason)
    if it is None:
        return
    for r in requests:
        if r.option == ecs_gpu_sharing.SHARE:
            reason = ecs_gpu_sharing.mps_type_problem(it)
        else:
            reason = ecs_gpu_sharing.fraction_problem(it, r, cat.ecs())
        if reason:
            yield Violation("ecs-gpu-fractional", *_ask(wl, r), reason)
    reason = ecs_gpu_sharing.mps_memory_problem(it, requests)
    if reason:
        j = max((r for r in requests if r.option == ecs_gpu_sharing.SHARE), key=lambda r: r.mps_memory).index
        share = cast(GpuShareArgs, wl.containers[j].gpu_share)  # a SHARE request is a container's gpuShare
        yield Violation("ecs-mps-memory-fits", ("containers", j, "gpuShare", "memoryMiB"), share.memory_mib, reason)


def _ask(wl: WorkloadArgs, r: ecs_gpu_sharing.GpuRequest) -> tuple[tuple, object]:
    """(field, value) of a container's GPU ask as the stack writes it: its gpus, or its gpuShare's memory."""
    if r.option == ecs_gpu_sharing.SHARE:
        return ("containers", r.index, "gpuShare"), r.mps_memory
    return ("containers", r.index, "gpus"), wl.containers[r.index].gpus


def workload_placements(fleet: EcsFleetArgs, region: str, cat: Catalog) -> list[tuple[int, ecs_scheduler.TaskPlacement]]:
    """(workload index, placement) of every task definition the fleet registers: one per workload,
    one per chip for a task per chip (each a service of one task per instance)."""
    found = []
    for i, wl in enumerate(fleet.workloads):
        cp = provider_of(fleet, wl)
        it = workload_type(wl, fleet, region, cat)
        inst = instance_shape(cp, it, cat)
        if wl.service is not None and wl.service.per_chip:
            for chip, family in enumerate(per_chip_families(wl.name, it)):
                task = task_shape(wl, it, cat, chip)
                # perChip runs on Auto Scaling capacity only (ecs-neuron-per-chip): cp is a CapacityProviderArgs.
                instances = cast(CapacityProviderArgs, cp).desired_size
                found.append((i, ecs_scheduler.place_task(replace(task, family=family), inst, instances, True)))
        else:
            desired = wl.service.desired_count if wl.service is not None else None
            found.append((i, ecs_scheduler.place_task(task_shape(wl, it, cat), inst, desired)))
    return found


def _placement(fleet: EcsFleetArgs, region: str, cat: Catalog) -> Iterator[Violation]:
    """A service whose desired count its provider's instances cannot hold (alone or with the others)."""
    placed = workload_placements(fleet, region, cat)
    index = {id(p): i for i, p in placed}
    for i, p in placed:
        if p.status == ecs_scheduler.PENDING and p.desired is not None and p.per_instance > 0:
            yield Violation("ecs-tasks-placeable", ("workloads", i, "service", "desiredCount"), p.desired, p.reason)
    instances = {}
    for cp in fleet.capacity_providers:
        instances[cp.name] = instance_shape(cp, cat.get(cp.instance_type), cat)
    # Managed Instances grow with their tasks: only the Auto Scaling groups' sizes are shared ceilings.
    for p, why in ecs_scheduler.shared_capacity([p for _, p in placed], instances):
        yield Violation("ecs-tasks-placeable", ("workloads", index[id(p)], "service"), p.desired, why)


def _neuron_workload(wl: WorkloadArgs, it, managed: bool, cat: Catalog) -> Iterator[Violation]:
    if managed:
        yield from _managed_neuron(wl, it, cat)
    counts = device_counts(wl, it)
    total = sum(counts)
    if it.neuron is not None and total == 0:
        yield Violation(
            "ecs-neuron-devices-mapped",
            ("containers", 0, "neuronDevices"),
            wl.containers[0].neuron_devices,
            f"the workload runs on {it.name} ({neuron_rules.describe_neuron(it)}) but maps no Neuron chip; "
            "set neuronDevices on the container that runs the model",
        )
    reason = neuron_rules.neuron_devices_fit(it, total)
    if reason:
        j = max(range(len(counts)), key=lambda k: counts[k])
        yield Violation("ecs-neuron-devices-exist", ("containers", j, "neuronDevices"), counts[j], f"task total: {reason}")
    if wl.service is not None and wl.service.per_chip:
        if it.neuron is None:
            yield Violation("ecs-neuron-per-chip", ("service", "perChip"), True, f"{it.name} has no Neuron chip to run a task on each of")
        elif total != 1:
            yield Violation(
                "ecs-neuron-per-chip",
                ("service", "perChip"),
                True,
                f"a task per chip maps exactly one chip, but the task maps {total}; set neuronDevices: 1 on one container",
            )


def _managed_neuron(wl: WorkloadArgs, it, cat: Catalog) -> Iterator[Violation]:
    """On Managed Instances a task gets every chip through NeuronDevice ALL, in one container."""
    for j, c in enumerate(wl.containers):
        if isinstance(c.neuron_devices, int) and c.neuron_devices:
            yield Violation(
                "ecs-neuron-device-managed",
                ("containers", j, "neuronDevices"),
                c.neuron_devices,
                "on Managed Instances ECS maps every chip of the instance to one container (NeuronDevice ALL): set neuronDevices: all",
            )
    definitions = container_definitions(wl, cat, device_counts(wl, it), managed=True)
    for reason in managed_instances.neuron_device_problems(definitions, [managed_instances.MANAGED_INSTANCES]):
        yield Violation("ecs-neuron-device-managed", ("containers", 0, "neuronDevices"), "all", reason)
    if wl.service is not None and wl.service.per_chip:
        yield Violation(
            "ecs-neuron-per-chip",
            ("service", "perChip"),
            True,
            "a task per chip maps fixed chips; on Managed Instances a task gets every chip of its instance (NeuronDevice ALL)",
        )


def _tipping_container(wl: WorkloadArgs, field: str) -> int:
    values = [getattr(c, field) for c in wl.containers]
    return max(range(len(values)), key=lambda k: values[k])
