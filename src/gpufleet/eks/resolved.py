"""What the catalog decides about an EKS node group, computed once from its args: the instance type's
record and accelerator, the AMI type, the labels and taints in the EKS API's spelling, the EFA
interfaces of its launch template, and what an NCCL test across its nodes needs.

The spec check, the fleet's components, the placement and the summary all read one ResolvedNodeGroup
per args object (resolution is remembered by identity, and a preview's spec is validated once, so
one stack's groups are resolved once per process); a group made from the library resolves itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.catalog.facts import EksFacts
from gpufleet.eks.args import EksFleetArgs, NodeGroupArgs
from gpufleet.k8s.args import ClaimedGpuWorkloadArgs, GpuWorkloadArgs
from gpufleet.k8s.device_plugins import ServedGroups
from gpufleet.k8s.dra_claims import Claim
from gpufleet.k8s.dra_claims import workload_claim as dra_claim
from gpufleet.k8s.nccl_test import NcclTarget
from gpufleet.karpenter import manifests
from gpufleet.karpenter.args import NodePoolArgs
from gpufleet.network import zones
from gpufleet.platform.model import by_identity
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules.efa import EfaInterface, efa_count, efa_layout


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


def resolve(group: NodeGroupArgs | ResolvedNodeGroup, cat: Catalog) -> ResolvedNodeGroup:
    """The group's resolution (raises UnknownInstanceType for a type the catalog lacks, and
    ValueError for an EFA layout the type cannot take: the spec check reports both first)."""
    if isinstance(group, ResolvedNodeGroup):
        return group
    return _remembered(group, cat)


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
        # The accelerator's labels (the NVIDIA device plugin's affinity needs one), the label that
        # keeps the device plugin off a DRA group (the driver's kubelet plugin selects it), then the spec's.
        labels={**eks.accelerator_labels.of(kind), **dra_labels(ng, cat), **ng.labels},
        taints=tuple({**t, "effect": eks_rules.taint_effect_enum(t["effect"], eks)} for t in taints),
        efa_interfaces=tuple(efa_layout(it, efa.layout, efa.secondary_interface_type, efa.interfaces)) if efa is not None else (),
    )


_remembered = by_identity(_resolve)


def dra(ng: NodeGroupArgs) -> bool:
    """Does the DRA driver, not the device plugin, serve the group's GPUs?"""
    return ng.allocation == "dra"


def dra_labels(ng: NodeGroupArgs, cat: Catalog) -> dict[str, str]:
    off = cat.facts.dra.device_plugin_off
    return {off.key: off.value} if dra(ng) else {}


def served_groups(groups: Iterable[NodeGroupArgs | ResolvedNodeGroup], cat: Catalog | None = None) -> ServedGroups:
    """The taints of the node groups each device plugin serves (by accelerator; EFA by interfaces).
    `cat`: the catalog the groups resolve against (absent: the process's own; a program of yours calls this)."""
    cat = cat or catalog.load()
    resolved = [resolve(g, cat) for g in groups]
    plugin = [g for g in resolved if not dra(g.args)]
    drivers = [g for g in resolved if dra(g.args)]
    return ServedGroups(
        nvidia=[t for g in plugin if g.accelerator == "nvidia" for t in g.taints],
        efa=[t for g in resolved if g.args.efa is not None for t in g.taints],
        neuron=[t for g in plugin if g.accelerator == "neuron" for t in g.taints],
        needed=frozenset(
            {g.accelerator for g in plugin if g.accelerator}
            | ({"efa"} if any(g.args.efa is not None for g in resolved) else set())
            | ({"dra"} if drivers else set())
        ),
        dra=[t for g in drivers for t in g.taints],
    )


def places_in_group(ng: NodeGroupArgs) -> bool:
    """Does the EFA group launch into a placement group of its own? Not into a reservation, which
    carries its own placement."""
    return ng.efa is not None and ng.efa.placement_group and ng.capacity_reservation_id is None


def system_group_created(fleet: EksFleetArgs) -> bool:
    """gpufleet adds the system node group to a cluster it creates, unless the stack turns it off
    (or EKS Auto Mode runs the cluster's own pods)."""
    return fleet.cluster.create is not None and fleet.system_node_group.enabled and not auto_mode(fleet)


def auto_mode(fleet: EksFleetArgs) -> bool:
    """Does the stack create its cluster with EKS Auto Mode?"""
    return fleet.cluster.create is not None and fleet.cluster.create.auto_mode is not None


def system_ami_type(it, eks_facts: EksFacts) -> str | None:
    """The AL2023 standard AMI type of the system group's architecture."""
    for name, facts in eks_facts.standard_ami_types.items():
        if set(facts.architectures) & set(it.architectures):
            return name
    return None


def vpc_zones(fleet: EksFleetArgs) -> list[str]:
    """The created VPC's zones, as the stack names them (none for existing subnets)."""
    create = fleet.network.create
    return list(create.zones or []) if create is not None else []


def group_zones(ng: NodeGroupArgs, fleet: EksFleetArgs, cat: Catalog, region: str) -> list[str]:
    """The zones a group of a created VPC runs in: its EFA zone, else the zones it names, else the
    VPC's zones that offer its type."""
    zone = efa_zone(ng, fleet, cat, region)
    if zone is not None:
        return [zone]
    if ng.zones is not None:
        return list(ng.zones)
    return zones.group_zones(cat.get(ng.instance_type), vpc_zones(fleet), region)


def system_zones(fleet: EksFleetArgs, cat: Catalog, region: str) -> list[str]:
    """The system group's zones in a created VPC: the first two VPC zones that offer its type. Two
    keep CoreDNS in two zones; a zone appended later leaves them (and so the group) as they are."""
    return zones.group_zones(cat.get(fleet.system_node_group.instance_type), vpc_zones(fleet), region)[:2]


