"""What the catalog decides about an ECS capacity provider, computed once from its args: the instance
type's record, the ECS AMI family of its accelerator (GPU or Neuron) and the chosen variant's SSM
parameter, the agent flag its user data writes, and the root device its encrypted volume takes.

The spec check, the cluster's components and the summary read one ResolvedCapacityProvider per args
object; a provider made from the library resolves itself."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.components.catalog import catalog
from gpufleet.components.catalog.catalog import Catalog, InstanceType
from gpufleet.components.ecs.args import CapacityProviderArgs
from gpufleet.components.spec_model import by_identity


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


def resolve(provider: CapacityProviderArgs | ResolvedCapacityProvider, cat: Catalog | None = None) -> ResolvedCapacityProvider:
    """The provider's resolution (raises UnknownInstanceType for a type the catalog lacks: the spec
    check reports it first)."""
    if isinstance(provider, ResolvedCapacityProvider):
        return provider
    return _remembered(provider, cat or catalog.load())


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
