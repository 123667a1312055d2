"""`gpufleet diff BASE HEAD`: what changes between two plans, in a reviewer's words.

Resources are matched by URN: added, removed, replaced or updated, with property-level changes
(JSON-string properties such as containerDefinitions are compared inside). Above them, the
accelerated groups (fleet_view) before and after: GPUs, Neuron chips and cores, EFA interfaces,
AMI, purchase option, taints; which changes replace instances and so drain running jobs; and the
policy findings new in HEAD or fixed since BASE (both plans judged by the same pack).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

from gpufleet.catalog import catalog, tokens
from gpufleet.cli import diagram
from gpufleet.cli.property_changes import summarize
from gpufleet.plans import cost as plan_cost
from gpufleet.plans import placement as plan_placement
from gpufleet.plans import replacement
from gpufleet.plans.groups import Group, accelerated_groups
from gpufleet.plans.index import Resource, from_plan, mapping
from gpufleet.rules import cost as cost_rules
from gpufleet.simulate import k8s_scheduler

COUNTS = (("gpus", "GPUs"), ("neuronChips", "Neuron chips"), ("neuronCores", "NeuronCores"), ("efaInterfaces", "EFA interfaces"))


def _root(path: str) -> str:
    """The top-level property of a path (`a.b[0]` -> `a`), as diffReasons name them."""
    return re.split(r"[.\[]", path, maxsplit=1)[0]


@dataclass
class PlanDiff:
    added: list[dict] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)
    replaced: list[dict] = field(default_factory=list)
    updated: list[dict] = field(default_factory=list)
    groups: list[dict] = field(default_factory=list)
    totals: dict = field(default_factory=dict)
    drains: list[dict] = field(default_factory=list)
    tolerations: list[dict] = field(default_factory=list)
    new_findings: list[dict] = field(default_factory=list)
    fixed_findings: list[dict] = field(default_factory=list)
    # Pods and tasks whose placement the change makes worse (newly Pending, or only after scale-up) or better.
    placement_worse: list[dict] = field(default_factory=list)
    placement_better: list[dict] = field(default_factory=list)
    # Resources whose inputs come from a replaced or removed resource, and deletes the cloud refuses.
    affected: list[dict] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    # The groups before and after as a Mermaid flowchart (Markdown output only).
    picture: str = ""
    # What the change adds or saves: per group and for the fleet, per hour and month, at desired and max.
    cost: dict = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.replaced or self.updated)

    def as_json(self) -> dict:
        return {
            "changed": self.changed,
            "accelerators": {"groups": self.groups, "totals": self.totals},
            "drains": self.drains,
            "tolerations": self.tolerations,
            "resources": {"added": self.added, "removed": self.removed, "replaced": self.replaced, "updated": self.updated},
            "policy": {"new": self.new_findings, "fixed": self.fixed_findings},
            "placement": {"worse": self.placement_worse, "better": self.placement_better},
            "affected": self.affected,
            "refusedDeletes": self.refused,
            "cost": self.cost,
        }


_key = replacement.key


def _brief(r: Resource) -> dict:
    return {"urn": r.urn, "type": r.type, "name": r.name}


# The engine's step ops that replace a resource (create first, or delete first).
REPLACE_OPS = {"replace", "create-replacement", "delete-replaced"}


def diff_plans(
    base: list[dict], head: list[dict], base_findings: list[dict], head_findings: list[dict], verdicts: dict[str, dict] | None = None
) -> PlanDiff:
    """Two plans compared; or, with `verdicts` (one `pulumi preview --json` of a deployed stack:
    BASE its old states, HEAD its new ones), the engine's own verdict per resource, explained."""
    result = PlanDiff()
    base_plan, head_plan = from_plan({"resources": base}), from_plan({"resources": head})
    # The stack resource has no inputs and carries the stack's name: not a change.
    old = {_key(r.urn): r for r in base_plan if r.type != tokens.STACK}
    new = {_key(r.urn): r for r in head_plan if r.type != tokens.STACK}
    result.added = [_brief(new[u]) for u in new if u not in old]
    result.removed = [_brief(old[u]) for u in old if u not in new]
    engine = {_key(u): v for u, v in (verdicts or {}).items()}
    for urn in (u for u in new if u in old):
        changes = replacement.property_changes(old[urn].props, new[urn].props)
        verdict = engine.get(urn)
        if verdict is not None:
            ops = set(verdict["ops"])
            if not ops & (REPLACE_OPS | {"update"}):
                continue  # the engine says same (or read): whatever the inputs show is not a change
            roots = {*verdict["diffReasons"], *(_root(p) for p in verdict["detailedDiff"])}
            changes = [c for c in changes if _root(c["path"]) in roots] or [
                {"path": p, "before": None, "after": None} for p in verdict["detailedDiff"] or verdict["diffReasons"]
            ]
        elif not changes:
            continue
        entry = {
            **_brief(new[urn]),
            "properties": changes,
            "summary": summarize(changes, old[urn].props, new[urn].props),
        }
        reason: str | None
        if verdict is not None:
            reason = (
                f"the engine: replaceReasons {', '.join(verdict['replaceReasons'])}"
                if verdict["replaceReasons"]
                else "the engine replaces it"
            )
            reason = reason if set(verdict["ops"]) & REPLACE_OPS else None
        else:
            reason = replacement.replacement_reason(new[urn], changes)
        if reason:
            result.replaced.append({**entry, "reason": reason, "deleteFirst": new[urn].delete_before_replace})
        else:
            result.updated.append(entry)
    _cascade(result, old, new, follow=verdicts is None)
    # Workloads and device plugins whose tolerations change schedule onto other (tainted) nodes.
    for entry in result.replaced + result.updated:
        paths = [c for c in entry["properties"] if ".tolerations" in c["path"] or c["path"].startswith("tolerations")]
        if paths:
            result.tolerations.append({k: entry[k] for k in ("urn", "type", "name")} | {"properties": paths})
    _groups(
        result,
        {_key(u): g for u, g in accelerated_groups(base_plan).items()},
        {_key(u): g for u, g in accelerated_groups(head_plan).items()},
    )
    _karpenter_drift(result, new)
    # Each side's placement worked out once: its verdicts and the nodes Karpenter launches (their cost).
    base_placed, head_placed = plan_placement.placement(base_plan).as_dict(), plan_placement.placement(head_plan).as_dict()
    result.cost = cost_change(base_plan, head_plan, base_placed, head_placed)
    _placement(result, base_placed, head_placed)
    result.picture = diagram.changes(result, base_plan, head_plan)
    key = lambda f: (f["policy"], _key(f.get("urn") or ""), f["message"])  # noqa: E731
    before, after = {key(f) for f in base_findings}, {key(f) for f in head_findings}
    result.new_findings = [f for f in head_findings if key(f) not in before]
    result.fixed_findings = [f for f in base_findings if key(f) not in after]
    return result


