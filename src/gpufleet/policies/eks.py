"""EKS rules: accelerated managed node groups and the EFA launch templates behind them.

An EKS node group names its instance type; its launch template (found through the node group's
property dependencies) carries the interfaces, placement and security groups. Each rule decides
with the catalog predicates the stack spec calls.
"""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.policies.eks_nodes import has_efa, interfaces, node_group_type, template_types
from gpufleet.policies.inputs import depended_on, get, instance_type, items, plain, present, truthy
from gpufleet.policies.k8s import operator_installs_driver
from gpufleet.policies.registry import Policies
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules.efa import efa_bandwidth_note, efa_layout_problems

POLICIES = Policies(__name__)


def _efa_templates(args: StackValidationArgs, cat: Catalog):
    """(template, instance type, node group or None) of every launch template with EFA interfaces:
    the type is the template's own, else that of the node group that uses the template."""
    used_by = template_types(args.resources, cat)
    found = []
    for template in args.resources:
        if template.resource_type == tokens.LAUNCH_TEMPLATE and has_efa(template):
            group, group_type = used_by.get(template.urn, (None, None))
            own = instance_type(cat, get(template.props, "instanceType"))
            found.append((template, group_type or own, group))
    return found


@POLICIES.stack("eks-gpu-driver")
def _validate_driver(args: StackValidationArgs, report: ReportViolation) -> None:
    """With a GPU Operator in the stack, each NVIDIA node group gets one driver: its AMI's or the operator's."""
    cat = catalog.load()
    if not any(
        r.resource_type == tokens.HELM_RELEASE and get(r.props, "chart") == cat.facts.charts.gpu_operator.chart for r in args.resources
    ):
        return
    operator, eks_facts = operator_installs_driver(args, cat), cat.facts.eks
    for group in args.resources:
        it = node_group_type(group, cat) if group.resource_type == tokens.EKS_NODE_GROUP else None
        if it is None or eks_rules.accelerator(it) != "nvidia":
            continue
        ami = get(group.props, "amiType")
        ami = ami if isinstance(ami, str) else eks_rules.default_ami_type(it, eks_facts)
        reason = k8s_rules.one_driver_problem(eks_rules.ami_driver(ami, eks_facts), f"amiType {ami}", operator)
        if reason:
            report(f"node group {group.name!r}: {reason}", group.urn)


def _groups(args: StackValidationArgs):
    return [r for r in args.resources if r.resource_type == tokens.EKS_NODE_GROUP]


def _repair_unknown(args: StackValidationArgs) -> list[tuple[str, str]]:
    cat = catalog.load()
    found = []
    for group in _groups(args):
        if node_group_type(group, cat) is None:
            found.append((group.urn, f"node group {group.name!r}: its instance type is not known before apply (or it has several)"))
        elif present(group.props, "nodeRepairConfig", "enabled") and get(group.props, "nodeRepairConfig", "enabled") is None:
            found.append((group.urn, f"node group {group.name!r}: nodeRepairConfig.enabled is known only after apply"))
    return found


@POLICIES.stack("eks-node-repair", unjudged=_repair_unknown)
def _validate_repair(args: StackValidationArgs, report: ReportViolation) -> None:
    """An accelerated managed node group repairs its nodes (GPU and Neuron faults become node conditions repair acts on)."""
    cat = catalog.load()
    for group in _groups(args):
        it = node_group_type(group, cat)
        enabled = get(group.props, "nodeRepairConfig", "enabled")
        if it is None or (present(group.props, "nodeRepairConfig", "enabled") and enabled is None):
            continue
        reason = eks_rules.repair_missing(it, enabled)
        if reason:
            report(f"node group {group.name!r}: {reason}", group.urn)


@POLICIES.stack("eks-auto-mode-one-device-plugin")
def _validate_auto_mode_plugins(args: StackValidationArgs, report: ReportViolation) -> None:
    """Auto Mode brings the accelerators' device plugins: a release of one more registers the device twice."""
    facts = catalog.load().facts
    library = facts.libraries.pulumi_eks
    clusters = [r for r in args.resources if r.resource_type in (tokens.EKS_CLUSTER, tokens.PULUMI_EKS_CLUSTER)]
    if not any(eks_rules.auto_mode_pools(r.resource_type, plain(r.props), facts.eks, library) is not None for r in clusters):
        return
    for release in args.resources:
        chart = get(release.props, "chart") if release.resource_type == tokens.HELM_RELEASE else None
        reason = eks_rules.auto_mode_plugin(chart, facts.eks, facts.charts) if isinstance(chart, str) else None
        if reason:
            report(f"Helm release {release.name!r} {reason}", release.urn)