def efa_zone(ng: NodeGroupArgs, fleet: EksFleetArgs, cat: Catalog, region: str) -> str | None:
    """The one zone of an EFA group: the one named, else (created VPC) the first VPC zone that offers
    its type (the stack's zone order decides, so the choice does not move while the zones stay)."""
    if ng.efa is None:
        return None
    if ng.efa.availability_zone is not None or fleet.network.create is None:
        return ng.efa.availability_zone
    offering = zones.group_zones(cat.get(ng.instance_type), vpc_zones(fleet), region)
    return offering[0] if offering else None


def workload_selector(ng: NodeGroupArgs, eks: EksFacts) -> dict[str, str]:
    """The label EKS puts on every node of a managed group, which a workload selects: its group."""
    return {eks.well_known_labels.node_group: ng.name}


def workload_tolerations(ng: NodeGroupArgs, cat: Catalog) -> list[dict]:
    """What a workload on the group tolerates: the group's taints (the accelerator's by default)."""
    return [k8s_rules.toleration_for(t, cat.facts.eks) for t in resolve(ng, cat).taints]


def served_pools(served: ServedGroups, pools: Iterable[NodePoolArgs], cat: Catalog) -> ServedGroups:
    """The groups' served taints with the NodePools' added (EKS spelling, as the groups')."""
    eks = cat.facts.eks
    needed = set(served.needed)
    found = ServedGroups(list(served.nvidia), list(served.efa), list(served.neuron), dra=list(served.dra))
    for pool in pools:
        taints = [{**t, "effect": eks_rules.taint_effect_enum(t["effect"], eks)} for t in manifests.taints(pool, cat)]
        getattr(found, manifests.kind(pool)).extend(taints)
        needed.add(manifests.kind(pool))
        if pool.efa is not None:
            found.efa.extend(taints)
            needed.add("efa")
    return replace(found, needed=frozenset(needed))


def monitoring_addon(fleet: EksFleetArgs) -> bool:
    """Does gpufleet install EKS's node monitoring agent? On every cluster it creates, except under
    Auto Mode, which includes the agent (its DaemonSets stay off Auto Mode's nodes)."""
    return fleet.cluster.create is not None and not auto_mode(fleet)


def monitoring_values(fleet: EksFleetArgs, cat: Catalog) -> dict:
    """The add-on's configuration: the DCGM server's tolerations for the NVIDIA groups' and pools'
    taints (its chart gives it none, so it would never run on a GPU node gpufleet taints)."""
    eks = cat.facts.eks
    served = served_pools(served_groups(fleet.node_groups, cat), plugin_pools(fleet), cat)
    tolerations: list[dict] = []
    for taint in [*served.nvidia, *served.dra]:
        toleration = k8s_rules.toleration_for(taint, eks)
        if toleration not in tolerations:
            tolerations.append(toleration)
    return {eks.node_health.values_keys["dcgm-server"]: {"tolerations": tolerations}} if tolerations else {}


def repair_config(ng: NodeGroupArgs) -> dict:
    """The group's nodeRepairConfig (snake_case, as the provider takes it); unset limits stay EKS's."""
    r = ng.repair
    limits = {
        "max_unhealthy_node_threshold_percentage": r.max_unhealthy_node_threshold_percentage,
        "max_parallel_nodes_repaired_count": r.max_parallel_nodes_repaired_count,
    }
    return {"enabled": r.enabled, **{k: v for k, v in limits.items() if v is not None}}


def plugin_pools(fleet: EksFleetArgs) -> list[NodePoolArgs]:
    """The NodePools whose nodes need gpufleet's device plugins: none under Auto Mode, which brings its own."""
    return [] if auto_mode(fleet) else list(fleet.node_pools)


def discovery_tag(fleet: EksFleetArgs, cat: Catalog) -> dict[str, str]:
    """The tag Karpenter's EC2NodeClasses select the created VPC's private subnets by."""
    return {cat.facts.karpenter.install.discovery_tag: fleet.cluster.name}


def workload_scheduling(wl: GpuWorkloadArgs, fleet: EksFleetArgs, cat: Catalog) -> tuple[dict[str, str], list[dict], dict[str, str]]:
    """(node selector, tolerations, pod annotations) of a workload on its node group or NodePool. A
    Job on a NodePool carries karpenter.sh/do-not-disrupt: consolidation and drift then leave its
    node until it completes."""
    group = next((ng for ng in fleet.node_groups if ng.name == wl.node_pool), None)
    if group is not None:
        return workload_selector(group, cat.facts.eks), workload_tolerations(group, cat), {}
    pool = next(p for p in fleet.node_pools if p.name == wl.node_pool)
    facts = cat.facts.karpenter
    tolerations = [k8s_rules.toleration_for(t, cat.facts.eks) for t in manifests.taints(pool, cat)]
    keep = facts.consolidation.do_not_disrupt
    annotations = {keep["key"]: keep["value"]} if wl.kind in facts.consolidation.batch_kinds else {}
    return {facts.labels.node_pool: pool.name}, tolerations, annotations


def workload_claim(wl: ClaimedGpuWorkloadArgs, fleet: EksFleetArgs, cat: Catalog) -> Claim | None:
    """The workload's DRA claim when its node group's GPUs are the DRA driver's; else None (nvidia.com/gpu)."""
    group = next((ng for ng in fleet.node_groups if ng.name == wl.node_pool), None)
    return dra_claim(wl, cat.facts.dra) if group is not None and dra(group) else None