def _cascade(result: PlanDiff, old: dict[str, Resource], new: dict[str, Resource], follow: bool) -> None:
    """What a replacement or removal does to the resources that read it. A replaced resource's
    outputs are unknown until it exists, so every resource with an input from it gets a new value:
    replaced where that input cannot change in place (and so on down the graph, as `pulumi preview`
    shows it against a real stack), updated in place otherwise. The plan's inputs cannot show this
    (the mock's ids never change), the dependency graph does. With the engine's verdict
    (`follow=False`) the verdict stands; the walk only says why."""
    going = {_key(e["urn"]): "replaced" for e in result.replaced} | {_key(e["urn"]): "removed" for e in result.removed}
    affected = {u: {**_brief(new[u]), **e} for u, e in replacement.cascade(going, old, new, follow).items()}
    changed = {_key(e["urn"]) for e in result.updated}
    if not follow:
        # The engine's verdict stands: only what it changes is explained.
        result.affected = [e for u, e in affected.items() if u in changed or u in going]
        _refused_deletes(result, old, new, going)
        return
    for urn, entry in affected.items():
        prop, _, source = entry.get("forcedBy", "").partition(" <- ")
        why = f"{prop} comes from {source}, and cannot change in place"
        if entry["effect"] == "replaced":
            own = [c for u in result.updated if _key(u["urn"]) == urn for c in u["properties"]]
            result.updated = [u for u in result.updated if _key(u["urn"]) != urn]
            result.replaced.append(
                {
                    **_brief(new[urn]),
                    "properties": own,
                    "summary": summarize(own, old[urn].props, new[urn].props),
                    "reason": why,
                    "deleteFirst": new[urn].delete_before_replace,
                }
            )
        elif urn not in changed:
            result.updated.append({**_brief(new[urn]), "properties": [], "summary": []})
        result.affected.append({k: v for k, v in entry.items() if k != "forcedBy"})
    _refused_deletes(result, old, new, going)


