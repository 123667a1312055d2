"""The cost of a plan: every group the plan provisions (src/gpufleet/plans/groups.py), priced from the
catalog's snapshot by the cost rules, per group, by purchase option and in total, beside the cost of
the nodes its workloads need (the plan's placement). The JSON plan's `cost` block, the pack's
`fleet-budget` and the diff all read this one function.

A group whose price is unknown (its region not known before apply, a Capacity Block, no source for
its cloud) keeps null amounts and is listed under `unpriced` with the reason; totals add the groups
that are priced and say they are incomplete.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog import prices as price_catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.prices import PriceSnapshot
from gpufleet.catalog.wording import counted
from gpufleet.plans.groups import Group, priced_groups
from gpufleet.plans.index import Index, Resource, mapping, str_or
from gpufleet.rules import cost as cost_rules
from gpufleet.rules import fargate as fargate_rules
from gpufleet.rules import lifecycle

SIZES = cost_rules.SIZES


def _region(group: Group, hints: Mapping[str, str]) -> str | None:
    """Where the group's prices are: the group's region (its resource's, else its provider's), else
    the plan's hint for its cloud."""
    if group.region is not None or group.cloud is None:
        return group.region
    return hints.get(group.cloud)


# What the snapshot cannot price, said where it applies.
AUTO_MODE_FEE = "EKS Auto Mode adds a management fee per instance (aws.amazon.com/eks/pricing), which the snapshot does not hold: the cost shown is EC2's alone"
MANAGED_INSTANCES = "ECS Managed Instances chooses the instance types when tasks run (from the provider's instance requirements): the plan names no type to price"
FARGATE = "the snapshot holds EC2 instances' prices, not Fargate's (billed per task or pod by its vCPU and memory): not counted"


def _on_fargate(placement: Mapping) -> dict[str, str]:
    """The Fargate capacity the placement runs tasks and pods on: per capacity provider or profile,
    how many tasks or pods (the cost names them unpriced, never passes them over)."""
    counts: dict[tuple[str, str], int] = {}
    for task in placement.get("tasks") or []:
        names = str(task.get("capacityProvider") or "").split(", ")
        if task.get("status") == "placed" and all(n in fargate_rules.PROVIDERS for n in names):
            key = (f"ECS on {task['capacityProvider']}", "task")
            counts[key] = counts.get(key, 0) + (task.get("instancesNeeded") or 0)
    for pod in placement.get("pods") or []:
        profile = mapping(pod.get("fargate")).get("profile")
        if profile is not None and pod.get("status") != "pending":
            key = (f"Fargate profile {profile}", "pod")
            counts[key] = counts.get(key, 0) + sum(where.get("placed") or 0 for where in (pod.get("nodeGroups") or {}).values())
    return {name: counted(n, noun) for (name, noun), n in counts.items()}


def _node_class_group(resource: Resource | None) -> object:
    spec = mapping(mapping(mapping(resource.props.get("spec") if resource else None).get("template")).get("spec")).get("nodeClassRef")
    return mapping(spec).get("group")


def _accelerators(group: Group) -> float:
    return group.gpus or group.gpu_fraction or group.neuron_chips


def _needed(placement: Mapping) -> tuple[dict[str, tuple[int, int]], dict[str, list[tuple[str, int, str | None]]], bool]:
    """Nodes the workloads need: per node group or capacity provider, (at least, at most): the
    workload that needs the most nodes alone, and every workload on nodes of its own (the plan says
    how many of each fit a node, not which share one); per NodePool, the nodes Karpenter launches
    (type, how many, the rule that named the type)."""
    alone: dict[str, list[int]] = {}
    for pod in placement.get("pods") or []:
        if pod.get("status") == "daemon":
            continue
        own: dict[str, int] = {}
        for name, where in (pod.get("nodeGroups") or {}).items():
            placed, per_node = where.get("placed") or 0, where.get("perNode")
            if placed and per_node:
                own[name] = math.ceil(placed / per_node)
        for name, grown in (pod.get("scaleUp") or {}).items():
            own[name] = own.get(name, 0) + grown
        for name, nodes in own.items():
            alone.setdefault(name, []).append(nodes)
    for task in placement.get("tasks") or []:
        if task.get("instancesNeeded") and task.get("capacityProvider"):
            alone.setdefault(task["capacityProvider"], []).append(task["instancesNeeded"])
    per_group = {name: (max(counts), sum(counts)) for name, counts in alone.items()}
    launched: dict[str, list[tuple[str, int, str | None]]] = {}
    for launch in placement.get("provisioned") or []:
        launched.setdefault(launch["nodePool"], []).append((launch["instanceType"], launch["nodes"], launch.get("chosen")))
    placed_any = bool([p for p in placement.get("pods") or [] if p.get("status") != "daemon"] or placement.get("tasks"))
    return per_group, launched, placed_any


