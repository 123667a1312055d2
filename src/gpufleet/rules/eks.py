"""EKS rule predicates over the catalog: accelerated AMI types, taint effects, EFA placement.

Plain functions returning None when the rule holds, else a reason; the stack spec and the policy
pack both call them.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpufleet.apis.aws_rules import auto_mode_enabled
from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import Charts, EksFacts, PulumiEks


def accelerator(it: InstanceType) -> str | None:
    """'nvidia', 'neuron', or None (no accelerator, or an accelerator EKS has no AMI for)."""
    if it.neuron is not None:
        return "neuron"
    if it.gpu is not None and it.gpu.manufacturer == "NVIDIA" and not it.gpu.fractional:
        return "nvidia"
    return None


def repair_missing(it: InstanceType, enabled: object) -> str | None:
    """An accelerated managed node group repairs its nodes: without nodeRepairConfig.enabled (EKS's
    default is off) a node whose GPU or Neuron device fails stays in the group."""
    if (it.gpu is None and it.neuron is None) or enabled is True:
        return None
    return (
        f"{it.name} nodes have no node auto repair (nodeRepairConfig.enabled is not true; EKS's default is off): "
        "a node whose GPU or Neuron device fails (an XID, a DCGM or Neuron fault, reported by the node monitoring "
        "agent as AcceleratedHardwareReady) stays in the group, its pods failing or Pending, until someone replaces it"
    )


def default_ami_type(it: InstanceType, eks_facts: EksFacts) -> str | None:
    """The accelerated AMI type EKS runs the type on, when not named: AL2023 for the accelerator and
    architecture."""
    kind = accelerator(it)
    for name, facts in eks_facts.accelerated_ami_types.items():
        if facts.default and facts.accelerator == kind and set(facts.architectures) & set(it.architectures):
            return name
    return None


def ami_driver(ami_type: str | None, eks_facts: EksFacts) -> str | None:
    """Who installs the NVIDIA driver on an AMI type's nodes: the accelerated NVIDIA AMI types ship it
    (facts.md "EKS with EFA": the accelerated AMIs ship the drivers); None for any other type."""
    facts = eks_facts.accelerated_ami_types.get(ami_type or "")
    return f"the EKS AMI type {ami_type}" if facts is not None and facts.accelerator == "nvidia" else None


def ami_type_support(it: InstanceType, ami_type: str | None, eks_facts: EksFacts) -> str | None:
    """Can EKS's accelerated AMI type (None: the type's default) run the type's accelerator?"""
    types = eks_facts.accelerated_ami_types
    if ami_type is not None and ami_type not in types:
        return f"{ami_type} is not an accelerated EKS AMI type (known: {', '.join(types)})"
    if it.incomplete:
        return f"{it.name}: accelerator facts unknown ({it.incomplete})"
    kind = accelerator(it)
    if kind is None:
        what = "a fractional GPU" if it.gpu is not None and it.gpu.fractional else "no NVIDIA GPU or Neuron chip"
        return f"{it.name} has {what}; the accelerated EKS AMIs drive whole NVIDIA GPUs or Neuron chips"
    chosen = ami_type or default_ami_type(it, eks_facts)
    if chosen is None:
        return f"no AL2023 accelerated EKS AMI type runs {it.name} ({'/'.join(it.architectures)})"
    facts = types[chosen]
    if facts.accelerator != kind:
        return f"{chosen} is for {facts.accelerator} nodes; {it.name} is a {kind} type"
    if not set(facts.architectures) & set(it.architectures):
        return f"{it.name} is {'/'.join(it.architectures)}; {chosen} is {'/'.join(facts.architectures)}"
    return None


def taint_effect_enum(effect: str, eks_facts: EksFacts) -> str:
    """The EKS API spelling of a taint effect given in either spelling."""
    effects = eks_facts.taint_effects.by_kubernetes_name()
    return effects.get(effect, effect)


def taint_effect_valid(effect: object, eks_facts: EksFacts) -> str | None:
    """Is `effect` in the EKS API's enum (NO_SCHEDULE ...), as an aws.eks.NodeGroup taint must be?"""
    effects = eks_facts.taint_effects.by_kubernetes_name()
    if effect in effects.values():
        return None
    if effect in effects:
        return f"taint effect {effect!r} is the Kubernetes spelling; the EKS API takes {effects[effect]!r}"
    return f"taint effect {effect!r} is not one of {', '.join(effects.values())}"


def efa_placement(capacity_reserved: bool, placement_group: bool) -> str | None:
    """An EFA group launches into a cluster placement group, except into a capacity reservation or
    block, which carries its own placement (forcing one breaks it)."""
    if capacity_reserved and placement_group:
        return "a capacity reservation or block carries its own placement; a placement group breaks the launch"
    if not capacity_reserved and not placement_group:
        return "EFA nodes need a cluster placement group (none, and no capacity reservation or block)"
    return None


def efa_single_zone(zones: list[str], what: str = "the subnets span") -> str | None:
    """EFA traffic stays in one availability zone: a group's subnets (a NodePool's zones) are in exactly one."""
    if len(set(zones)) != 1:
        return f"EFA node groups must be in one availability zone; {what} {', '.join(sorted(set(zones))) or 'none'}"
    return None


def node_group_name(props: Mapping, fallback: str) -> str:
    """A node group's EKS name as a plan knows it: the name, or `prefix*` for a group the provider
    names from a prefix (the suffix exists only once the group does)."""
    name, prefix = props.get("nodeGroupName"), props.get("nodeGroupNamePrefix")
    if isinstance(name, str):
        return name
    return f"{prefix}*" if isinstance(prefix, str) else fallback


def auto_mode_plugin(chart: str, eks_facts: EksFacts, charts: Charts) -> str | None:
    """On an EKS Auto Mode cluster, a Helm release of a device plugin Auto Mode brings itself (or the
    GPU Operator, whose device plugin is one more NVIDIA plugin) registers the device twice."""
    auto = eks_facts.auto_mode
    built_in = {c.chart for key, c in charts.plugins().items() if key in auto.built_in_plugins} | {charts.gpu_operator.chart}
    if chart not in built_in:
        return None
    return f"installs {chart} on a cluster that runs EKS Auto Mode, which brings the accelerators' device plugins itself: one of them is one too many"


def auto_mode_pools(resource_type: str, props: Mapping, eks_facts: EksFacts, library: PulumiEks) -> list[str] | None:
    """The built-in NodePools a cluster's EKS Auto Mode turns on (as the cluster names them), or
    None when it does not run Auto Mode: an aws.eks Cluster by its compute configuration, a
    pulumi-eks Cluster by its `autoMode`, which its provider makes into that configuration
    (curated libraries.pulumiEks.autoMode: the library's pools, the program's computeConfig over them)."""
    if resource_type == tokens.EKS_CLUSTER:
        if not auto_mode_enabled(props, eks_facts.auto_mode):
            return None
        compute = props.get("computeConfig")
    elif resource_type == tokens.PULUMI_EKS_CLUSTER:
        auto = props.get("autoMode")
        if not isinstance(auto, Mapping) or not (auto.get("enabled") is True or auto.get("enabled") == "true"):
            return None
        given = auto.get("computeConfig")
        compute = {"enabled": True, "nodePools": list(library.auto_mode.node_pools), **(given if isinstance(given, Mapping) else {})}
        if compute.get("enabled") is False:
            return None
    else:
        return None
    pools = compute.get("nodePools") if isinstance(compute, Mapping) else None
    return [p for p in pools if isinstance(p, str)] if isinstance(pools, (list, tuple)) else []
