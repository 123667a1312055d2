"""What the catalog decides about an ECS capacity provider, computed once from its args: the instance
type's record, the ECS AMI family of its accelerator (GPU or Neuron) and the chosen variant's SSM
parameter, the agent flag its user data writes, and the root device its encrypted volume takes.

The spec check, the cluster's components and the summary read one ResolvedCapacityProvider per args
object; a provider made from the library resolves itself."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.ecs.args import CapacityProviderArgs, EcsFleetArgs, ManagedInstanceProviderArgs, WorkloadArgs
from gpufleet.ecs.container_definitions import container_definitions
from gpufleet.ecs.neuron import chip_offsets, device_counts
from gpufleet.platform.model import by_identity
from gpufleet.rules import ecs_gpu_sharing, managed_instances
from gpufleet.simulate import ecs_scheduler


@dataclass(frozen=True)
class ResolvedCapacityProvider:
    """A capacity provider's args and what the catalog decides about them (`resolve(args)` makes one)."""

    args: CapacityProviderArgs
    instance: InstanceType
    accelerator: str  # gpu | neuron: the ECS AMI family
    ami_parameter: str  # the SSM parameter whose value is the variant's AMI id
    agent_flag: str  # the ecs.config line that turns the accelerator's support on
    yum_ipv4_fix: bool  # the variant's AMI needs yum on IPv4 (AL2 GPU AMIs)
    root_device_name: str

    @property
    def name(self) -> str:
        return self.args.name

    def user_data(self, cluster_name: str) -> str:
        """Join the cluster with the accelerator's support on. The GPU and Neuron AMIs already enable
        it in /var/lib/ecs/ecs.config; writing it again protects custom AMIs built from them."""
        lines = ["#!/bin/bash", "set -euo pipefail"]
        if self.yum_ipv4_fix:
            lines.append('echo "ip_resolve=4" >> /etc/yum.conf')
        lines += ["cat >> /etc/ecs/ecs.config <<'EOF'", f"ECS_CLUSTER={cluster_name}", self.agent_flag, "EOF"]
        return "\n".join(lines) + "\n"


def resolve(provider: CapacityProviderArgs | ResolvedCapacityProvider, cat: Catalog) -> ResolvedCapacityProvider:
    """The provider's resolution (raises UnknownInstanceType for a type the catalog lacks: the spec
    check reports it first)."""
    if isinstance(provider, ResolvedCapacityProvider):
        return provider
    return _remembered(provider, cat)


def _resolve(cp: CapacityProviderArgs, cat: Catalog) -> ResolvedCapacityProvider:
    it = cat.get(cp.instance_type)
    accelerator, variants = cat.ecs_ami_variants(it)
    if cp.ami_variant not in variants:
        raise ValueError(
            f"amiVariant = {cp.ami_variant!r}: {cp.instance_type} runs on the ECS {accelerator} AMI, whose variants are {', '.join(variants)}"
        )
    variant = variants[cp.ami_variant]
    ecs = cat.ecs()
    return ResolvedCapacityProvider(
        args=cp,
        instance=it,
        accelerator=accelerator,
        ami_parameter=f"{variant.ssm_parameter}/image_id",
        agent_flag=getattr(ecs.agent_flags, accelerator),
        yum_ipv4_fix=variant.yum_ipv4_fix,
        root_device_name=ecs.root_device_name.value,
    )


_remembered = by_identity(_resolve)


def capacity_provider_name(cluster_name: str, provider: str) -> str:
    """Capacity provider names are unique per account and region, so the cluster name prefixes them."""
    return f"{cluster_name}-{provider}"


# The types each (requirements, region, catalog) admits: the spec, the components and the summary
# ask for the same provider's. The catalog is held with its entry so that its id is not reused while
# remembered (a catalog is not hashable: its records are dicts).
_CANDIDATES: dict[tuple[managed_instances.Requirements, str, int], tuple[Catalog, tuple]] = {}


def _candidates(requirements: managed_instances.Requirements, region: str, cat: Catalog) -> tuple:
    key = (requirements, region, id(cat))
    held = _CANDIDATES.get(key)
    if held is None or held[0] is not cat:
        if len(_CANDIDATES) >= 256:
            _CANDIDATES.pop(next(iter(_CANDIDATES)))
        held = _CANDIDATES[key] = (cat, tuple(managed_instances.candidates(requirements, region, cat)))
    return held[1]


def managed_candidates(mp: ManagedInstanceProviderArgs, region: str, cat: Catalog) -> tuple:
    """The types a Managed Instances provider's requirements admit in the region."""
    return _candidates(mp.requirements(), region, cat)


def workload_type(wl: WorkloadArgs, fleet: EcsFleetArgs, region: str, cat: Catalog):
    """The instance type a workload's tasks land on: its provider's type, or on Managed Instances the
    admitted type that holds the most of its tasks (ECS launches one that fits; None fits: the first)."""
    provider = provider_of(fleet, wl)
    if isinstance(provider, CapacityProviderArgs):
        return cat.get(provider.instance_type)
    types = managed_candidates(provider, region, cat)
    if not types:
        return None

    def held(it) -> tuple[int, int, int]:
        # Most tasks first; among equals the smallest type, as a reader would pick.
        return ecs_scheduler.per_instance(task_shape(wl, it, cat), instance_shape(provider, it, cat))[0], -it.vcpus, -it.memory_mib

    return max(types, key=held)


def gpu_requests(wl: WorkloadArgs, cat: Catalog) -> list[ecs_gpu_sharing.GpuRequest]:
    """The workload's GPU requirements as ECS reads them from the rendered containerDefinitions."""
    return ecs_gpu_sharing.gpu_requests(container_definitions(wl, cat))


def provider_of(fleet: EcsFleetArgs, wl: WorkloadArgs) -> CapacityProviderArgs | ManagedInstanceProviderArgs:
    providers: list[CapacityProviderArgs | ManagedInstanceProviderArgs] = [*fleet.capacity_providers, *fleet.managed_instance_providers]
    return next(cp for cp in providers if cp.name == wl.capacity_provider)


def task_shape(wl: WorkloadArgs, it, cat: Catalog, first_chip: int = 0) -> ecs_scheduler.TaskShape:
    """What one task of the workload reserves: the containers' CPU units, memory, GPUs and chips."""
    counts = device_counts(wl, it)
    chips = {k for count, start in zip(counts, chip_offsets(counts, first_chip)) for k in range(start, start + count)}
    return ecs_scheduler.task_gpus(
        ecs_scheduler.TaskShape(wl.name, sum(c.cpu for c in wl.containers), sum(c.memory for c in wl.containers), 0, frozenset(chips)),
        gpu_requests(wl, cat),
    )


def instance_shape(cp: CapacityProviderArgs | ManagedInstanceProviderArgs, it, cat: Catalog) -> ecs_scheduler.InstanceShape:
    """The provider's container instances as ECS registers them (managed scaling up to maxSize; Managed
    Instances have no size: ECS launches what the tasks need)."""
    sizes = (cp.desired_size, cp.max_size) if isinstance(cp, CapacityProviderArgs) else (0, ecs_scheduler.UNBOUNDED)
    return ecs_scheduler.registered_instances(cp.name, it, cat.facts.memory_overhead, *sizes)
