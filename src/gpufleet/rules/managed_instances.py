"""ECS Managed Instances: which instance types a capacity provider's instance requirements admit, and
the rules of what only Managed Instances do (the `NeuronDevice` resource requirement).

ECS picks the instance type itself, among those the requirements admit (ECS developer guide, "How
Amazon ECS places tasks": the task's CPU, GPU and memory, its placement constraints, then the
capacity provider's instance requirements). gpufleet reads the same requirements against the
catalog's EC2 records, so the spec, the placement simulator and the pack see the same candidates.
The enums of accelerator names and manufacturers are botocore's (ECS InstanceRequirementsRequest).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from gpufleet.apis import aws as aws_api
from gpufleet.apis.aws_rules import container_requirements
from gpufleet.catalog.catalog import Catalog, InstanceType, NeuronDevices

MANAGED_INSTANCES = "MANAGED_INSTANCES"  # the task definition compatibility and launch type
NEURON_DEVICE_ALL = "ALL"  # the only value ECS takes for a NeuronDevice requirement
# AWS managed policies (ECS developer guide: "Amazon ECS infrastructure IAM role", "Amazon ECS Managed
# Instances instance profile"). The infrastructure policy passes only roles named ecsInstanceRole*.
INFRASTRUCTURE_POLICY = "AmazonECSInfrastructureRolePolicyForManagedInstances"
INSTANCE_POLICY = "AmazonECSInstanceRolePolicyForManagedInstances"
INSTANCE_ROLE_PREFIX = "ecsInstanceRole"


@functools.cache
def api_enum(member: str) -> tuple[str, ...]:
    """The values botocore's ECS model allows in an InstanceRequirementsRequest list member."""
    return tuple(aws_api.member_shape("ecs", "InstanceRequirementsRequest", member, "member").enum)


def manufacturer(it: InstanceType) -> str | None:
    """The type's accelerator manufacturer as the API names it (EC2 attribute-based selection)."""
    if it.neuron is not None:
        return "amazon-web-services"
    if it.gpu is not None:
        name = it.gpu.manufacturer.lower()
        return name if name in api_enum("acceleratorManufacturers") else None
    return None


def accelerator_name(it: InstanceType) -> str | None:
    """The type's accelerator as an API accelerator name: the EC2 model, lower case, when the API
    lists it (Inferentia2, Trainium and newer GPUs have none: name those types instead)."""
    model = it.gpu.model if it.gpu is not None else it.neuron.model if it.neuron is not None else None
    name = model.lower() if model else None
    return name if name in api_enum("acceleratorNames") else None


def accelerator_count(it: InstanceType) -> int:
    if it.neuron is not None:
        return it.neuron.count
    return it.gpu.logical_count if it.gpu is not None else 0


@dataclass(frozen=True)
class Requirements:
    """Instance requirements as gpufleet states them; ranges are (min, max), None for unbounded."""

    instance_types: tuple[str, ...] = ()
    manufacturers: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    accelerator_count: tuple[int | None, int | None] = (None, None)
    accelerator_memory_mib: tuple[int | None, int | None] = (None, None)
    vcpus: tuple[int | None, int | None] = (None, None)
    memory_mib: tuple[int | None, int | None] = (None, None)


def _within(value: int, bounds: tuple[int | None, int | None]) -> bool:
    low, high = bounds
    return (low is None or value >= low) and (high is None or value <= high)


