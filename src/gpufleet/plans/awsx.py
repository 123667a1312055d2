"""What awsx's components will create, where its provider is not run (gpufleet's offline engine):
the ECS service and task definition of a FargateService or EC2Service, a task definition
component's task definition, and a Vpc's subnets. Derived from the component's inputs and awsx's
own defaults at a pinned version (curated libraries.awsx), each marked as derived.

Under `pulumi preview` awsx's provider builds the children, so the plan holds them and nothing is
derived: a component whose children are in the plan is read through them."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator, Mapping

from gpufleet.catalog import tokens
from gpufleet.catalog.facts import Awsx, AwsxFargateSizes, AwsxTaskDefinition
from gpufleet.plans.index import Index, Resource, as_int, seq

# The service inputs that make awsx leave launchType out (fargateService.ts L60-L71, ec2Service.ts L56-L67).
_STRATEGIES = ("capacityProviderStrategies", "useClusterDefaultCapacityProviderStrategy")
# Component inputs that are not the aws.ecs.Service's (awsx turns them into its other children).
_NOT_SERVICE = ("taskDefinition", "taskDefinitionArgs", "assignPublicIp", "continueBeforeSteadyState")


def _child_urn(parent: str, types: tuple[str, ...], name: str) -> str:
    """The URN a child gets from its parent: the parent's qualified type, then the child's."""
    stack_project, qualified, _ = parent.rsplit("::", 2)
    return f"{stack_project}::{qualified}${'$'.join(types)}::{name}"


def _built_by_provider(index: Index, component: Resource) -> bool:
    """Are the component's children in the plan (its provider ran, as under `pulumi preview`)? A
    child's URN carries its parents' types, not their names; awsx names every child from its
    component's name (vpc.ts L165-L349, the ECS components' children their own name)."""
    qualified = component.urn.rsplit("::", 2)[1]
    return any(
        r.urn.rsplit("::", 2)[1].startswith(qualified + "$") and r.urn.rsplit("::", 1)[1].startswith(component.name)
        for r in index.resources
    )


def _containers(args: Mapping) -> list[dict]:
    """containerDefinitions as awsx writes them (containers.ts L22-L113): one `container` or a map of
    `containers`, sorted by name, passed through; a port mapping's hostPort defaults to its containerPort."""
    given = args.get("containers")
    if isinstance(given, Mapping):
        named = {str(k): v for k, v in given.items() if isinstance(v, Mapping)}
    elif isinstance(args.get("container"), Mapping):
        one = args["container"]
        named = {str(one.get("name") or "container"): one}
    else:
        named = {}
    found = []
    for name in sorted(named):
        container = {k: v for k, v in named[name].items()}
        mappings = []
        for m in seq(container.get("portMappings")):
            if isinstance(m, Mapping):
                mapping = {k: v for k, v in m.items() if k != "targetGroup"}
                if "containerPort" in mapping and "hostPort" not in mapping:
                    mapping["hostPort"] = mapping["containerPort"]
                mappings.append(mapping)
        found.append({**container, "portMappings": mappings, "name": name})
    return found


def fargate_size(containers: list[dict], sizes: AwsxFargateSizes) -> tuple[str, str] | str | None:
    """The task cpu and memory awsx's FargateTaskDefinition computes from its containers (curated
    libraries.awsx.fargateSizes), as the text it passes on; UNKNOWN where a container's value is
    known only after apply (awsx computes them in an apply); None where no size of its table covers
    them (awsx throws)."""
    cpu = memory = 0
    for c in containers:
        values = c.get("cpu"), c.get("memory"), c.get("memoryReservation")
        if tokens.UNKNOWN in values:
            return tokens.UNKNOWN
        # JavaScript's truthiness: a reservation of 0 or none falls back to the hard limit.
        memory += as_int(values[2]) or as_int(values[1])
        cpu += as_int(values[0])
    # The order awsx's module leaves its table in: by memory, then by vCPU (stable sorts, in place).
    table = sorted(((m, s.vcpu) for s in sizes.sizes for m in s.memories()), key=lambda pair: pair[0])
    found = next(((m, v) for m, v in table if v >= cpu / 1024 and m >= memory / 1024), None)
    if found is None or cpu / 1024 > max(v for _, v in table) or memory / 1024 > max(m for m, _ in table):
        return None
    return str(int(found[1] * 1024)), str(int(found[0] * 1024))


def _task_definition(urn: str, name: str, args: Mapping, facts: AwsxTaskDefinition, why: str, sized: AwsxFargateSizes | None) -> Resource:
    """`sized`: awsx's Fargate table, where the component computes the task's size from its containers."""
    network = facts.network_mode if facts.network_mode_fixed or not isinstance(args.get("networkMode"), str) else args["networkMode"]
    containers = _containers(args)
    props = {
        "family": args["family"] if isinstance(args.get("family"), str) else name,
        "containerDefinitions": containers,
        "networkMode": network,
        "requiresCompatibilities": list(facts.requires_compatibilities),
        **{k: args[k] for k in ("cpu", "memory", "placementConstraints", "runtimePlatform") if k in args},
    }
    if sized is not None and ("cpu" not in args or "memory" not in args):
        size = fargate_size(containers, sized)
        if isinstance(size, tuple):
            props.setdefault("cpu", size[0])
            props.setdefault("memory", size[1])
        elif size == tokens.UNKNOWN:
            props.setdefault("cpu", size)
            props.setdefault("memory", size)
    return Resource(urn, tokens.ECS_TASK_DEFINITION, name, props, derived=why)


