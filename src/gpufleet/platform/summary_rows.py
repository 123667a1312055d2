"""The rows of the accelerator summary (gpufleet.stack.summary) that every platform's part is made of:
what one instance of a type carries, a group of instances, a Kubernetes GPU pool."""

from __future__ import annotations

from gpufleet.rules import gpus as gpu_rules

SIZES = ("min", "desired", "max")


def accelerator(it) -> dict:
    """What one instance of the type carries, in the summary's words."""
    if it.neuron is not None:
        n = it.neuron
        return {
            "kind": "neuron",
            "manufacturer": "AWS",
            "model": n.model,
            "perInstance": n.count,
            "memoryMiBPerAccelerator": n.memory_mib,
            "neuronCoresPerChip": n.cores_per_device,
        }
    found = {
        "kind": "gpu",
        "manufacturer": it.gpu.manufacturer if it.gpu else None,
        "model": it.gpu.model if it.gpu else None,
        "perInstance": gpu_rules.whole_gpus(it) or 0,
        "memoryMiBPerAccelerator": it.gpu.memory_mib if it.gpu else 0,
    }
    if it.gpu is not None and it.gpu.fractional:
        # A G6f slice counts as its fraction of a GPU, so totals add up to the GPUs bought.
        found["perInstance"] = it.gpu.partition_size * it.gpu.logical_count
        found["gpuFraction"] = it.gpu.partition_size
    return found


def group(it, platform: str, name: str, sizes: tuple[int, int, int], details: dict, efa_interfaces: int = 0) -> dict:
    acc = accelerator(it)
    instances = dict(zip(SIZES, sizes))
    group = {
        "platform": platform,
        "group": name,
        "instanceType": it.name,
        **details,
        **acc,
        "instances": instances,
        "accelerators": {k: acc["perInstance"] * n for k, n in instances.items()},
    }
    if acc["kind"] == "neuron":
        cores = acc["perInstance"] * acc["neuronCoresPerChip"]
        group["neuronCoresPerInstance"] = cores
        group["neuronCores"] = {k: cores * n for k, n in instances.items()}
    if efa_interfaces:
        group["efaInterfacesPerInstance"] = efa_interfaces
        group["efaInterfaces"] = {k: efa_interfaces * n for k, n in instances.items()}
    return group


def gpu_pool(
    platform: str,
    pool,
    installed_by: dict[str, str],
    instance_type: str,
    model: str,
    memory_gib: int,
    gpus: int,
    resources: int,
    sizes: tuple[int, int, int],
) -> dict:
    """A Kubernetes GPU pool (GKE, AKS): its GPUs, and the nvidia.com/gpu each node advertises,
    which is a whole GPU, a MIG slice, or a share of either."""
    instances = dict(zip(SIZES, sizes))
    return {
        "platform": platform,
        "group": pool.name,
        "instanceType": instance_type,
        "purchase": "SPOT" if pool.spot else "ON_DEMAND",
        "driver": pool.driver,
        "driverInstalledBy": installed_by[pool.driver],  # the cloud (aks, gke) or none: the GPU Operator's
        "kind": "gpu",
        "manufacturer": "NVIDIA",
        "model": model.removeprefix("NVIDIA "),
        "perInstance": gpus,
        "memoryMiBPerAccelerator": memory_gib * 1024,
        "instances": instances,
        "accelerators": {k: gpus * n for k, n in instances.items()},
        "gpuResourcesPerInstance": resources,
        "gpuResources": {k: resources * n for k, n in instances.items()},
    }
