"""Render a workload's containers as the ECS `containerDefinitions` document (pure, no Pulumi)."""

from __future__ import annotations

from gpufleet.catalog.catalog import Catalog
from gpufleet.ecs.args import ContainerArgs, WorkloadArgs
from gpufleet.ecs.neuron import chip_offsets
from gpufleet.rules import managed_instances
from gpufleet.rules import neuron as neuron_rules


def gpu_value(gpus: int | float) -> str:
    """The requirement's `value`: whole GPUs as an integer, a G6f fraction as ECS writes it (0.25)."""
    return str(int(gpus)) if float(gpus).is_integer() else f"{gpus:g}"


def gpu_requirement(c: ContainerArgs) -> dict | None:
    """The container's GPU resource requirement: whole or fractional GPUs, or an MPS share (both when
    the spec gives both, which the spec check and the pack refuse with one rule)."""
    if not c.gpus and c.gpu_share is None:
        return None
    requirement: dict = {"type": "GPU"}
    if c.gpus:
        requirement["value"] = gpu_value(c.gpus)
    if c.gpu_share is not None:
        mps: dict = {"memory": c.gpu_share.memory_mib}
        if c.gpu_share.max_compute_percent is not None:
            mps["maxComputePercent"] = c.gpu_share.max_compute_percent
        requirement["sharingStrategy"] = {"nvidiaMps": mps}
    return requirement


def container_definition(c: ContainerArgs, cat: Catalog, neuron_devices: int = 0, first_chip: int = 0, managed: bool = False) -> dict:
    env = dict(c.environment)
    definition: dict = {
        "name": c.name,
        "image": c.image,
        "essential": c.essential,
        "memory": c.memory,
        "cpu": c.cpu,
    }
    if c.command:
        definition["command"] = list(c.command)
    requirement = gpu_requirement(c)
    if requirement:
        # ECS pins the GPUs to the container and sets NVIDIA_VISIBLE_DEVICES, but not the driver
        # capabilities the NVIDIA runtime needs for images not built on CUDA base images.
        definition["resourceRequirements"] = [requirement]
        env.setdefault("NVIDIA_DRIVER_CAPABILITIES", c.driver_capabilities)
    if neuron_devices and managed:
        # Managed Instances take a NeuronDevice requirement: every chip, to this one container.
        definition.setdefault("resourceRequirements", []).append({"type": "NeuronDevice", "value": managed_instances.NEURON_DEVICE_ALL})
    elif neuron_devices:
        # On the EC2 launch type ECS accepts no NeuronDevice requirement: the chips are mapped as
        # devices, at the same path inside, and the Neuron runtime needs IPC_LOCK.
        ecs = cat.ecs()
        facts = ecs.neuron_devices
        definition["linuxParameters"] = {
            "devices": [
                {"hostPath": path, "containerPath": path, "permissions": list(facts.permissions)}
                for path in neuron_rules.neuron_device_paths(first_chip, neuron_devices, ecs)
            ],
            "capabilities": {"add": list(facts.capabilities)},
        }
    definition["environment"] = [{"name": k, "value": env[k]} for k in sorted(env)]
    return definition


def container_definitions(
    workload: WorkloadArgs, cat: Catalog, neuron_devices: list[int] | None = None, first_chip: int = 0, managed: bool = False
) -> list[dict]:
    """The task's containers; `neuron_devices` per container (see `neuron.device_counts`) take
    consecutive chips from `first_chip` on (as devices on EC2, as NeuronDevice ALL on Managed Instances)."""
    counts = neuron_devices or [0] * len(workload.containers)
    offsets = chip_offsets(counts, first_chip)
    return [container_definition(c, cat, n, k, managed) for c, n, k in zip(workload.containers, counts, offsets)]