@POLICIES.stack("eks-efa-interfaces")
def _validate_efa_interfaces(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, it, group in _efa_templates(args, catalog.load()):
        if it is None:
            continue  # no single known type to lay the cards out against
        for problem in efa_layout_problems(it, interfaces(template)):
            where = f"node group {group.name!r}'s " if group is not None else ""
            report(f"{where}launch template {template.name!r} ({it.name}): {problem}", template.urn)


@POLICIES.stack("eks-efa-bandwidth")
def _validate_efa_bandwidth(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, it, group in _efa_templates(args, catalog.load()):
        note = efa_bandwidth_note(it, interfaces(template)) if it is not None else None
        if note:
            where = f"node group {group.name!r}'s " if group is not None else ""
            report(f"{where}launch template {template.name!r}: {note}", template.urn)


def _self_referencing(group) -> tuple[bool, bool]:
    """(ingress, egress): does the security group allow all traffic from and to itself?"""

    def all_self(rules) -> bool:
        return any(truthy(get(r, "self")) and str(get(r, "protocol")) in ("-1", "all") for r in items(rules))

    return all_self(get(group.props, "ingress")), all_self(get(group.props, "egress"))


@POLICIES.stack("eks-efa-security-group")
def _validate_efa_security_group(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, _it, _ in _efa_templates(args, catalog.load()):
        groups = depended_on(template, tokens.SECURITY_GROUP)
        verdicts = {g.name: _self_referencing(g) for g in groups}
        if not any(ingress and egress for ingress, egress in verdicts.values()):
            seen = ", ".join(f"{n} (ingress {'yes' if i else 'no'}, egress {'yes' if e else 'no'})" for n, (i, e) in verdicts.items())
            report(
                f"launch template {template.name!r} has EFA interfaces but none of its security groups allows all "
                f"traffic from and to itself ({seen or 'no security group of this stack'}): EFA traffic matches only "
                "security-group rules, so NCCL stalls",
                template.urn,
            )


def _efa_group_zones(args: StackValidationArgs, cat: Catalog):
    """(node group, its subnets' zones or None where they are not known) of each EFA node group."""
    for _, _, group in _efa_templates(args, cat):
        if group is None:
            continue
        subnets = depended_on(group, tokens.SUBNET)
        zones = [get(s.props, "availabilityZone") for s in subnets]
        yield group, (zones if subnets and all(isinstance(z, str) for z in zones) else None)


def _efa_zones_unknown(args: StackValidationArgs) -> list[tuple[str, str]]:
    return [
        (group.urn, f"node group {group.name!r}: its subnets are outside this stack or their zones are not known before apply")
        for group, zones in _efa_group_zones(args, catalog.load())
        if zones is None
    ]


@POLICIES.stack("eks-efa-single-az", unjudged=_efa_zones_unknown)
def _validate_efa_single_az(args: StackValidationArgs, report: ReportViolation) -> None:
    for group, zones in _efa_group_zones(args, catalog.load()):
        reason = eks_rules.efa_single_zone(zones) if zones is not None else None
        if reason:
            report(f"node group {group.name!r}: {reason}", group.urn)


@POLICIES.stack("eks-efa-placement")
def _validate_efa_placement(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, _, _ in _efa_templates(args, catalog.load()):
        reserved = present(template.props, "capacityReservationSpecification", "capacityReservationTarget")
        placed = present(template.props, "placement", "groupName")
        reason = eks_rules.efa_placement(reserved, placed)
        if reason:
            report(f"launch template {template.name!r}: {reason}", template.urn)


@POLICIES.resource("eks-taint-effect-enum", on=tokens.EKS_NODE_GROUP)
def _validate_taint_effects(args: ResourceValidationArgs, report: ReportViolation) -> None:
    eks_facts = catalog.load().facts.eks
    for taint in items(get(args.props, "taints")):
        reason = eks_rules.taint_effect_valid(get(taint, "effect"), eks_facts)
        if reason:
            report(f"taint {get(taint, 'key')!r}: {reason}", None)
