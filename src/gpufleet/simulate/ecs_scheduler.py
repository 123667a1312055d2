"""Where ECS places a task definition's tasks: how many fit one container instance of a capacity
provider's type, and whether a service's desired count fits what the provider's instances hold.

ECS places a task on an instance whose registered resources not yet reserved cover the task's CPU
units, memory, GPUs and host ports (ECS developer guide, "Amazon ECS task placement"); registered
memory is what the OS reports, less than installed (node_capacity.ecs_registered). ECS does not
track Neuron devices: a task maps fixed chips, so two tasks on one instance must map different ones.
An MPS share is placed by GPU memory: a GPU in MPS mode takes shares until its memory is reserved,
and the shares of one task sit on one GPU. A fractional value takes a G6f instance's one GPU slice.
Plain functions; the spec, the summary and the policy pack call them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import MemoryOverhead
from gpufleet.catalog.wording import counted
from gpufleet.rules import ecs_gpu_sharing
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import neuron as neuron_rules
from gpufleet.simulate.node_capacity import ecs_registered

PLACED, PENDING = "placed", "pending"
# No bound: the instances of a Managed Instances provider (ECS launches what tasks need), the tasks
# of one instance when a task reserves nothing. One past the int32 maximum, the largest desiredCount
# the ECS API takes: no service ever needs more instances, or fits more tasks on one.
UNBOUNDED = 2_147_483_648


@dataclass(frozen=True)
class TaskShape:
    """What one task of a task definition reserves on its container instance."""

    family: str
    cpu: int  # CPU units (1024 per vCPU)
    memory: int  # MiB
    gpus: int
    neuron_chips: frozenset[int] = frozenset()  # /dev/neuronK indices mapped
    host_ports: frozenset[tuple[int, str]] = frozenset()  # (port, protocol) bound on the instance
    urn: str | None = None
    mps_memory: int = 0  # MiB of one GPU the task's MPS shares reserve together
    gpu_fraction: float = 0.0  # the fractional GPU value (G6f), 0 for none


@dataclass(frozen=True)
class InstanceShape:
    """A capacity provider's container instances, as registered with ECS."""

    provider: str
    instance_type: str
    cpu: int
    memory: int  # MiB, at most what registers
    memory_estimate: int  # MiB, with the estimated OS share
    gpus: int
    neuron_chips: int
    desired: int
    max_instances: int
    managed_scaling: bool = True  # ECS grows the group to maxSize for tasks that wait
    gpu_memory: int = 0  # MiB per whole GPU (what MPS shares are placed against)
    gpu_partition: float = 0.0  # the fraction each GPU slice is, on G6f types; 0 otherwise
    gpu_slices: int = 0  # fractional GPU slices per instance (G6f)


def task_gpus(task: TaskShape, requests: Sequence[ecs_gpu_sharing.GpuRequest]) -> TaskShape:
    """The task's GPU reservations read from its GPU requirements: whole GPUs, its MPS memory on one
    GPU, or its fraction."""
    fractions = [cast(float, r.fraction) for r in requests if r.option == ecs_gpu_sharing.FRACTION]  # FRACTION: fraction is set
    return replace(
        task,
        gpus=sum(r.whole for r in requests),
        mps_memory=sum(r.mps_memory for r in requests if r.option == ecs_gpu_sharing.SHARE),
        gpu_fraction=max(fractions, default=0.0),
    )


def instance_gpus(it: InstanceType) -> dict:
    """An instance type's GPU memory and fractional slices, as InstanceShape fields."""
    g = it.gpu
    if g is None or it.incomplete:
        return {}
    if g.fractional:
        return {"gpu_partition": g.partition_size, "gpu_slices": g.logical_count}
    return {"gpu_memory": g.memory_mib}


