"""Neuron chips: how many a type has, which /dev/neuronN exist, and what a task must add to use them."""

from __future__ import annotations

from gpufleet.apis.values import decimal
from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import EcsFacts


def describe_neuron(it: InstanceType) -> str:
    """'12 x AWS Inferentia2 (2 NeuronCores, 32768 MiB each)'."""
    if it.neuron is None:
        return "no Neuron chip"
    n = it.neuron
    return f"{n.count} x AWS {n.model} ({n.cores_per_device} NeuronCores, {n.memory_mib} MiB each)"


def neuron_chips(it: InstanceType) -> int | None:
    """Neuron chips (devices) of the type; None when unknown (incomplete record)."""
    if it.incomplete:
        return None
    return it.neuron.count if it.neuron else 0


def neuron_device_range(count: int) -> str:
    return f"/dev/neuron0../dev/neuron{count - 1}" if count > 1 else "/dev/neuron0"


def neuron_devices_fit(it: InstanceType, requested: int) -> str | None:
    """Do `requested` Neuron devices (all containers of one task) exist on one instance of the type?"""
    if requested <= 0:
        return None
    if it.incomplete:
        return f"{it.name}: accelerator facts unknown ({it.incomplete})"
    if it.neuron is None:
        return f"{requested} Neuron devices mapped but {it.name} has no Neuron chip"
    if requested > it.neuron.count:
        return (
            f"{requested} Neuron devices mapped but {it.name} has {it.neuron.count} "
            f"({describe_neuron(it)}; {neuron_device_range(it.neuron.count)})"
        )
    return None


def neuron_device_index(path: object, ecs_facts: EcsFacts) -> int | None:
    """K of a `/dev/neuronK` path; None for any other path."""
    prefix = ecs_facts.neuron_devices.path_prefix
    if not isinstance(path, str) or not path.startswith(prefix):
        return None
    digits = path[len(prefix) :]
    return decimal(digits) if digits == "0" or not digits.startswith("0") else None


def neuron_device_paths(first: int, count: int, ecs_facts: EcsFacts) -> list[str]:
    """`/dev/neuron{first}` .. `/dev/neuron{first+count-1}`: the paths a container maps."""
    prefix = ecs_facts.neuron_devices.path_prefix
    return [f"{prefix}{k}" for k in range(first, first + count)]


def neuron_device_exists(it: InstanceType, path: str, ecs_facts: EcsFacts) -> str | None:
    """Does the Neuron device at `path` exist on the type (one /dev/neuronK per chip, K from 0)?"""
    index = neuron_device_index(path, ecs_facts)
    if index is None:
        return f"{path!r} is not a Neuron device path"
    if neuron_devices_fit(it, index + 1) is None:
        return None
    if it.incomplete:
        return f"{path} cannot be checked on {it.name}: accelerator facts unknown ({it.incomplete})"
    if it.neuron is None:
        return f"{path} does not exist on {it.name}: it has no Neuron chip"
    return f"{path} does not exist on {it.name}: it has {describe_neuron(it)}, {neuron_device_range(it.neuron.count)}"


def neuron_capabilities(added: list[str], ecs_facts: EcsFacts) -> str | None:
    """Does a container that maps Neuron devices add the Linux capabilities the Neuron runtime needs?"""
    missing = [c for c in ecs_facts.neuron_devices.capabilities if c not in added]
    if missing:
        return f"maps Neuron devices but does not add the {', '.join(missing)} capability (linuxParameters.capabilities.add)"
    return None
