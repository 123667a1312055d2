"""Mermaid pictures of a fleet, which GitHub renders in a pull-request comment: `gpufleet preview
--format mermaid` draws the plan's clusters, their groups (GPUs, Neuron chips, EFA interfaces) and
the workloads placed on them; `gpufleet diff --format markdown` draws the groups before and after,
marks what is replaced and links what drags it along.

Everything is read from the plan alone (resources and the placement block), so a `pulumi preview
--json` document draws the same way, less its placement.
"""

from __future__ import annotations

import hashlib
import re

from gpufleet.catalog import tokens
from gpufleet.catalog.wording import counted
from gpufleet.plans.groups import CARRIED, Group, accelerated_groups
from gpufleet.plans.index import Resource, from_plan

CLUSTERS = {
    tokens.EKS_CLUSTER: "EKS cluster",
    tokens.ECS_CLUSTER: "ECS cluster",
}
STYLES = [
    "classDef replaced stroke:#d73a49,stroke-width:3px",
    "classDef removed stroke:#d73a49,stroke-dasharray:5 5",
    "classDef added stroke:#28a745,stroke-width:3px",
    "classDef pending stroke:#d73a49,stroke-dasharray:3 3",
]


def node_id(kind: str, key: str) -> str:
    """A Mermaid id for a thing of the plan: readable, and unique by a short hash of the key."""
    slug = re.sub(r"[^A-Za-z0-9]", "_", key.rsplit("::", 1)[-1])[:40]
    return f"{kind}_{slug}_{hashlib.sha1(key.encode()).hexdigest()[:6]}"


