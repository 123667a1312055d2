"""Which ECS GPU and Neuron AMI variants support an instance type, and in which regions."""

from __future__ import annotations

import re

from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import EcsAmiVariant, EcsFacts
from gpufleet.rules.offerings import region_listed


def ami_release(image_version: str) -> str:
    """The release date of an ECS AMI version: '2.0.20230929' or '2023.0.20230929' -> '20230929'."""
    match = re.search(r"(\d{8})", image_version)
    if not match:
        raise ValueError(f"not an ECS AMI version: {image_version!r}")
    return match.group(1)


def _ami_variant(it: InstanceType, variant: str, variants: dict[str, EcsAmiVariant], family: str, device: str) -> str | None:
    """What every ECS accelerated AMI asks first: a variant it has, known accelerator facts, and a type
    with the AMI's accelerator (`device`: what a type of it has, "GPU" or "Neuron chip")."""
    if variant not in variants:
        return f"unknown ECS {family} AMI variant {variant!r} (known: {', '.join(variants)})"
    if it.incomplete:
        return f"{it.name}: accelerator facts unknown ({it.incomplete})"
    if (it.gpu if family == "GPU" else it.neuron) is None:
        return f"{it.name} has no {device}"
    return None


def _ami_architecture(it: InstanceType, variant: str, variants: dict[str, EcsAmiVariant], family: str) -> str | None:
    arches = variants[variant].architectures
    if not set(it.architectures) & set(arches):
        return f"{it.name} is {'/'.join(it.architectures)}; the {variant} {family} AMI is {'/'.join(arches)}"
    return None


def ecs_gpu_ami_support(it: InstanceType, variant: str, ecs_facts: EcsFacts, image_version: str | None = None) -> str | None:
    """Can the ECS GPU-optimized AMI `variant` run GPU tasks on the type (at `image_version`, if known)?"""
    variants = ecs_facts.gpu_ami_variants
    reason = _ami_variant(it, variant, variants, "GPU", "GPU")
    if reason:
        return reason
    assert it.gpu is not None  # _ami_variant: a type without a GPU is refused
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


def neuron_ami_region(region: str, ecs_facts: EcsFacts) -> str | None:
    """Is the ECS Neuron AMI supported in the region?"""
    return region_listed(region, ecs_facts.neuron_ami_regions.values, "the ECS Neuron AMIs are")


def ecs_neuron_ami_support(it: InstanceType, variant: str, ecs_facts: EcsFacts) -> str | None:
    """Can the ECS Neuron AMI `variant` run Neuron tasks on the type?"""
    variants = ecs_facts.neuron_ami_variants
    return _ami_variant(it, variant, variants, "Neuron", "Neuron chip") or _ami_architecture(it, variant, variants, "Neuron")


def ecs_ami_support(it: InstanceType, variant: str, ecs_facts: EcsFacts) -> str | None:
    """The ECS accelerated AMI of the type's accelerator (Neuron for Inferentia and Trainium, GPU
    otherwise) in `variant`: can it run the type's accelerated tasks?"""
    if it.neuron is not None:
        return ecs_neuron_ami_support(it, variant, ecs_facts)
    if it.gpu is None and not it.incomplete:
        return f"{it.name} has neither a GPU nor a Neuron chip"
    return ecs_gpu_ami_support(it, variant, ecs_facts)