def _group_entry(group: Group, region: str | None, snapshot: PriceSnapshot) -> tuple[dict, cost_rules.Price]:
    price = cost_rules.instance_price(
        snapshot, group.cloud, region, group.instance_type, group.purchase, group.zones, group.priced_accelerator
    )
    entry = {
        "platform": group.platform,
        "cloud": group.cloud,
        "group": group.name,
        "urn": group.urn,
        "instanceType": group.instance_type,
        "region": region,
        "instances": dict(group.sizes),
        "acceleratorsPerInstance": _accelerators(group),
        **cost_rules.group_cost(price, group.sizes, _accelerators(group)),
        "sources": list(price.sources),
    }
    return entry, price


def plan_cost(
    resources: Sequence[Resource],
    placement: Mapping | None = None,
    hints: Mapping[str, str] | None = None,
    snapshot: PriceSnapshot | None = None,
    cat: Catalog | None = None,
) -> dict:
    """The plan's `cost` block, from its typed resources (`plans.index.from_plan`, or the pack's
    `policies.inputs.typed`). `hints`: cloud -> region, for groups whose region the resources do not
    give (a stack file's AKS location of an existing cluster)."""
    snapshot = snapshot or price_catalog.load()
    # The engine's plan and the diff pass no catalog until issue 51's plan-view work ports them.
    cat = cat if cat is not None else catalog.load()
    hints = hints or {}
    index = Index(resources)
    per_group, launched, placed_any = _needed(placement or {})
    groups: list[dict] = []
    unpriced: list[dict[str, object]] = []
    auto_mode = cat.facts.eks.auto_mode
    used: set[str] = set()  # the snapshot's sources of the prices used
    for group in priced_groups(index.resources, cat).values():
        region = _region(group, hints)
        entry, price = _group_entry(group, region, snapshot)
        used.update(price.sources)
        launches_unpriced: list[dict[str, object]] = []
        if group.platform == "karpenter" and _node_class_group(index.by_urn.get(group.urn)) == auto_mode.node_class_group:
            entry["notes"] = [AUTO_MODE_FEE]
        if group.derived:
            entry["notes"] = [*entry.get("notes", []), f"priced as derived: {group.derived}"]
        if group.platform == "karpenter" and group.name in launched:
            launch_prices = [
                (name, nodes, cost_rules.instance_price(snapshot, group.cloud, region, name, group.purchase))
                for name, nodes, _ in launched[group.name]
            ]
            used.update(s for _, _, p in launch_prices for s in p.sources)
            needs = [
                {"instanceType": name, **cost_rules.nodes_cost(p, nodes), **({"chosen": chosen} if chosen else {})}
                for (name, nodes, p), (_, _, chosen) in zip(launch_prices, launched[group.name], strict=True)
            ]
            launches_unpriced = _launches_unpriced(group, price, launch_prices)
            hourly = cost_rules.add([n["hourly"] for n in needs]) if all(n["hourly"] is not None for n in needs) else None
            monthly = _monthly(hourly)
            entry["needed"] = {
                "nodes": sum(n["nodes"] for n in needs),
                "hourly": hourly,
                "monthly": monthly,
                "nodesAtMost": sum(n["nodes"] for n in needs),
                "hourlyAtMost": hourly,
                "monthlyAtMost": monthly,
                "byType": needs,
                "from": "the nodes Karpenter launches for the Pending pods",
            }
        elif placed_any and group.platform != "karpenter":
            least, most = per_group.get(group.name, (0, 0))
            low, high = cost_rules.nodes_cost(price, least), cost_rules.nodes_cost(price, most)
            entry["needed"] = {
                **low,
                "nodesAtMost": most,
                "hourlyAtMost": high["hourly"],
                "monthlyAtMost": high["monthly"],
                "from": "the placement: at least the workload that needs the most nodes alone, at most every workload on nodes of its own",
            }
        groups.append(entry)
        if price.dollars is None:
            unpriced.append({"group": group.name, "urn": group.urn, "instanceType": group.instance_type, "reason": price.basis})
        elif any(entry["hourly"][k] is None for k in SIZES):
            unknown = ", ".join(k for k in SIZES if entry["hourly"][k] is None)
            unpriced.append(
                {
                    "group": group.name,
                    "urn": group.urn,
                    "instanceType": group.instance_type,
                    "reason": f"its {unknown} size is not known from the plan (a regional pool's nodes are per zone of its cluster; an autoscaled pool's desired size is the autoscaler's)",
                }
            )
        unpriced.extend(launches_unpriced)
    # Nodes the placement reads that no group here prices (a pulumi-eks component's, derived from
    # its defaults; a GKE cluster's default pool; azure-native pools): named, never passed over.
    # (A group the cost reads by another type, such as a managed group naming none, is the same group.)
    read = {g["group"] for g in groups}
    for shape in (placement or {}).get("nodeGroups") or []:
        if shape["nodeGroup"] not in read:
            how = f"derived: {shape['derived']}" if shape.get("derived") else "read by the placement"
            unpriced.append(
                {
                    "group": shape["nodeGroup"],
                    "urn": None,
                    "instanceType": shape["instanceType"],
                    "reason": f"the placement reads its nodes, but no resource of the plan prices them ({how}): not counted",
                }
            )
    for name, count in _on_fargate(placement or {}).items():
        unpriced.append({"group": name, "urn": None, "instanceType": "AWS Fargate", "reason": f"{FARGATE} ({count})"})
    for r in index.of(tokens.ECS_CAPACITY_PROVIDER):
        if r.props.get("managedInstancesProvider"):
            name = str_or(r.props.get("name"), r.name)
            unpriced.append({"group": name, "urn": r.urn, "instanceType": "ECS Managed Instances", "reason": MANAGED_INSTANCES})
    return {
        "prices": {
            "date": snapshot.oldest(used)[0],
            "stated": cost_rules.prices_stated(snapshot, used),
            "sources": {s: snapshot.source_line(s) for s in sorted(used)},
            "advisories": cost_rules.prices_advisories(snapshot, used, lifecycle.today()),
            "currency": "USD",
            "hoursPerMonth": cost_rules.HOURS_PER_MONTH,
        },
        "groups": groups,
        "byPurchase": _by_purchase(groups),
        "total": _total(groups),
        "complete": not unpriced,
        "unpriced": unpriced,
    }


