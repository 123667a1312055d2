"""How many GPUs an instance type has and whether a request fits them."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import EcsFacts
from gpufleet.catalog.wording import counted


def describe_gpus(it: InstanceType) -> str:
    """'8 x NVIDIA A100 (40960 MiB)' or '1/8 of an NVIDIA L4 (2861 MiB)'."""
    if it.gpu is None:
        return "no GPU"
    g = it.gpu
    if g.fractional:
        share = f"1/{round(1 / g.partition_size)}" if g.partition_size else "a share"
        return f"{share} of an {g.manufacturer} {g.model} ({g.memory_mib} MiB)"
    return f"{g.count} x {g.manufacturer} {g.model} ({g.memory_mib} MiB each)"


def whole_gpus(it: InstanceType) -> int | None:
    """Whole GPUs of the type; None when that is unknown (fractional GPU or incomplete record)."""
    if it.incomplete:
        return None
    if it.gpu is None:
        return 0
    if it.gpu.fractional:
        return None
    return it.gpu.count


def gpus_fit(it: InstanceType, requested: int) -> str | None:
    """Do `requested` whole GPUs (all containers of one task or pod) fit one instance of the type?"""
    if requested <= 0:
        return None
    if it.incomplete:
        return f"{it.name}: accelerator facts unknown ({it.incomplete})"
    if it.gpu is not None and it.gpu.fractional:
        return (
            f"{it.name} has a fractional GPU ({describe_gpus(it)}, GpuPartitionSize {it.gpu.partition_size}); "
            f"whole-GPU requests cannot be placed on it (ask for {it.gpu.partition_size:g} as the GPU value)"
        )
    available = whole_gpus(it) or 0
    if requested > available:
        return f"{counted(requested, 'GPU')} requested but {it.name} has {available} ({describe_gpus(it)})"
    return None


def accelerated(it: InstanceType) -> bool:
    """Does the type carry GPUs or Neuron chips (the nodes the GPU rules protect)?"""
    return it.gpu is not None or it.neuron is not None


def gpus_fit_any(types: list[InstanceType], requested: int) -> str | None:
    """Do `requested` GPUs fit at least one of the types a placement constraint admits? (ECS places the
    task only where they fit, so one fitting type is enough.)"""
    if requested <= 0:
        return None
    reasons = [gpus_fit(it, requested) for it in types]
    if types and not all(reasons):
        return None
    return "; ".join(r for r in reasons if r) or "no instance type is admitted"


def gpu_capable(it: InstanceType) -> str | None:
    """Can ECS pin whole GPUs to tasks on the type? (At least one whole GPU fits.)"""
    if it.gpu is None and not it.incomplete:
        return f"{it.name} has no GPU"
    return gpus_fit(it, 1)


def driver_capabilities(value: str, ecs_facts: EcsFacts) -> str | None:
    """Is `value` a NVIDIA_DRIVER_CAPABILITIES setting the ECS GPU AMIs' images need?"""
    allowed = ecs_facts.driver_capabilities.values
    if value not in allowed:
        return f"NVIDIA_DRIVER_CAPABILITIES {value!r} is not one of {', '.join(allowed)}"
    return None


def mig_size_problem(size: str, sizes: Collection[str] | None, gpu: str, mig_gpus: Iterable[str], noun: str, source: str) -> str | None:
    """Is the multi-instance GPU size (GKE's partition size, AKS's GPU instance profile) one the GPU
    offers? `sizes` is None for a GPU without MIG; `mig_gpus` names those with it."""
    if sizes is None:
        return f"{gpu} does not support multi-instance GPUs (those that do: {', '.join(mig_gpus)})"
    if size not in sizes:
        return f"{size} is not a {noun} of {gpu} ({noun}s: {', '.join(sizes)}; {source})"
    return None
