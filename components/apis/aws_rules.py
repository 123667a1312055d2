"""Request rules the AWS APIs enforce that botocore's shapes do not express: one field given with
another, a field that needs another. Each returns None (or []) when the rule holds, else the
reason with its source; the spec and the policy pack call them."""

from __future__ import annotations

from collections.abc import Mapping


def essential_container_problem(containers: list[Mapping]) -> str | None:
    """A task definition needs an essential container (`essential` defaults to true): ECS developer
    guide, task definition parameters, "essential": all tasks must have at least one essential container."""
    if containers and not any(c.get("essential", True) is not False for c in containers):
        return "no container is essential: ECS refuses a task definition without one (the task would end at once)"
    return None


def service_launch_type_problem(launch_type: object, strategies: list) -> str | None:
    """CreateService takes a launch type or a capacity provider strategy, not both (ECS API reference,
    CreateService capacityProviderStrategy: "If a capacityProviderStrategy is specified, the launchType
    parameter must be omitted")."""
    if launch_type and strategies:
        return f"launchType {launch_type} and a capacity provider strategy: ECS takes one of them (omit launchType)"
    return None


def launch_template_security_groups_problem(props: Mapping) -> str | None:
    """With network interfaces, a launch template's security groups go on the interfaces (EC2 API
    reference, RequestLaunchTemplateData SecurityGroupIds: "If you specify a network interface, you
    must specify any security groups as part of the network interface instead")."""
    if props.get("networkInterfaces") and (props.get("vpcSecurityGroupIds") or props.get("securityGroupNames")):
        return "sets network interfaces and template-level security groups: EC2 refuses it; put the groups on the interfaces"
    return None


def node_group_template_problems(props: Mapping) -> list[str]:
    """A managed node group with a launch template sets neither diskSize nor remoteAccess (EKS API
    reference, CreateNodegroup: "If you specify launchTemplate, then don't specify diskSize" /
    "remoteAccess", or the node group deployment fails)."""
    if not props.get("launchTemplate"):
        return []
    return [
        f"sets {key} and a launch template: EKS refuses it (put it in the launch template)"
        for key in ("diskSize", "remoteAccess")
        if props.get(key)
    ]


def capacity_block_problems(group: Mapping, template: Mapping | None) -> list[str]:
    """A CAPACITY_BLOCK managed node group names its instance type in the launch template only, and the
    template targets the block (EKS user guide, "Create a managed node group with Capacity Blocks for
    ML": instanceTypes omitted, InstanceType, InstanceMarketOptions capacity-block and
    CapacityReservationSpecification in the launch template)."""
    if group.get("capacityType") != "CAPACITY_BLOCK":
        return []
    found = []
    if group.get("instanceTypes"):
        found.append("names instanceTypes: a capacity block's type goes in the launch template only")
    if template is None:
        return [*found, "has no launch template: a capacity block needs one that names the type and targets the block"]
    if not template.get("instanceType"):
        found.append("its launch template names no instanceType")
    if (template.get("instanceMarketOptions") or {}).get("marketType") != "capacity-block":
        found.append("its launch template's instanceMarketOptions.marketType is not capacity-block")
    if not (template.get("capacityReservationSpecification") or {}).get("capacityReservationTarget"):
        found.append("its launch template targets no capacity reservation (capacityReservationSpecification.capacityReservationTarget)")
    return found