def _refused_deletes(result: PlanDiff, old: dict[str, Resource], new: dict[str, Resource], going: dict[str, str]) -> None:
    """A subnet or security group that goes while a kept Auto Scaling group's running instances
    still use it (through its subnet list or its launch template): the delete is refused until
    those instances are replaced, which nothing in the update does."""
    facts = catalog.load().facts.refused_deletes
    for target, how in going.items():
        source = old.get(target) or new[target]
        fact = facts.get(source.type)
        if not fact:
            continue
        holders, seen, queue = [], {target}, [target]
        while queue:
            for urn, _ in replacement.users(old, queue.pop(0)):
                if urn in seen or urn not in new or going.get(urn) == "replaced":
                    continue  # a replaced holder's old instances go with it, before this delete
                seen.add(urn)
                if new[urn].type in fact.held_by:
                    holders.append(new[urn].name)
                else:
                    queue.append(urn)
        if holders:
            result.refused.append(
                {
                    **_brief(source),
                    "how": how,
                    "heldBy": sorted(holders),
                    "reason": f"{fact.rule} ({fact.source}); the running instances of {', '.join(sorted(holders))} "
                    "keep using it until they are replaced",
                    "fix": "move those instances out first (an instance refresh of the group once its subnets no longer include it), then remove it",
                }
            )


_NOT_RUNNING = {"after-scale-up": 1, "pending": 2}


def not_running(status: str) -> int:
    """How far a placement is from running: 0 now (scheduled, daemon, placed), 1 after a scale-up, 2 never."""
    return _NOT_RUNNING.get(status, 0)


def _placements(found: dict) -> dict[str, dict]:
    """Pod templates and task definitions by name, with their placement verdict."""

    def why(p: dict) -> str:
        grown = k8s_scheduler.new_nodes(p.get("scaleUp") or {})
        return p.get("message") or (f"needs {grown} (a cluster autoscaler or a larger desiredSize)" if grown else "")

    out = {f"pod {p['pod']}": {"status": p["status"], "why": why(p)} for p in found["pods"]}
    out.update({f"task {t['task']}": {"status": t["status"], "why": t.get("reason", "")} for t in found["tasks"]})
    return out


def _placement(result: PlanDiff, base: dict, head: dict) -> None:
    """A change that leaves a pod or task Pending (or placeable only after scale-up) is named, with
    the scheduler's reason; one that places what was Pending too."""
    before, after = _placements(base), _placements(head)
    for name, now in after.items():
        was = before.get(name, {"status": "scheduled" if name.startswith("pod ") else "placed", "why": ""})
        entry = {"name": name, "before": was["status"], "after": now["status"], "why": now["why"] or was["why"]}
        rank_now, rank_was = not_running(now["status"]), not_running(was["status"])
        if rank_now > rank_was:
            result.placement_worse.append(entry)
        elif rank_now < rank_was:
            result.placement_better.append(entry)


def _groups(result: PlanDiff, base: dict[str, Group], head: dict[str, Group]) -> None:
    changed_urns = {_key(r["urn"]): r for r in result.replaced + result.updated}
    replaced = {_key(r["urn"]): r for r in result.replaced}
    for urn in list(head) + [u for u in base if u not in head]:
        before, after = base.get(urn), head.get(urn)
        notes = _group_notes(before, after)
        if after is not None and urn in replaced:
            first = (
                "; the old one is deleted first, so the group has no capacity until the new one is up"
                if replaced[urn]["deleteFirst"]
                else ""
            )
            _drain(result, after, f"the {_kind(after)} is replaced ({replaced[urn]['reason']}){first}")
        elif before is not None and after is None:
            _drain(result, before, f"the {_kind(before)} is removed")
        elif after is not None and after.template_urn and _key(after.template_urn) in changed_urns:
            if after.platform == "eks":
                _drain(result, after, "its launch template changed: the node group rolls its nodes to the new version")
            else:
                notes.append("launch template changed: new instances use it; running instances are not replaced by this change")
        if urn in changed_urns and urn not in replaced and after is not None and after.platform == "eks":
            rolls = catalog.load().facts.replacement[tokens.EKS_NODE_GROUP].rolls
            if any(replacement.matches(c["path"], k) for c in changed_urns[urn]["properties"] for k in rolls):
                _drain(result, after, "its AMI release or Kubernetes version changed: the node group rolls its nodes")
        if notes or before is None or after is None:
            group = cast(Group, after or before)  # the urn is head's or base's
            result.groups.append(
                {
                    "group": group.name,
                    "platform": group.platform,
                    "urn": urn,
                    "status": "added" if before is None else "removed" if after is None else "changed",
                    "before": before.as_dict() if before else None,
                    "after": after.as_dict() if after else None,
                    "notes": notes,
                }
            )
    result.totals = {
        side: {k: sum(g.totals()[k] for g in groups.values()) for k, _ in COUNTS} for side, groups in (("before", base), ("after", head))
    }


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r + ".") or path.startswith(r + "[") for r in roots)