def ecs_resources(index: Index, awsx: Awsx) -> list[Resource]:
    """The aws.ecs Services and TaskDefinitions that awsx's ECS components of this plan will create."""
    found: list[Resource] = []
    made: dict[str, str] = {}  # a task definition component's URN -> its derived task definition's
    for token, facts in awsx.task_definitions.items():
        for td in index.of(token):
            if _built_by_provider(index, td):
                continue
            urn = _child_urn(td.urn, (tokens.ECS_TASK_DEFINITION,), td.name)
            made[td.urn] = urn
            found.append(
                _task_definition(
                    urn,
                    td.name,
                    td.props,
                    facts,
                    f"derived from awsx {token.rsplit(':', 1)[-1]} {td.name!r} as awsx {awsx.version} makes it ({facts.source})",
                    awsx.fargate_sizes if token == tokens.AWSX_FARGATE_TASK_DEFINITION else None,
                )
            )
    for token, service_facts in awsx.services.items():
        for service in index.of(token):
            if _built_by_provider(index, service):
                continue
            why = f"derived from awsx {token.rsplit(':', 1)[-1]} {service.name!r} as awsx {awsx.version} makes it ({service_facts.source})"
            props = service.props
            deps = {k: v for k, v in service.deps.items() if k not in _NOT_SERVICE}
            if isinstance(props.get("taskDefinitionArgs"), Mapping):
                urn = _child_urn(service.urn, (service_facts.task_definition, tokens.ECS_TASK_DEFINITION), service.name)
                found.append(
                    _task_definition(
                        urn,
                        service.name,
                        props["taskDefinitionArgs"],
                        awsx.task_definitions[service_facts.task_definition],
                        why,
                        awsx.fargate_sizes if service_facts.task_definition == tokens.AWSX_FARGATE_TASK_DEFINITION else None,
                    )
                )
                deps["taskDefinition"] = (urn,)
            else:
                deps["taskDefinition"] = tuple(made.get(u, u) for u in service.deps.get("taskDefinition", ()))
            inputs = {k: v for k, v in props.items() if k not in _NOT_SERVICE}
            if not any(k in props for k in _STRATEGIES):
                inputs["launchType"] = service_facts.launch_type
            if "desiredCount" not in inputs and service_facts.desired_count is not None:
                inputs["desiredCount"] = service_facts.desired_count
            found.append(
                Resource(
                    _child_urn(service.urn, (tokens.ECS_SERVICE,), service.name),
                    tokens.ECS_SERVICE,
                    service.name,
                    inputs,
                    deps,
                    derived=why,
                )
            )
    return found


def _subnet_cidrs(cidr: str, zones: int) -> list[tuple[str, str]] | None:
    """(Private, Public) per zone as awsx's Legacy allocator lays them out with no subnetSpecs
    (subnetDistributorLegacy.ts L25-L55, L184-L216); None where the block cannot hold them."""
    try:
        network = ipaddress.ip_network(cidr)
        bits = math.ceil(math.log2(zones))  # no zone at all is a ValueError: not derived
        found = []
        zone_blocks: Iterator[ipaddress.IPv4Network | ipaddress.IPv6Network] = network.subnets(prefixlen_diff=bits)
        for base in list(zone_blocks)[:zones]:
            private, rest = base.subnets(prefixlen_diff=1)
            found.append((str(private), str(next(rest.subnets(prefixlen_diff=1)))))
        return found
    except ValueError:
        return None


def networks(index: Index, awsx: Awsx) -> tuple[list[dict], list[str]]:
    """awsx Vpcs' subnets (the plan's `placement.networks`), and what of them cannot be derived."""
    found, gaps = [], []
    defaults = awsx.vpc
    for vpc in index.of(tokens.AWSX_VPC):
        if _built_by_provider(index, vpc):
            continue
        props = vpc.props
        names = [z for z in seq(props.get("availabilityZoneNames")) if isinstance(z, str)]
        count = len(names) or as_int(props.get("numberOfAvailabilityZones"), defaults.availability_zones)
        zones = names or [f"the region's zone {i + 1} (by name)" for i in range(count)]
        cidr = props.get("cidrBlock", defaults.cidr_block)
        layout = None
        if "subnetSpecs" in props or props.get("subnetStrategy", "Legacy") != "Legacy" or "ipv4IpamPoolId" in props:
            gaps.append(f"awsx Vpc {vpc.name!r}: its subnet layout (subnetSpecs, subnetStrategy or an IPAM pool) is not derived")
        elif not isinstance(cidr, str) or (layout := _subnet_cidrs(cidr, count)) is None:
            gaps.append(f"awsx Vpc {vpc.name!r}: cidrBlock {cidr!r} is not known offline, so its subnets' blocks are not derived")
        subnets = []
        if layout is not None:
            for i, (zone, blocks) in enumerate(zip(zones, layout), start=1):
                for kind, block in zip(defaults.subnet_types, blocks):
                    subnets.append({"subnet": f"{vpc.name}-{kind.lower()}-{i}", "type": kind, "zone": zone, "cidrBlock": block})
        found.append(
            {
                "network": vpc.name,
                "urn": vpc.urn,
                "cidrBlock": cidr if isinstance(cidr, str) else None,
                "zones": zones,
                "subnets": subnets,
                "natGateways": (props.get("natGateways") or {}).get("strategy", defaults.nat_gateways)
                if isinstance(props.get("natGateways", {}), Mapping)
                else None,
                "derived": f"as awsx {awsx.version} makes it ({defaults.source})",
            }
        )
    return found, gaps
