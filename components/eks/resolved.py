"""What the catalog decides about an EKS node group, computed once from its args: the instance type's
record and accelerator, the AMI type, the labels and taints in the EKS API's spelling, the EFA
interfaces of its launch template, and what an NCCL test across its nodes needs.

The spec check, the fleet's components, the placement and the summary all read one ResolvedNodeGroup
per args object (resolution is remembered by identity, and a preview's spec is validated once, so
one stack's groups are resolved once per process); a group made from the library resolves itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpufleet.components.catalog import catalog
from gpufleet.components.rules import eks as eks_rules, gpus as gpu_rules
from gpufleet.components.catalog.catalog import Catalog, InstanceType
from gpufleet.components.rules.efa import EfaInterface, efa_count, efa_layout
from gpufleet.components.eks.args import NodeGroupArgs
from gpufleet.components.k8s.device_plugins import ServedGroups
from gpufleet.components.k8s.nccl_test import NcclTarget
from gpufleet.components.spec_model import by_identity


@dataclass(frozen=True)
class ResolvedNodeGroup:
    """A node group's args and what the catalog decides about them (`resolve(args)` makes one)."""

    args: NodeGroupArgs
    instance: InstanceType
    accelerator: str | None  # nvidia | neuron
    ami_type: str | None  # None: the type has no accelerated AMI type (the spec check says so)
    labels: dict[str, str]
    taints: tuple[dict, ...]  # EKS spelling (NO_SCHEDULE)
    efa_interfaces: tuple[EfaInterface, ...]  # the launch template's, card by card; () without EFA

    @property
    def name(self) -> str:
        return self.args.name

    @property
    def efa_count(self) -> int:
        return efa_count(list(self.efa_interfaces))

    @property
    def nccl_target(self) -> NcclTarget:
        """What an NCCL test across the group's nodes needs (NcclTest(name, target, image))."""
        gpus = gpu_rules.whole_gpus(self.instance) or 0
        return NcclTarget(self.name, self.args.instance_type, self.args.desired_size, gpus, self.efa_count, self.taints)


def resolve(group: NodeGroupArgs | ResolvedNodeGroup, cat: Catalog | None = None) -> ResolvedNodeGroup:
    """The group's resolution (raises UnknownInstanceType for a type the catalog lacks, and
    ValueError for an EFA layout the type cannot take: the spec check reports both first)."""
    if isinstance(group, ResolvedNodeGroup):
        return group
    return _remembered(group, cat or catalog.load())


def _resolve(ng: NodeGroupArgs, cat: Catalog) -> ResolvedNodeGroup:
    it = cat.get(ng.instance_type)
    eks = cat.facts.eks
    kind = eks_rules.accelerator(it)
    if ng.taints is None:
        convention = eks.accelerator_taints.of(kind)
        taints = [convention] if convention else []
    else:
        taints = [t.model_dump(exclude_none=True) for t in ng.taints]
    efa = ng.efa
    return ResolvedNodeGroup(
        args=ng,
        instance=it,
        accelerator=kind,
        ami_type=ng.ami_type or eks_rules.default_ami_type(it, eks),
        # The accelerator's labels (the NVIDIA device plugin's affinity needs one), then the spec's.
        labels={**eks.accelerator_labels.of(kind), **ng.labels},
        taints=tuple({**t, "effect": eks_rules.taint_effect_enum(t["effect"], eks)} for t in taints),
        efa_interfaces=tuple(efa_layout(it, efa.layout, efa.secondary_interface_type, efa.interfaces)) if efa is not None else (),
    )


_remembered = by_identity(_resolve)


def served_groups(groups: Iterable[NodeGroupArgs | ResolvedNodeGroup]) -> ServedGroups:
    """The taints of the node groups each device plugin serves (by accelerator; EFA by interfaces)."""
    resolved = [resolve(g) for g in groups]
    return ServedGroups(
        nvidia=[t for g in resolved if g.accelerator == "nvidia" for t in g.taints],
        efa=[t for g in resolved if g.args.efa is not None for t in g.taints],
        neuron=[t for g in resolved if g.accelerator == "neuron" for t in g.taints],
    )