def _karpenter_drift(result: PlanDiff, new: dict[str, Resource]) -> None:
    """A change that drifts a Karpenter pool's nodes: Karpenter replaces them, within the pool's
    disruption budgets, as a node group rolls for a new launch template (curated karpenter.drift)."""
    drift = catalog.load().facts.karpenter.drift
    pools = [r for r in new.values() if r.type == tokens.KARPENTER_NODE_POOL]

    def name_of(r: Resource) -> str:
        name = mapping(r.props.get("metadata")).get("name")
        return name if isinstance(name, str) else r.name

    for entry in result.replaced + result.updated:
        paths = [c["path"] for c in entry["properties"]]
        if entry["type"] == tokens.KARPENTER_NODE_POOL:
            static = [p for p in paths if _under(p, drift.node_pool) and not _under(p, drift.resolved)]
            resolved = [p for p in paths if _under(p, drift.resolved)]
            if static:
                why = f"its node template changed ({', '.join(static)}): Karpenter replaces every node of the pool, within its disruption budgets"
            elif resolved:
                why = "its requirements changed: Karpenter replaces the nodes they no longer admit, within the pool's disruption budgets"
            else:
                continue
            result.drains.append({"group": name_of(new[_key(entry["urn"])]), "platform": "karpenter", "urn": entry["urn"], "reason": why})
        elif entry["type"] == tokens.KARPENTER_EC2_NODE_CLASS:
            changed = [p for p in paths if _under(p, drift.node_class)]
            class_name = name_of(new[_key(entry["urn"])])
            for pool in pools:
                ref = mapping(mapping(mapping(pool.props.get("spec")).get("template")).get("spec")).get("nodeClassRef")
                if changed and mapping(ref).get("name") == class_name:
                    why = f"its EC2NodeClass {class_name} changed ({', '.join(changed)}): Karpenter replaces every node of the pool, within its disruption budgets"
                    result.drains.append({"group": name_of(pool), "platform": "karpenter", "urn": pool.urn, "reason": why})


def _kind(group: Group) -> str:
    return {
        "eks": "node group",
        "ecs": "capacity provider's group",
        "ack": "ACK node pool",
        "gke": "GKE node pool",
        "aks": "AKS node pool",
        "karpenter": "Karpenter NodePool",
        "ec2": "EC2 instance or Auto Scaling group",
    }[group.platform]


def _drain(result: PlanDiff, group: Group, why: str) -> None:
    result.drains.append({"group": group.name, "platform": group.platform, "urn": group.urn, "reason": why})


def _group_notes(before: Group | None, after: Group | None) -> list[str]:
    if before is None or after is None:
        return []
    notes = []
    if before.instance_type != after.instance_type:
        notes.append(f"instance type {before.instance_type} -> {after.instance_type}")
    for size in ("min", "desired", "max"):
        if before.sizes.get(size) != after.sizes.get(size):
            notes.append(f"{size} instances {before.sizes.get(size)} -> {after.sizes.get(size)}")
    b, a = before.totals(), after.totals()
    for key, words in COUNTS:
        if b[key] != a[key]:
            notes.append(f"{words} (desired) {b[key]} -> {a[key]}")
    if before.efa_interfaces != after.efa_interfaces:
        notes.append(f"EFA interfaces per instance {before.efa_interfaces} -> {after.efa_interfaces}")
    what = {
        "eks": "AMI type",
        "ecs": "AMI",
        "ack": "sharing mode",
        "gke": "GPU driver and sharing",
        "aks": "GPU driver and MIG",
        "karpenter": "AMI",
        "ec2": "AMI",
    }[after.platform]
    if before.ami != after.ami:
        notes.append(f"{what} {before.ami} -> {after.ami}")
    if before.purchase != after.purchase:
        notes.append(f"purchase {before.purchase} -> {after.purchase}")
    gone, added = sorted(set(before.taints) - set(after.taints)), sorted(set(after.taints) - set(before.taints))
    if gone:
        notes.append(f"taints removed: {', '.join(gone)}")
    if added:
        notes.append(f"taints added: {', '.join(added)}")
    return notes