def _launches_unpriced(group: Group, price: cost_rules.Price, launches: list[tuple[str, int, cost_rules.Price]]) -> list[dict[str, object]]:
    """The nodes Karpenter launches whose type has no price, named with the reason (a type the pool
    itself is priced as, and unpriced for the same reason, is named once, as the pool)."""
    return [
        {
            "group": group.name,
            "urn": group.urn,
            "instanceType": name,
            "reason": f"the {counted(nodes, 'node')} Karpenter launches for the Pending pods: {p.basis}",
        }
        for name, nodes, p in launches
        if p.dollars is None and not (name == group.instance_type and p.basis == price.basis)
    ]


def _monthly(hourly: float | None) -> float | None:
    return round(hourly * cost_rules.HOURS_PER_MONTH, 2) if hourly is not None else None


def _sum_sizes(groups: list[dict], key: str) -> dict:
    return {k: cost_rules.add([g[key][k] for g in groups]) for k in SIZES}


def _total(groups: list[dict]) -> dict:
    needed = [g["needed"] for g in groups if "needed" in g]
    total = {
        "hourly": _sum_sizes(groups, "hourly"),
        "monthly": {
            k: (round(v * cost_rules.HOURS_PER_MONTH, 2) if v is not None else None) for k, v in _sum_sizes(groups, "hourly").items()
        },
    }
    total["idleMonthly"] = total["monthly"]["min"]
    if needed:
        hourly, most = cost_rules.add([n["hourly"] for n in needed]), cost_rules.add([n["hourlyAtMost"] for n in needed])
        total["needed"] = {
            "hourly": hourly,
            "monthly": _monthly(hourly),
            "hourlyAtMost": most,
            "monthlyAtMost": _monthly(most),
            "complete": all(n["hourly"] is not None for n in needed),
        }
    return total


def _by_purchase(groups: list[dict]) -> dict:
    options: dict[str, list[dict]] = {}
    for g in groups:
        options.setdefault(g["purchase"], []).append(g)
    return {
        option: {
            "groups": [g["group"] for g in found],
            "hourly": _sum_sizes(found, "hourly"),
            "monthly": {
                k: (round(v * cost_rules.HOURS_PER_MONTH, 2) if v is not None else None) for k, v in _sum_sizes(found, "hourly").items()
            },
        }
        for option, found in sorted(options.items())
    }


# Where the AWS provider takes its region from when none is configured (pulumi-aws's configuration
# reference: https://www.pulumi.com/registry/packages/aws/installation-configuration/).
AWS_REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION")


def plan_hints(summary: Mapping, environ: Mapping[str, str] | None = None, aws_region: str | None = None) -> dict[str, str]:
    """Regions for clouds whose groups' providers name none (cloud -> region): a gpufleet plan's
    summary states them; else the stack's `aws:region` (`aws_region`), else the environment the AWS
    provider reads."""
    hints = {cloud: region for cloud, region in (summary.get("regions") or {}).items() if isinstance(region, str)}
    env = environ or {}
    aws = aws_region or next((env[v] for v in AWS_REGION_VARIABLES if env.get(v)), None)
    if aws and "aws" not in hints:
        hints["aws"] = aws
    return hints
