"""Rule predicates over the catalog: plain functions, no I/O.

Each check returns None when the rule holds and a reason (one sentence a reviewer can act on) when
it does not. These functions are the only statement of these rules: the stack spec's validators and
the policy pack both call them.
"""

from __future__ import annotations

import re

from gpufleet.components.catalog.catalog import InstanceType
from gpufleet.components.catalog.facts import EcsAmiVariant, EcsFacts
from gpufleet.components.catalog.wording import counted


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


def ami_release(image_version: str) -> str:
    """The release date of an ECS AMI version: '2.0.20230929' or '2023.0.20230929' -> '20230929'."""
    match = re.search(r"(\d{8})", image_version)
    if not match:
        raise ValueError(f"not an ECS AMI version: {image_version!r}")
    return match.group(1)


def _ami_variant(it: InstanceType, variant: str, variants: dict[str, EcsAmiVariant], family: str) -> str | None:
    """What every ECS accelerated AMI asks first: a variant it has, and known accelerator facts."""
    if variant not in variants:
        return f"unknown ECS {family} AMI variant {variant!r} (known: {', '.join(variants)})"
    if it.incomplete:
        return f"{it.name}: accelerator facts unknown ({it.incomplete})"
    return None


def _ami_architecture(it: InstanceType, variant: str, variants: dict[str, EcsAmiVariant], family: str) -> str | None:
    arches = variants[variant].architectures
    if not set(it.architectures) & set(arches):
        return f"{it.name} is {'/'.join(it.architectures)}; the {variant} {family} AMI is {'/'.join(arches)}"
    return None


def ecs_gpu_ami_support(it: InstanceType, variant: str, ecs_facts: EcsFacts, image_version: str | None = None) -> str | None:
    """Can the ECS GPU-optimized AMI `variant` run GPU tasks on the type (at `image_version`, if known)?"""
    variants = ecs_facts.gpu_ami_variants
    reason = _ami_variant(it, variant, variants, "GPU")
    if reason:
        return reason
    if it.gpu is None:
        return f"{it.name} has no GPU"
    no_ami = ecs_facts.families_without_gpu_ami.get(it.family)
    if no_ami:
        return f"{it.name}: {no_ami.reason}"
    makers = ecs_facts.gpu_manufacturers.values
    if it.gpu.manufacturer not in makers:
        return f"{it.name} has {it.gpu.manufacturer} GPUs; the ECS GPU AMI supports {', '.join(makers)} only"
    reason = _ami_architecture(it, variant, variants, "GPU")
    if reason:
        return reason
    bounds = ecs_facts.ami_release_bounds.get(it.family)
    if bounds and image_version:
        release = ami_release(image_version)
        if bounds.minimum is not None and release < bounds.minimum:
            return f"{it.family} needs ECS GPU AMI release {bounds.minimum} or later; this AMI is {release}"
        if bounds.before is not None and release >= bounds.before:
            return f"{it.family} runs only on ECS GPU AMI releases before {bounds.before}; this AMI is {release}"
    return None


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
    digits = path[len(prefix):]
    return int(digits) if digits.isdigit() and (digits == "0" or not digits.startswith("0")) else None


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


def region_listed(region: str, regions: list[str], what: str) -> str | None:
    """Is the region among those a source document lists for a feature (`what ... supported`)?"""
    if region not in regions:
        return f"{what} not supported in {region} (supported: {', '.join(sorted(regions))})"
    return None


def neuron_ami_region(region: str, ecs_facts: EcsFacts) -> str | None:
    """Is the ECS Neuron AMI supported in the region?"""
    return region_listed(region, ecs_facts.neuron_ami_regions.values, "the ECS Neuron AMIs are")


def ecs_neuron_ami_support(it: InstanceType, variant: str, ecs_facts: EcsFacts) -> str | None:
    """Can the ECS Neuron AMI `variant` run Neuron tasks on the type?"""
    variants = ecs_facts.neuron_ami_variants
    reason = _ami_variant(it, variant, variants, "Neuron")
    if reason:
        return reason
    if it.neuron is None:
        return f"{it.name} has no Neuron chip"
    return _ami_architecture(it, variant, variants, "Neuron")


def ecs_ami_support(it: InstanceType, variant: str, ecs_facts: EcsFacts) -> str | None:
    """The ECS accelerated AMI of the type's accelerator (Neuron for Inferentia and Trainium, GPU
    otherwise) in `variant`: can it run the type's accelerated tasks?"""
    if it.neuron is not None:
        return ecs_neuron_ami_support(it, variant, ecs_facts)
    if it.gpu is None and not it.incomplete:
        return f"{it.name} has neither a GPU nor a Neuron chip"
    return ecs_gpu_ami_support(it, variant, ecs_facts)


def offered_in(it: InstanceType, region: str, zone: str | None = None) -> str | None:
    """Is the type offered in the region (and availability zone, when given)?"""
    zones = it.offerings.get(region)
    if not zones:
        return f"{it.name} is not offered in {region}"
    if zone is not None and zone not in zones:
        return f"{it.name} is not offered in {zone} (offered in {', '.join(zones)})"
    return None


def spot_supported(it: InstanceType) -> str | None:
    if "spot" not in it.usage_classes:
        return f"{it.name} is not offered as Spot (usage classes: {', '.join(it.usage_classes) or 'none'})"
    return None


def zones_offering(types: list[InstanceType], region: str) -> tuple[str, ...]:
    """Availability zones of the region where every one of the types is offered, in order."""
    if not types:
        return ()
    common = set(types[0].offerings.get(region, ()))
    for it in types[1:]:
        common &= set(it.offerings.get(region, ()))
    return tuple(sorted(common))
