"""Typed inputs of the ECS GPU fleet: one model serves the stack spec, the components and the schema.

Only our intent is modelled (instance type, AMI variant, sizes, GPUs per container); AWS fields we
do not reason about are left to the provider's defaults. Rules that need the catalog or more than
one field are in `checks.py`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from gpufleet.network.args import NetworkArgs
from gpufleet.platform.model import CatalogChoice, EcsImageReference, SpecModel, rule_error, size_order_error
from gpufleet.rules import managed_instances

# The variants come from the curated facts file, so the schema's enum and the rules cannot drift:
# the GPU AMI's variants, then the Neuron AMI's that the GPU AMI does not have.
AmiVariant = Annotated[str, CatalogChoice(lambda cat: dict.fromkeys([*cat.ecs().gpu_ami_variants, *cat.ecs().neuron_ami_variants]))]

ECS_NAME = r"^[a-zA-Z0-9_-]{1,255}$"
LOCAL_NAME = r"^[a-z][a-z0-9-]{0,39}$"


class GpuShareArgs(SpecModel):
    """A share of one GPU through NVIDIA MPS (ECS `sharingStrategy.nvidiaMps`): ECS places the
    container on a GPU with this much memory free and limits it to that memory.

    When to share: inference services and small models that leave most of a GPU idle; several
    tasks then fill one GPU, placed by memory (the summary shows how many per GPU and per
    instance). Take whole GPUs (`gpus`) instead when a container runs more than one CUDA process,
    needs per-task GPU metrics, or must not share a failure domain (a fatal GPU error in one MPS
    client stops the others on that GPU). On G6f types MPS does not work: ask for the type's
    hardware slice instead (`gpus: 0.125`, `0.25` or `0.5`, one container per task). The capacity
    provider's AMI must ship ECS agent 1.107.0 or later (the recommended ECS GPU AMI does)."""

    memory_mib: int = Field(
        alias="memoryMiB",
        ge=1,
        description="GPU memory in MiB pinned to the container (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT). The MPS "
        "containers of one task share one GPU, which must hold all of them.",
    )
    max_compute_percent: int | None = Field(
        None,
        description="Most of the GPU's compute the container may use, 1..100 (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE): a "
        "limit, not a reservation. Unset: up to the whole GPU (the MPS server's 100 percent).",
    )


class ContainerArgs(SpecModel):
    """One container of a task definition."""

    name: str = Field(pattern=ECS_NAME, description="Container name, unique within its workload.")
    image: EcsImageReference = Field(min_length=1, description="Image reference: registry/repository:tag or @sha256 digest.")
    memory: int = Field(gt=0, description="Hard memory limit in MiB; the container is stopped if it exceeds it.")
    cpu: int = Field(0, ge=0, description="CPU units reserved for the container (1024 units = 1 vCPU).")
    gpus: int | float = Field(
        0,
        ge=0,
        description="Whole GPUs pinned to this container (ECS `resourceRequirements` of type GPU); the GPUs of all "
        "containers of a workload must fit one instance of its capacity provider. On a G6f type, its fraction "
        "instead (0.125, 0.25 or 0.5), for one container of the task.",
    )
    gpu_share: GpuShareArgs | None = Field(
        None,
        description="A share of one GPU through NVIDIA MPS instead of `gpus`. The task's GPU containers all share "
        "or all take whole GPUs; not on G6f.",
    )
    neuron_devices: Annotated[int, Field(ge=0)] | Literal["all"] | None = Field(
        None,
        description="Neuron chips mapped into this container as /dev/neuron0.. (`linuxParameters.devices`, "
        "with IPC_LOCK), on a Neuron capacity provider; `all` for every chip of the instance (on Managed "
        "Instances the only choice: ECS's NeuronDevice ALL, one container per task). Unset: every chip when this "
        "is the workload's only container, none otherwise. The chips of all containers must exist on one instance.",
    )
    driver_capabilities: str = Field(
        "utility,compute",
        description="NVIDIA_DRIVER_CAPABILITIES for GPU containers: ECS does not set it, and images not built "
        "on the NVIDIA CUDA images need it. One of `utility,compute` or `all`.",
    )
    environment: dict[str, str] = Field(default_factory=dict, description="Environment variables.")
    command: list[str] = Field(default_factory=list, description="Command override; empty keeps the image's command.")
    essential: bool = Field(True, description="Whether the task stops when this container stops.")