def registered_instances(
    provider: str, it: InstanceType, overhead: MemoryOverhead, desired: int, max_instances: int, managed_scaling: bool = True
) -> InstanceShape:
    """A provider's container instances of the type as ECS registers them, at the sizes given: the one
    reading of a type into an InstanceShape, whether from the stack file's args or a plan's resources."""
    registered = ecs_registered(it, overhead)
    return InstanceShape(
        provider,
        it.name,
        registered["cpu"],
        registered["memory"],
        registered["memoryEstimate"],
        gpu_rules.whole_gpus(it) or 0,
        neuron_rules.neuron_chips(it) or 0,
        desired,
        max_instances,
        managed_scaling,
        **instance_gpus(it),
    )


@dataclass
class TaskPlacement:
    task: TaskShape
    provider: str | None
    status: str  # placed | pending
    per_instance: int = 0
    desired: int | None = None  # the service's desired count; None for a task definition alone
    instances_needed: int = 0
    reason: str = ""
    notes: list[str] = field(default_factory=list)


def per_instance(task: TaskShape, inst: InstanceShape, memory: int | None = None) -> tuple[int, dict[str, str]]:
    """How many tasks of the definition one empty instance holds, and, per resource (cpu, memory,
    gpus, neuron), why none fits."""
    memory = inst.memory if memory is None else memory
    limits = []
    reasons = {}
    for key, need, have, asked in (
        ("cpu", task.cpu, inst.cpu, counted(task.cpu, "CPU unit")),
        ("memory", task.memory, memory, f"{task.memory} MiB of memory"),
        ("gpus", task.gpus, inst.gpus, counted(task.gpus, "GPU")),
    ):
        if need > 0:
            limits.append(have // need)
            if need > have:
                registers = "registers at most" if key == "memory" else "registers"
                reasons[key] = f"{asked} per task, {inst.instance_type} {registers} {have}"
    if task.mps_memory:
        per_gpu = inst.gpu_memory // task.mps_memory if inst.gpus else 0
        limits.append(per_gpu * inst.gpus)
        if per_gpu == 0:
            has = f"{inst.gpu_memory} MiB per GPU" if inst.gpus else "no whole GPU to share"
            reasons["gpus"] = f"{task.mps_memory} MiB of one GPU's memory per task (MPS), {inst.instance_type} has {has}"
    if task.gpu_fraction:
        fits = inst.gpu_partition == task.gpu_fraction
        limits.append(inst.gpu_slices if fits else 0)
        if not fits:
            has = f"{inst.gpu_partition:g} of a GPU" if inst.gpu_partition else "whole GPUs only"
            reasons["gpus"] = f"{task.gpu_fraction:g} of a GPU per task, {inst.instance_type} provides {has}"
    if task.neuron_chips:
        missing = sorted(k for k in task.neuron_chips if k >= inst.neuron_chips)
        if missing:
            reasons["neuron"] = f"maps /dev/neuron{missing[0]}, {inst.instance_type} has {counted(inst.neuron_chips, 'chip')}"
            limits.append(0)
        else:
            limits.append(1)  # the same chips again would be busy
    if task.host_ports:
        limits.append(1)  # a host port binds once per instance
    return (min(limits) if limits else UNBOUNDED), reasons


def place_task(task: TaskShape, inst: InstanceShape | None, desired: int | None, distinct_instance: bool = False) -> TaskPlacement:
    """One task definition (a service with `desired` tasks, or a task alone) on a provider's instances."""
    if inst is None:
        return TaskPlacement(
            task, None, PENDING, desired=desired, reason="no capacity provider of this plan runs an instance type the task admits"
        )
    count, reasons = per_instance(task, inst)
    if distinct_instance:
        count = min(count, 1)
    result = TaskPlacement(task, inst.provider, PLACED, per_instance=count, desired=desired)
    if count == 0:
        result.status = PENDING
        result.reason = "; ".join(reasons.values()) or "does not fit one instance"
        return result
    tight, _ = per_instance(task, inst, inst.memory_estimate)
    if tight < count:
        result.notes.append(
            f"memory is tight: {count} per instance fit the most {inst.instance_type} may register ({inst.memory} MiB), "
            f"{tight} with the estimated OS share ({inst.memory_estimate} MiB)"
        )
    if desired is None:
        result.instances_needed = 1
        return result
    result.instances_needed = -(-desired // count) if desired else 0
    ceiling = inst.max_instances if inst.managed_scaling else inst.desired
    if result.instances_needed > ceiling:
        result.status = PENDING
        result.reason = (
            f"desiredCount {desired} needs {counted(result.instances_needed, 'instance')} at {count} per instance; "
            f"{inst.provider} has at most {ceiling} ({'maxSize' if inst.managed_scaling else 'desired size, no managed scaling'})"
        )
    return result


_NAMED = 10  # services named in a shared-capacity finding


def shared_capacity(placements: Sequence[TaskPlacement], instances: dict[str, InstanceShape]) -> list[tuple[TaskPlacement, str]]:
    """Services that share a provider and together ask more than its largest size holds: a necessary
    condition per resource (the sum of their reservations against maxSize instances), so a
    violation is certain. Returns (a placement of the provider, why) per overfull resource."""
    found = []
    by_provider: dict[str, list[TaskPlacement]] = {}
    for p in placements:
        if p.provider is not None and p.desired and p.status == PLACED:
            by_provider.setdefault(p.provider, []).append(p)
    for provider, services in by_provider.items():
        inst = instances.get(provider)
        if inst is None:
            continue  # a provider without a size (Managed Instances) grows with its tasks
        ceiling = inst.max_instances if inst.managed_scaling else inst.desired
        if len(services) < 2:
            continue
        for what, need, have in (
            ("CPU units", lambda t: t.cpu, inst.cpu),
            ("MiB of memory", lambda t: t.memory, inst.memory),
            ("GPUs", lambda t: t.gpus, inst.gpus),
            *_gpu_rows(services, inst),
        ):
            total = sum(p.desired * need(p.task) for p in services)
            if total > ceiling * have:
                asking = [f"{p.task.family} {p.desired} x {need(p.task)}" for p in services if need(p.task)]
                # A provider of thousands of services: the first few name the shape, the count the rest.
                names = ", ".join(asking[:_NAMED]) + (f" and {len(asking) - _NAMED} more" if len(asking) > _NAMED else "")
                # Marked on the last service that asks for the resource: one that waits for it.
                asker = [p for p in services if need(p.task)][-1]
                found.append(
                    (
                        asker,
                        f"the services on {provider} reserve {total} {what} in all ({names}); {_instances(ceiling, 'register')} {ceiling * have}",
                    )
                )
        for chip in sorted({k for p in services for k in p.task.neuron_chips}):
            mapping = [p for p in services if chip in p.task.neuron_chips]
            total = sum(p.desired for p in mapping)
            if total > ceiling:
                found.append(
                    (
                        mapping[-1],
                        f"{counted(total, 'task')} on {provider} map /dev/neuron{chip}; {_instances(ceiling, 'have')} one"
                        + (" each" if ceiling != 1 else ""),
                    )
                )
    return found


def _instances(n: int, verb: str) -> str:
    """'1 instance registers', '4 instances register' ('have' -> 'has')."""
    if n != 1:
        return f"{n} instances {verb}"
    return f"1 instance {'has' if verb == 'have' else verb + 's'}"


def _gpu_rows(services: Sequence[TaskPlacement], inst: InstanceShape) -> list[tuple]:
    """The GPU resources shared capacity adds when services share GPUs: GPU memory when any uses MPS
    (a whole-GPU task takes all of its GPU's), fractional slices when any uses a fraction."""
    rows = []
    if any(p.task.mps_memory for p in services):
        rows.append(("MiB of GPU memory", lambda t: t.gpus * inst.gpu_memory + t.mps_memory, inst.gpus * inst.gpu_memory))
    if any(p.task.gpu_fraction for p in services):
        rows.append(("fractional GPU slices", lambda t: 1 if t.gpu_fraction else 0, inst.gpu_slices))
    return rows