def _delta(before: float | None, after: float | None) -> float | None:
    return round(after - before, 4) if before is not None and after is not None else None


def _cost_sides(before: dict | None, after: dict | None) -> dict:
    """Per hour and per month at desired and max: before, after and the change (None: unknown)."""
    out = {}
    for size in ("desired", "max"):
        b = before["hourly"][size] if before else 0.0
        a = after["hourly"][size] if after else 0.0
        change = _delta(b, a)
        out[size] = {
            "before": b,
            "after": a,
            "hourly": change,
            "monthly": round(change * cost_rules.HOURS_PER_MONTH, 2) if change is not None else None,
        }
    return out


def _launches(group: dict | None) -> str:
    """The nodes a Karpenter pool launches, by type ("3 x g5.xlarge"), or "none"."""
    found = ((group or {}).get("needed") or {}).get("byType") or []
    return ", ".join(f"{n['nodes']} x {n['instanceType']}" for n in found) or "none"


def _launched_hourly(group: dict | None) -> float | None:
    """What the nodes a Karpenter pool launches cost an hour (0.0: it launches none; None: unknown)."""
    needed = (group or {}).get("needed") or {}
    return needed.get("hourly") if needed.get("byType") else 0.0


def _launched_change(before: dict | None, after: dict | None) -> dict | None:
    """Where the nodes Karpenter launches for the Pending pods change (their types or count): what
    they were and are, and what they cost per hour and month, before, after and the change."""
    was, now = _launches(before), _launches(after)
    if was == now:
        return None
    b, a = _launched_hourly(before), _launched_hourly(after)
    change = _delta(b, a)
    monthly = round(change * cost_rules.HOURS_PER_MONTH, 2) if change is not None else None
    return {"was": was, "now": now, "before": b, "after": a, "hourly": change, "monthly": monthly}


def cost_change(base: list[Resource], head: list[Resource], base_placed: dict | None = None, head_placed: dict | None = None) -> dict:
    """What the change adds or saves, per group whose cost changes and for the whole fleet, priced
    from the same snapshot on both sides; with each side's placement, the nodes Karpenter launches
    for its Pending pods too (`launched`: per hour and month, before, after and the change)."""
    before, after = plan_cost.plan_cost(base, base_placed), plan_cost.plan_cost(head, head_placed)
    old = {_key(g["urn"]): g for g in before["groups"]}
    new = {_key(g["urn"]): g for g in after["groups"]}
    groups = []
    for urn in list(new) + [u for u in old if u not in new]:
        b, a = old.get(urn), new.get(urn)
        sides = _cost_sides(b, a)
        g = cast(dict, a or b)  # the urn is new's or old's
        what = []
        if b and a:
            if b["instanceType"] != a["instanceType"]:
                what.append(f"instance type {b['instanceType']} -> {a['instanceType']}")
            what += [
                f"{size}Size {b['instances'][size]} -> {a['instances'][size]}"
                for size in ("min", "desired", "max")
                if b["instances"][size] != a["instances"][size]
            ]
            if b["purchase"] != a["purchase"]:
                what.append(f"purchase {b['purchase']} -> {a['purchase']}")
        launched = _launched_change(b, a)
        if launched is not None:
            what.append(f"launches {launched['was']} -> {launched['now']}")
        if b and a and not what and all(v["before"] == v["after"] for v in sides.values()):
            continue  # the same group at the same price (a change of unknown price is still said)
        unknown = [x["basis"] for x in (b, a) if x is not None and x["pricePerHour"] is None]
        groups.append(
            {
                "group": g["group"],
                "platform": g["platform"],
                "urn": g["urn"],
                "instanceType": g["instanceType"],
                "status": "added" if b is None else "removed" if a is None else "changed",
                "changes": what,
                **sides,
                **({"launched": launched} if launched is not None else {}),
                **({"unknown": unknown[0]} if unknown else {}),
            }
        )
    return {
        "prices": after["prices"]["stated"],
        "before": before,
        "after": after,
        "groups": groups,
        "total": _cost_sides(before["total"], after["total"]),
        "complete": before["complete"] and after["complete"],
    }