class ServiceArgs(SpecModel):
    """A long-running ECS service for a workload, placed through its capacity provider."""

    desired_count: int | None = Field(None, ge=0, description="Number of tasks to keep running (or `perChip`).")
    per_chip: bool = Field(
        False,
        description="One task on every Neuron chip of every instance (the task maps one chip): a task "
        "definition and a service per chip index, each running one task per instance (distinctInstance), "
        "so chips x instances tasks in all. Instead of `desiredCount`.",
    )

    @model_validator(mode="after")
    def _one_size(self) -> ServiceArgs:
        if (self.desired_count is None) == (not self.per_chip):
            raise rule_error("ecs-service-size", "give either desiredCount or perChip: true")
        return self


class WorkloadArgs(SpecModel):
    """A task definition on one capacity provider: pinned to its instance type (EC2), or on the types
    its instance requirements admit (Managed Instances)."""

    name: str = Field(pattern=ECS_NAME, description="Task definition family; unique within the fleet.")
    capacity_provider: str = Field(
        description="Name of the capacity provider that runs this workload; its instance type becomes the "
        "task definition's `memberOf` placement constraint."
    )
    containers: list[ContainerArgs] = Field(min_length=1, description="The task's containers.")
    service: ServiceArgs | None = Field(None, description="Run the workload as a service; absent runs no service.")


class CapacityProviderArgs(SpecModel):
    """An Auto Scaling group of one GPU or Neuron instance type behind an ECS capacity provider."""

    name: str = Field(pattern=LOCAL_NAME, description="Short name, unique within the fleet (lowercase, digits, '-').")
    instance_type: str = Field(
        description="EC2 instance type with NVIDIA GPUs (e.g. g5.12xlarge) or AWS Neuron chips (inf1, inf2, trn1, trn2)."
    )
    ami_variant: AmiVariant = Field(
        "al2023",
        description="ECS-optimized AMI variant of the type's accelerator (the GPU AMI for NVIDIA types, the Neuron "
        "AMI for Inferentia and Trainium; the Neuron AMI has al2023 and al2), resolved from its SSM parameter in "
        "the stack's region.",
    )
    min_size: int = Field(ge=0, description="Minimum number of instances.")
    max_size: int = Field(ge=1, description="Maximum number of instances.")
    desired_size: int = Field(ge=0, description="Instances at creation; ECS managed scaling owns the value afterwards.")
    purchase: Literal["on-demand", "spot"] = Field("on-demand", description="On-Demand or Spot capacity.")
    root_volume_gib: int = Field(100, alias="rootVolumeGiB", ge=30, le=16384, description="Size of the encrypted gp3 root volume in GiB.")
    target_capacity: int = Field(100, ge=1, le=100, description="ECS managed scaling target: percent of the group's capacity in use.")
    associate_public_ip: bool = Field(False, description="Give instances a public IPv4 address.")
    metadata_hop_limit: int = Field(
        1,
        ge=1,
        le=64,
        description="IMDSv2 response hop limit; 1 keeps containers in bridge mode from reaching the instance role's credentials.",
    )

    @model_validator(mode="after")
    def _sizes(self) -> CapacityProviderArgs:
        error = size_order_error(self.min_size, self.desired_size, self.max_size)
        if error:
            raise rule_error("size-order", error)
        return self


class RangeArgs(SpecModel):
    """An inclusive range; an absent bound is open."""

    min: int | None = Field(None, ge=0, description="Lower bound.")
    max: int | None = Field(None, ge=0, description="Upper bound.")


_MI_ENUMS = {m: Literal.__getitem__(managed_instances.api_enum(m)) for m in ("acceleratorManufacturers", "acceleratorNames")}
_MI_MANUFACTURER = _MI_ENUMS["acceleratorManufacturers"]
_MI_ACCELERATOR_NAME = _MI_ENUMS["acceleratorNames"]