def label(*lines: str) -> str:
    """A quoted Mermaid label; quotes and angle brackets escaped so a name cannot break the graph."""
    text = "<br/>".join(line.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;") for line in lines)
    return f'"{text}"'


def group_lines(g: Group, costs: dict[str, dict] | None = None) -> list[str]:
    """A group's label: name, type and size, what it carries, and (priced) its hourly cost at desired."""
    desired = g.sizes.get("desired")
    total = g.totals()
    carried = [counted(total[k], noun) for k, noun in CARRIED if total[k]]
    lines = [f"{g.platform} {g.name}", f"{g.instance_type} x{desired}", ", ".join(carried) or "no accelerators"]
    priced = (costs or {}).get(g.urn)
    if priced is not None:
        hourly = priced["hourly"]["desired"]
        lines.append(f"${hourly:,.2f}/h" if hourly is not None else f"$ unknown ({priced['purchase']})")
    return lines


def _costs(cost: dict | None) -> dict[str, dict]:
    return {c["urn"]: c for c in (cost or {}).get("groups") or []}


def _cluster_of(resources: list[Resource], clusters: dict[str, Resource]) -> dict[str, str]:
    """Group URN -> cluster URN: a group reads its cluster (clusterName), or a resource reads both
    (an ECS cluster's capacity-provider association)."""
    out: dict[str, str] = {}
    for r in resources:
        deps = {u for urns in r.deps.values() for u in urns} | set(r.dependencies)
        found = [u for u in deps if u in clusters]
        if not found:
            continue
        out.setdefault(r.urn, found[0])
        for u in deps:
            out.setdefault(u, found[0])
    return out


def fleet(plan: dict) -> str:
    """The plan's fleet: a subgraph per cluster holding its groups, each workload linked to the
    groups it is placed on (with how many), a Pending one marked."""
    resources = from_plan(plan)
    clusters = {r.urn: r for r in resources if r.type in CLUSTERS}
    groups = accelerated_groups(resources)
    costs = _costs(plan.get("cost"))
    where = _cluster_of(resources, clusters)
    lines = ["flowchart LR"]
    by_cluster: dict[str | None, list[Group]] = {}
    for urn, g in groups.items():
        by_cluster.setdefault(where.get(urn) if len(clusters) > 1 else next(iter(clusters), None), []).append(g)
    for curn, members in by_cluster.items():
        indent = "  "
        if curn is not None:
            c = clusters[curn]
            title = label(CLUSTERS[c.type] + " " + c.name)
            lines.append(f"  subgraph {node_id('cluster', curn)}[{title}]")
            indent = "    "
        lines += [f"{indent}{node_id('group', g.urn)}[{label(*group_lines(g, costs))}]" for g in members]
        if curn is not None:
            lines.append("  end")
    by_name = {g.name: g for g in groups.values()}
    placement = plan.get("placement") or {}
    for pod in placement.get("pods") or []:
        wid = node_id("pod", pod.get("urn", "") + pod["pod"])
        pending = pod["status"] == "pending"
        lines.append(f"  {wid}([{label(pod['pod'], pod['status'])}])" + (":::pending" if pending else ""))
        for name, p in (pod.get("nodeGroups") or {}).items():
            if name in by_name:
                edge = label(f"{p.get('placed')} placed")
                lines.append(f"  {wid} -->|{edge}| {node_id('group', by_name[name].urn)}")
    for task in placement.get("tasks") or []:
        wid = node_id("task", task.get("urn", "") + task["task"])
        text = label("task " + task["task"], task["status"])
        lines.append(f"  {wid}([{text}])" + (":::pending" if task["status"] == "pending" else ""))
        group = next((g for g in groups.values() if g.platform == "ecs" and g.name == task.get("capacityProvider")), None)
        if group is not None:
            edge = label(f"{task.get('perInstance')} per instance")
            lines.append(f"  {wid} -->|{edge}| {node_id('group', group.urn)}")
    return "\n".join(lines + [f"  {s}" for s in STYLES]) + "\n"


def changes(d, base: list[Resource], head: list[Resource]) -> str:
    """A diff's groups before and after: each group's two states linked by what happens to it
    (replaced, rolls, changed, same), added and removed groups marked, and the replaced or removed
    resources a replacement comes from linked to the group they drag along."""
    before, after = accelerated_groups(base), accelerated_groups(head)
    key = lambda urn: urn.split("::", 1)[1] if "::" in urn else urn  # noqa: E731  (stack-free, as diff matches)
    b = {key(u): g for u, g in before.items()}
    a = {key(u): g for u, g in after.items()}
    if not (a or b):
        return ""  # no accelerated group on either side: nothing to draw
    costs = {side: _costs(d.cost.get(side)) for side in ("before", "after")}
    drains = {key(x["urn"]): x["reason"] for x in d.drains}
    replaced = {key(x["urn"]) for x in d.replaced}
    lines = ["flowchart LR", "  subgraph before[before]"]
    lines += [f"    {node_id('b', u)}[{label(*group_lines(g, costs['before']))}]" + ("" if u in a else ":::removed") for u, g in b.items()]
    lines += ["  end", "  subgraph after[after]"]
    for u, g in a.items():
        mark = ":::added" if u not in b else ":::replaced" if u in replaced else ""
        lines.append(f"    {node_id('a', u)}[{label(*group_lines(g, costs['after']))}]{mark}")
    lines.append("  end")
    for u in (u for u in a if u in b):
        reason = drains.get(u, "")
        verb = "replaced" if u in replaced else "rolls" if "rolls" in reason else "changed" if _changed(b[u], a[u]) else "same"
        lines.append(f"  {node_id('b', u)} -->|{verb}| {node_id('a', u)}")
    causes: set[str] = set()
    for entry in d.affected:
        u = key(entry["urn"])
        if u not in a:
            continue
        for because in entry["because"]:
            prop, _, source = because.partition(" <- ")
            sid = node_id("cause", source)
            if sid not in causes:
                causes.add(sid)
                lines.append(f"  {sid}[{label(source)}]:::replaced")
            lines.append(f"  {sid} -.->|{label(prop)}| {node_id('a', u)}")
    return "\n".join(lines + [f"  {s}" for s in STYLES]) + "\n"


def _changed(before: Group, after: Group) -> bool:
    return before.as_dict() | {"urn": ""} != after.as_dict() | {"urn": ""}
