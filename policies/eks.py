"""EKS rules: accelerated managed node groups and the EFA launch templates behind them.

An EKS node group names its instance type; its launch template (found through the node group's
property dependencies) carries the interfaces, placement and security groups. Each rule decides
with the catalog predicates the stack spec calls.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, StackValidationArgs, StackValidationPolicy

from gpufleet.components.catalog import catalog
from gpufleet.components.rules import eks as eks_rules, k8s as k8s_rules
from gpufleet.components.rules.efa import efa_bandwidth_note, efa_layout_problems
from gpufleet.policies.eks_nodes import has_efa, interfaces, node_group_type, template_types
from gpufleet.policies.k8s import operator_installs_driver
from gpufleet.policies.inputs import depended_on, get, instance_type, items, present, truthy
from gpufleet.components.catalog import tokens


def _efa_templates(args: StackValidationArgs):
    """(template, instance type, node group or None) of every launch template with EFA interfaces:
    the type is the template's own, else that of the node group that uses the template."""
    used_by = template_types(args.resources)
    found = []
    for template in args.resources:
        if template.resource_type == tokens.LAUNCH_TEMPLATE and has_efa(template):
            group, group_type = used_by.get(template.urn, (None, None))
            own = instance_type(catalog.load(), get(template.props, "instanceType"))
            found.append((template, group_type or own, group))
    return found


def _validate_efa_interfaces(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, it, group in _efa_templates(args):
        if it is None:
            continue  # no single known type to lay the cards out against
        for problem in efa_layout_problems(it, interfaces(template)):
            where = f"node group {group.name!r}'s " if group is not None else ""
            report(f"{where}launch template {template.name!r} ({it.name}): {problem}", template.urn)


def _validate_efa_bandwidth(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, it, group in _efa_templates(args):
        note = efa_bandwidth_note(it, interfaces(template)) if it is not None else None
        if note:
            where = f"node group {group.name!r}'s " if group is not None else ""
            report(f"{where}launch template {template.name!r}: {note}", template.urn)


def _self_referencing(group) -> tuple[bool, bool]:
    """(ingress, egress): does the security group allow all traffic from and to itself?"""

    def all_self(rules) -> bool:
        return any(truthy(get(r, "self")) and str(get(r, "protocol")) in ("-1", "all") for r in items(rules))

    return all_self(get(group.props, "ingress")), all_self(get(group.props, "egress"))


def _validate_efa_security_group(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, it, _ in _efa_templates(args):
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


def _validate_efa_single_az(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, _, group in _efa_templates(args):
        if group is None:
            continue
        subnets = depended_on(group, tokens.SUBNET)
        zones = [get(s.props, "availabilityZone") for s in subnets]
        if not subnets or not all(isinstance(z, str) for z in zones):
            continue  # subnets outside this stack: their zones are not known here
        reason = eks_rules.efa_single_zone(zones)
        if reason:
            report(f"node group {group.name!r}: {reason}", group.urn)


def _validate_efa_placement(args: StackValidationArgs, report: ReportViolation) -> None:
    for template, _, _ in _efa_templates(args):
        reserved = present(template.props, "capacityReservationSpecification", "capacityReservationTarget")
        placed = present(template.props, "placement", "groupName")
        reason = eks_rules.efa_placement(reserved, placed)
        if reason:
            report(f"launch template {template.name!r}: {reason}", template.urn)


def _validate_taint_effects(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.EKS_NODE_GROUP:
        return
    eks_facts = catalog.load().facts.eks
    for taint in items(get(args.props, "taints")):
        reason = eks_rules.taint_effect_valid(get(taint, "effect"), eks_facts)
        if reason:
            report(f"taint {get(taint, 'key')!r}: {reason}")


def _validate_driver(args: StackValidationArgs, report: ReportViolation) -> None:
    """With a GPU Operator in the stack, each NVIDIA node group gets one driver: its AMI's or the operator's."""
    if not any(r.resource_type == tokens.HELM_RELEASE and get(r.props, "chart") == catalog.load().facts.charts.gpu_operator.chart for r in args.resources):
        return
    operator, eks_facts = operator_installs_driver(args), catalog.load().facts.eks
    for group in args.resources:
        it = node_group_type(group) if group.resource_type == tokens.EKS_NODE_GROUP else None
        if it is None or eks_rules.accelerator(it) != "nvidia":
            continue
        ami = get(group.props, "amiType")
        ami = ami if isinstance(ami, str) else eks_rules.default_ami_type(it, eks_facts)
        reason = k8s_rules.one_driver_problem(eks_rules.ami_driver(ami, eks_facts), f"amiType {ami}", operator)
        if reason:
            report(f"node group {group.name!r}: {reason}", group.urn)


POLICIES = [
    StackValidationPolicy(
        name="eks-gpu-driver",
        description="With the NVIDIA GPU Operator in the stack, each NVIDIA node group gets exactly one driver: the accelerated AMI's or the operator's.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_driver,
        remediation_steps="Turn the operator's driver off (driver.enabled: false): the accelerated NVIDIA AMI types ship the driver.",
    ),
    StackValidationPolicy(
        name="eks-efa-interfaces",
        description="A launch template with EFA interfaces lays them out as EC2 accepts for its type: a primary on card 0 "
        "at device index 0 that is not efa-only, cards the type has, device indexes below each card's "
        "MaximumNetworkInterfaces, interface types the card supports, no card and device index twice, at most "
        "MaximumEfaInterfaces EFA interfaces.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_efa_interfaces,
        remediation_steps="Lay the interfaces out from the type's NetworkCards (`gpufleet catalog TYPE`): AWS recommends an "
        "ENA primary, efa-only on card 0 at device index 1 and at device index 0 on every further card.",
    ),
    StackValidationPolicy(
        name="eks-efa-bandwidth",
        description="A launch template with EFA interfaces uses all MaximumEfaInterfaces of its type (fewer leave EFA bandwidth unused).",
        enforcement_level=EnforcementLevel.ADVISORY,
        validate=_validate_efa_bandwidth,
        remediation_steps="Add an efa-only interface on each further network card that supports EFA.",
    ),
    StackValidationPolicy(
        name="eks-efa-security-group",
        description="EFA interfaces carry a security group that allows all traffic from and to itself (ingress and egress).",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_efa_security_group,
        remediation_steps="Add ingress and egress rules {protocol: -1, self: true} to a security group on every EFA interface.",
    ),
    StackValidationPolicy(
        name="eks-efa-single-az",
        description="An EFA node group's subnets are in one availability zone.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_efa_single_az,
        remediation_steps="Give the node group the subnet of one zone where its instance type is offered.",
    ),
    StackValidationPolicy(
        name="eks-efa-placement",
        description="EFA launch templates use a cluster placement group, except with a capacity reservation or block.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_efa_placement,
        remediation_steps="Add placement.groupName (a cluster placement group), or drop it when launching into a reservation.",
    ),
    ResourceValidationPolicy(
        name="eks-taint-effect-enum",
        description="EKS node group taints use the EKS API's effect enum (NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE).",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_taint_effects,
        remediation_steps="Write NoSchedule as NO_SCHEDULE (and NoExecute, PreferNoSchedule likewise) in aws.eks.NodeGroup taints.",
    ),
]