class ManagedInstanceProviderArgs(SpecModel):
    """An ECS Managed Instances capacity provider: ECS launches, patches and retires the instances
    itself (no Auto Scaling group), choosing a type the instance requirements admit. Its tasks use
    awsvpc networking in the fleet's subnets."""

    name: str = Field(pattern=LOCAL_NAME, description="Short name, unique within the fleet (lowercase, digits, '-').")
    instance_types: list[str] = Field(
        default_factory=list,
        description="The instance types ECS may launch (allowedInstanceTypes); empty admits every type the other requirements match.",
    )
    accelerator_manufacturers: list[_MI_MANUFACTURER] = Field(  # type: ignore[valid-type]
        default_factory=list, description="Accelerator makers admitted: `nvidia` for GPUs, `amazon-web-services` for Neuron."
    )
    accelerator_names: list[_MI_ACCELERATOR_NAME] = Field(  # type: ignore[valid-type]
        default_factory=list,
        description="Accelerators admitted by the API's name (e.g. `l4`, `a10g`, `l40s`); types whose accelerator the "
        "API does not name (Inferentia2, Trainium) are admitted through instanceTypes.",
    )
    accelerator_count: RangeArgs | None = Field(None, description="Accelerators per instance (GPUs or Neuron chips).")
    accelerator_total_memory_mib: RangeArgs | None = Field(
        None, alias="acceleratorTotalMemoryMiB", description="Accelerator memory per instance, MiB."
    )
    vcpu_count: RangeArgs | None = Field(None, description="vCPUs per instance; unset: the smallest admitted type's, so none is excluded.")
    memory_mib: RangeArgs | None = Field(
        None, alias="memoryMiB", description="Memory per instance, MiB; unset: the smallest admitted type's."
    )
    purchase: Literal["on-demand", "spot"] = Field("on-demand", description="On-Demand or Spot capacity (capacityOptionType).")
    storage_gib: int = Field(100, alias="storageGiB", ge=1, le=16384, description="Data volume size of each instance, GiB.")

    def requirements(self) -> managed_instances.Requirements:
        bounds = lambda r: (r.min, r.max) if r is not None else (None, None)  # noqa: E731
        return managed_instances.Requirements(
            tuple(self.instance_types),
            tuple(self.accelerator_manufacturers),
            tuple(self.accelerator_names),
            bounds(self.accelerator_count),
            bounds(self.accelerator_total_memory_mib),
            bounds(self.vcpu_count),
            bounds(self.memory_mib),
        )


class EcsFleetArgs(SpecModel):
    """An ECS cluster of GPU or Neuron instances: capacity providers and the workloads they run."""

    cluster_name: str = Field(pattern=ECS_NAME, description="ECS cluster name.")
    container_insights: Literal["enabled", "disabled", "enhanced"] = Field(
        "enabled", description="CloudWatch Container Insights setting of the cluster."
    )
    network: NetworkArgs = Field(description="Subnets for the instances, or a VPC to create.")
    capacity_providers: list[CapacityProviderArgs] = Field(
        default_factory=list, description="Auto Scaling groups of GPU or Neuron instances, one instance type each."
    )
    managed_instance_providers: list[ManagedInstanceProviderArgs] = Field(
        default_factory=list, description="ECS Managed Instances capacity providers, besides or instead of capacityProviders."
    )
    workloads: list[WorkloadArgs] = Field(default_factory=list, description="Task definitions, optionally run as services.")

    @model_validator(mode="after")
    def _some_capacity(self) -> EcsFleetArgs:
        if not self.capacity_providers and not self.managed_instance_providers:
            raise rule_error("ecs-capacity", "give capacityProviders, managedInstanceProviders or both: the workloads need instances")
        return self

    session_manager: bool = Field(
        False,
        description="Attach AmazonSSMManagedInstanceCore to the instance role so operators can open Session Manager shells instead of SSH.",
    )