def mismatch(it: InstanceType, req: Requirements) -> str | None:
    """Why the requirements do not admit the type (None when they do)."""
    if req.instance_types and it.name not in req.instance_types:
        return "not among instanceTypes"
    if it.gpu is None and it.neuron is None:
        return "has no accelerator"
    if req.manufacturers and manufacturer(it) not in req.manufacturers:
        return f"its accelerators are {manufacturer(it) or 'unnamed by the API'}"
    if req.names and accelerator_name(it) not in req.names:
        return f"its accelerator is {accelerator_name(it) or 'not an API accelerator name'}"
    count = accelerator_count(it)
    # No GPU means Neuron devices: the type has one or the other (checked above).
    memory = (it.gpu.memory_mib * count) if it.gpu is not None else (cast(NeuronDevices, it.neuron).memory_mib * count)
    for what, value, bounds in (
        ("accelerators", count, req.accelerator_count),
        ("MiB of accelerator memory", memory, req.accelerator_memory_mib),
        ("vCPUs", it.vcpus, req.vcpus),
        ("MiB of memory", it.memory_mib, req.memory_mib),
    ):
        if not _within(value, bounds):
            return f"has {value} {what}, outside {bounds[0] or 0}..{bounds[1] if bounds[1] is not None else 'any'}"
    return None


def candidates(req: Requirements, region: str | None, cat: Catalog) -> list[InstanceType]:
    """The accelerated types offered in the region (any region: None) that the requirements admit, by name."""
    names: Iterable[str] = req.instance_types or sorted(cat.types)
    found = []
    for name in names:
        it = cat.find(name)
        if it is not None and (region is None or it.offerings.get(region)) and mismatch(it, req) is None:
            found.append(it)
    return found


def no_match_problem(req: Requirements, region: str | None, cat: Catalog) -> str | None:
    """Do the requirements admit an accelerated type offered in the region? None admitted, ECS never
    launches an instance and every task of the provider stays PENDING."""
    if candidates(req, region, cat):
        return None
    named = [it for it in (cat.find(n) for n in req.instance_types) if it is not None]
    why = "; ".join(f"{it.name} {mismatch(it, req) or f'is not offered in {region}'}" for it in named)
    return f"the instance requirements admit no accelerated type offered in {region or 'any region'}" + (f": {why}" if why else "")


def _bounds(value: object) -> tuple[int | None, int | None]:
    value = value if isinstance(value, Mapping) else {}
    # The engine sends numbers as floats.
    return tuple(int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in (value.get("min"), value.get("max")))  # type: ignore[return-value]


def requirements_of(props: Mapping) -> Requirements:
    """The Requirements of a capacity provider's inputs (`managedInstancesProvider`, Pulumi's spelling)."""
    req = ((props.get("managedInstancesProvider") or {}).get("instanceLaunchTemplate") or {}).get("instanceRequirements") or {}
    names = lambda key: tuple(v for v in req.get(key) or [] if isinstance(v, str))  # noqa: E731
    return Requirements(
        names("allowedInstanceTypes"),
        names("acceleratorManufacturers"),
        names("acceleratorNames"),
        _bounds(req.get("acceleratorCount")),
        _bounds(req.get("acceleratorTotalMemoryMib")),
        _bounds(req.get("vcpuCount")),
        _bounds(req.get("memoryMib")),
    )


def neuron_device_problems(containers: Sequence[object], compatibilities: Sequence[str]) -> list[str]:
    """A NeuronDevice requirement has the value ALL, in one container of the task, and only on
    Managed Instances (ECS API reference, ResourceRequirement.value)."""
    asking = []
    found = []
    for _, name, req in container_requirements(containers, "NeuronDevice"):
        asking.append(name)
        if req.get("value") != NEURON_DEVICE_ALL:
            found.append(
                f"container {name!r} asks for NeuronDevice {req.get('value')!r}: the only value is {NEURON_DEVICE_ALL} (every chip of the instance)"
            )
    if len(asking) > 1:
        found.append(f"containers {', '.join(asking)} ask for NeuronDevice: only one container of a task may")
    if asking and MANAGED_INSTANCES not in compatibilities:
        found.append(
            f"container {asking[0]!r} asks for NeuronDevice, which only Managed Instances support (requiresCompatibilities "
            f"{list(compatibilities) or ['EC2 by default']}); on EC2 capacity map the chips as /dev/neuronK devices"
        )
    return found
