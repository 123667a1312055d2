"""The ResourceSlices one GPU node publishes through NVIDIA's DRA driver (its gpu kubelet plugin),
derived from the catalog: one device per GPU, `gpu-<i>` (kubernetes-sigs/dra-driver-nvidia-gpu
@v0.4.1 cmd/gpu-kubelet-plugin/deviceinfo.go L106-L108), with the attributes the plan can know:
`type` (L152-L198) and the `memory` capacity in bytes (partitions.go L34-L43), from EC2's GpuInfo.
What only NVML gives on the node (uuid, productName, brand, architecture, compute capability,
driver versions, PCI addresses) is not published: a selector reading it is not judged
(simulate/k8s_dra), never matched by a guess.

A GPU whose node label names a mig-parted layout gpufleet carries (the GPU Operator's
mig-manager applies it) publishes its MIG devices instead, with `type` "mig" and `profile`
(mig.go L139-L185). Their names' tail (the profile id and placement NVML gives) is a counter here,
and their capacities (from NVML) are not published."""

from __future__ import annotations

from collections.abc import Mapping

from gpufleet.catalog.catalog import Gpu
from gpufleet.catalog.facts import DraFacts
from gpufleet.simulate.dra_objects import Attribute, Device, Pool, ResourceSlice, read_quantity

NVIDIA = "NVIDIA"


def _gpu(i: int, gpu: Gpu) -> Device:
    return Device(
        f"gpu-{i}",
        {"type": Attribute("string", "gpu")},
        {"memory": read_quantity(gpu.memory_mib * 2**20)},
    )


def _migs(i: int, devices: Mapping[str, int]) -> list[Device]:
    found = []
    for profile, count in devices.items():
        for j in range(count):
            attributes = {"type": Attribute("string", "mig"), "profile": Attribute("string", profile)}
            found.append(Device(f"gpu-{i}-mig-{profile.replace('.', '')}-{j}", attributes))
    return found


def mig_layout(gpu: Gpu, labels: Mapping[str, str], facts: DraFacts) -> tuple[Mapping[str, int] | None, str]:
    """(the MIG devices of each GPU, or None for whole GPUs; why the devices are not known, or "")."""
    config = labels.get(facts.mig_config_label)
    if config is None or config == "all-disabled":
        return None, ""
    layouts = facts.mig_layouts.get(config)
    if layouts is None:
        return None, f"its {facts.mig_config_label} layout {config!r} is not one gpufleet carries"
    found = next((m for m in layouts if m.gpu_model == gpu.model and m.memory_mib == gpu.memory_mib), None)
    if found is None:
        return None, f"its {facts.mig_config_label} layout {config!r} is not carried for {gpu.model} ({gpu.memory_mib} MiB)"
    return found.devices, ""


def node_slices(group: str, gpu: Gpu | None, labels: Mapping[str, str], facts: DraFacts) -> tuple[tuple[ResourceSlice, ...], str]:
    """(the slices one node of the group publishes, named for the group; why its devices are not
    known, or ""). A node without NVIDIA GPUs publishes none."""
    if gpu is None or gpu.manufacturer != NVIDIA or gpu.count < 1:
        return (), ""
    layout, unknown = mig_layout(gpu, labels, facts)
    if unknown:
        return (), unknown
    devices: list[Device] = []
    for i in range(gpu.count):
        devices += _migs(i, layout) if layout else [_gpu(i, gpu)]
    # The plugin publishes one pool per node, named after it, in one slice.
    return (ResourceSlice(f"{group}-{facts.driver}", facts.driver, Pool(group, 1, 1), node_name=group, devices=tuple(devices)),), ""
