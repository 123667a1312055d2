"""Where ECS places a task definition's tasks: how many fit one container instance of a capacity
provider's type, and whether a service's desired count fits what the provider's instances hold.

ECS places a task on an instance whose registered resources not yet reserved cover the task's CPU
units, memory, GPUs and host ports (ECS developer guide, "Amazon ECS task placement"); registered
memory is what the OS reports, less than installed (node_capacity.ecs_registered). ECS does not
track Neuron devices: a task maps fixed chips, so two tasks on one instance must map different ones.
Plain functions; the spec, the summary and the policy pack call them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

PLACED, PENDING = "placed", "pending"


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
    for key, what, need, have in (
        ("cpu", "CPU units", task.cpu, inst.cpu),
        ("memory", "MiB of memory", task.memory, memory),
        ("gpus", "GPUs", task.gpus, inst.gpus),
    ):
        if need > 0:
            limits.append(have // need)
            if need > have:
                registers = "registers at most" if key == "memory" else "registers"
                reasons[key] = f"{need} {what} per task, {inst.instance_type} {registers} {have}"
    if task.neuron_chips:
        missing = sorted(k for k in task.neuron_chips if k >= inst.neuron_chips)
        if missing:
            reasons["neuron"] = f"maps /dev/neuron{missing[0]}, {inst.instance_type} has {inst.neuron_chips} chips"
            limits.append(0)
        else:
            limits.append(1)  # the same chips again would be busy
    if task.host_ports:
        limits.append(1)  # a host port binds once per instance
    return (min(limits) if limits else 1_000_000), reasons


def place_task(task: TaskShape, inst: InstanceShape | None, desired: int | None, distinct_instance: bool = False) -> TaskPlacement:
    """One task definition (a service with `desired` tasks, or a task alone) on a provider's instances."""
    if inst is None:
        return TaskPlacement(task, None, PENDING, desired=desired, reason="no capacity provider of this plan runs an instance type the task admits")
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
            f"desiredCount {desired} needs {result.instances_needed} instances at {count} per instance; "
            f"{inst.provider} has at most {ceiling} ({'maxSize' if inst.managed_scaling else 'desired size, no managed scaling'})"
        )
    return result


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
        inst = instances[provider]
        ceiling = inst.max_instances if inst.managed_scaling else inst.desired
        if len(services) < 2:
            continue
        for what, need, have in (
            ("CPU units", lambda t: t.cpu, inst.cpu),
            ("MiB of memory", lambda t: t.memory, inst.memory),
            ("GPUs", lambda t: t.gpus, inst.gpus),
        ):
            total = sum(p.desired * need(p.task) for p in services)
            if total > ceiling * have:
                names = ", ".join(f"{p.task.family} {p.desired} x {need(p.task)}" for p in services if need(p.task))
                found.append((services[-1], f"the services on {provider} reserve {total} {what} in all ({names}); {ceiling} instances register {ceiling * have}"))
        for chip in sorted({k for p in services for k in p.task.neuron_chips}):
            total = sum(p.desired for p in services if chip in p.task.neuron_chips)
            if total > ceiling:
                found.append((services[-1], f"{total} tasks on {provider} map /dev/neuron{chip}; {ceiling} instances have one each"))
    return found
