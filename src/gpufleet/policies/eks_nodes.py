"""EKS managed node groups and their launch templates as the rules read them: a managed group's
template names no instance type (the group does), and its EFA interfaces sit on the template."""

from __future__ import annotations

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import InstanceType
from gpufleet.policies.inputs import depended_on, get, instance_type, items
from gpufleet.rules.efa import EFA_TYPES, EfaInterface


def node_group_type(group) -> InstanceType | None:
    """The one instance type a node group runs: its instanceTypes, else its launch template's (a
    capacity block names the type there only); None when none, several or an unknown one."""
    types = [t for t in items(get(group.props, "instanceTypes")) if isinstance(t, str)]
    if not types:
        types = [t for template in depended_on(group, tokens.LAUNCH_TEMPLATE) if isinstance(t := get(template.props, "instanceType"), str)]
    return instance_type(catalog.load(), types[0]) if len(types) == 1 else None


def template_types(resources) -> dict[str, tuple]:
    """Launch template URN -> (the node group that uses it, that group's instance type)."""
    found = {}
    for group in resources:
        if group.resource_type == tokens.EKS_NODE_GROUP:
            for template in depended_on(group, tokens.LAUNCH_TEMPLATE):
                found[template.urn] = (group, node_group_type(group))
    return found


def interfaces(template) -> list[EfaInterface]:
    """A launch template's network interfaces (a plain interface where no type is set)."""
    found = []
    for ni in items(get(template.props, "networkInterfaces")):
        device, card = get(ni, "deviceIndex"), get(ni, "networkCardIndex")
        found.append(EfaInterface(int(card or 0), int(device or 0), get(ni, "interfaceType") or "interface"))
    return found


def has_efa(template) -> bool:
    return any(i.interface_type in EFA_TYPES for i in interfaces(template))
