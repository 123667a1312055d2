"""EKS managed node groups and their launch templates as the rules read them: a managed group's
template names no instance type (the group does), and its EFA interfaces sit on the template. The
group's type is the group reader's (src/gpufleet/plans/groups.py), read as the placement and the cost
read it."""

from __future__ import annotations

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.plans import groups as plan_groups
from gpufleet.plans.index import Index
from gpufleet.policies.inputs import depended_on, get, instance_type, items, read_once, typed
from gpufleet.rules.efa import EfaInterface


def node_group_type(group, cat: Catalog) -> InstanceType | None:
    """The one instance type a node group runs: its instanceTypes, else its launch template's (a
    capacity block names the type there only); None when none (EKS's default is not judged here:
    the group did not choose it), several or an unknown one."""
    resource = typed(group)
    index = Index([resource, *(typed(t) for t in depended_on(group, tokens.LAUNCH_TEMPLATE))])
    names, derived = plan_groups.eks_instance_types(resource, index, cat)
    return instance_type(cat, names[0]) if len(names) == 1 and derived is None else None


def template_types(resources, cat: Catalog) -> dict[str, tuple]:
    """Launch template URN -> (the node group that uses it, that group's instance type)."""
    found = {}
    for group in resources:
        if group.resource_type == tokens.EKS_NODE_GROUP:
            for template in depended_on(group, tokens.LAUNCH_TEMPLATE):
                found[template.urn] = (group, node_group_type(group, cat))
    return found


def interfaces(template) -> list[EfaInterface]:
    """A launch template's network interfaces (a plain interface where no type is set)."""
    found = []
    for ni in items(get(template.props, "networkInterfaces")):
        device, card = get(ni, "deviceIndex"), get(ni, "networkCardIndex")
        found.append(EfaInterface(int(card or 0), int(device or 0), get(ni, "interfaceType") or "interface"))
    return found


@read_once
def has_efa(template) -> bool:
    # Once per template: the EKS EFA rules ask it of every launch template of the stack, six times.
    return plan_groups.efa_interfaces(typed(template)) > 0
