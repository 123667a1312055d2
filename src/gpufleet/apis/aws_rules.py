"""Request rules the AWS APIs enforce that botocore's shapes do not express: one field given with
another, a field that needs another. Each returns None (or []) when the rule holds, else the
reason with its source; the spec and the policy pack call them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from gpufleet.catalog.facts import AutoMode


def container_requirements(containers: Sequence[object], kind: str) -> Iterator[tuple[int, str, Mapping]]:
    """Each `resourceRequirements` entry of type `kind` (GPU, NeuronDevice) in a task's container
    definitions, in order: the container's index, its name (`#index` without one) and the entry. The
    rules of each kind read them from here, so that a malformed container or entry is skipped alike."""
    for i, c in enumerate(containers):
        if not isinstance(c, Mapping):
            continue
        for req in c.get("resourceRequirements") or []:
            if isinstance(req, Mapping) and req.get("type") == kind:
                yield i, str(c.get("name", f"#{i}")), req


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


def at(props: Mapping, path: list[str]) -> object:
    """The input at a path of keys, or None where one is missing."""
    node: object = props
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def auto_mode_enabled(props: Mapping, auto_mode: AutoMode) -> bool:
    """Does a cluster's request turn EKS Auto Mode on (its compute capability)?"""
    return at(props, auto_mode.capabilities[0]) is True


def auto_mode_problems(props: Mapping, auto_mode: AutoMode) -> list[str]:
    """EKS Auto Mode's capabilities (compute, block storage, load balancing) are enabled or disabled
    together, in the same request, and with them on the self-managed add-ons are off (curated
    eks.autoMode). `props` are a cluster's inputs; an unset capability is not enabled."""
    given = {".".join(path): at(props, path) for path in auto_mode.capabilities}
    on = [p for p, v in given.items() if v is True]
    if not on:
        return []
    found = []
    off = [p for p, v in given.items() if v is not True]
    if off:
        found.append(
            f"enables {', '.join(on)} but not {', '.join(off)}: EKS takes Auto Mode's three capabilities on together or not at all"
        )
    if auto_mode_enabled(props, auto_mode) and props.get("bootstrapSelfManagedAddons") is not auto_mode.bootstrap_self_managed_addons:
        found.append("enables Auto Mode with bootstrapSelfManagedAddons unset or true (its default): Auto Mode needs it false")
    return found
