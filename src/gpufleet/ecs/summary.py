"""ECS's part of the accelerator summary (gpufleet.stack.summary, through src/gpufleet/ecs/platform.py): a row per workload (GPUs per task,
shares, Neuron devices, tasks per instance) and per Managed Instances provider."""

from __future__ import annotations

from dataclasses import replace

from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.wording import counted
from gpufleet.ecs import resolved
from gpufleet.ecs.args import CapacityProviderArgs, EcsFleetArgs, ManagedInstanceProviderArgs
from gpufleet.ecs.neuron import device_counts
from gpufleet.rules import ecs_gpu_sharing
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import neuron as neuron_rules
from gpufleet.simulate import ecs_scheduler


def workload_rows(ecs: EcsFleetArgs, region: str, cat: Catalog) -> list[dict]:
    """A row per workload: what each task asks for and how many one instance of its provider holds."""
    every: list[CapacityProviderArgs | ManagedInstanceProviderArgs] = [*ecs.capacity_providers, *ecs.managed_instance_providers]
    providers = {cp.name: cp for cp in every}
    return [_workload_row(wl, providers[wl.capacity_provider], resolved.workload_type(wl, ecs, region, cat), cat) for wl in ecs.workloads]


def managed_row(mp, region: str, cat: Catalog) -> dict:
    """A Managed Instances provider: no size (ECS launches what its tasks need), the types it admits."""
    types = resolved.managed_candidates(mp, region, cat)
    return {
        "group": mp.name,
        "purchase": mp.purchase,
        "instanceTypes": [it.name for it in types],
        "accelerators": sorted({_describe(it) for it in types}),
    }


def _describe(it) -> str:
    return neuron_rules.describe_neuron(it) if it.neuron is not None else gpu_rules.describe_gpus(it)


def _workload_row(wl, cp, it, cat: Catalog) -> dict:
    task = resolved.task_shape(wl, it, cat)
    row = {"name": wl.name, "capacityProvider": wl.capacity_provider, "gpusPerTask": task.gpus}
    if isinstance(cp, ManagedInstanceProviderArgs):
        row["landsOn"] = it.name  # Managed Instances: the admitted type that holds the most tasks
    if task.gpu_fraction:
        row["gpuFractionPerTask"] = task.gpu_fraction
    if task.mps_memory:
        row["gpuShare"] = _gpu_share(wl, it, task.mps_memory, cat)
    chips = neuron_rules.neuron_chips(it) or 0
    devices = sum(device_counts(wl, it))
    if it.neuron is not None:
        row["neuronDevicesPerTask"] = devices
        row["neuronCoresPerTask"] = devices * it.neuron.cores_per_device
    row["tasksPerInstance"] = _tasks_per_instance(wl, cp, it, chips, cat)
    if wl.service is None:
        return row
    if wl.service.per_chip:
        # One service per chip index, each with a task on every instance.
        row["serviceDesiredCount"] = chips * cp.desired_size
        row["perChip"] = {
            "services": chips,
            "tasksPerService": cp.desired_size,
            "note": f"one task per chip: {counted(chips, 'chip')} x {counted(cp.desired_size, 'instance')} = {counted(chips * cp.desired_size, 'task')}",
        }
    else:
        row["serviceDesiredCount"] = wl.service.desired_count
    return row


def _gpu_share(wl, it, mps_memory: int, cat: Catalog) -> dict:
    """How many of the workload's MPS tasks one GPU takes: ECS places by memory; the compute limits
    of the tasks on one GPU add up past 100% when compute binds first (they then slow each other)."""
    requests = [r for r in resolved.gpu_requests(wl, cat) if r.option == ecs_gpu_sharing.SHARE]
    percent = sum(r.max_compute_percent if isinstance(r.max_compute_percent, int) else 100 for r in requests)
    by_memory = ecs_gpu_sharing.tasks_per_gpu(it, mps_memory)
    by_compute = 100 // percent if percent else by_memory
    return {
        "memoryMiBPerTask": mps_memory,
        "gpuMemoryMiB": it.gpu.memory_mib if it.gpu else 0,
        "computePercentPerTask": percent,
        "tasksPerGpu": by_memory,
        "tasksPerGpuByCompute": by_compute,
        "computeBinds": by_compute < by_memory,
    }


def _tasks_per_instance(wl, cp, it, chips: int, cat: Catalog) -> int:
    """How many of the workload's tasks one instance holds (CPU, registered memory, GPUs, chips: the
    placement rule); a task per chip counts its chip-index definitions together on one instance."""
    task, inst = resolved.task_shape(wl, it, cat), resolved.instance_shape(cp, it, cat)
    if wl.service is not None and wl.service.per_chip:
        return min(ecs_scheduler.per_instance(replace(task, neuron_chips=frozenset()), inst)[0], chips)
    return ecs_scheduler.per_instance(task, inst)[0]
