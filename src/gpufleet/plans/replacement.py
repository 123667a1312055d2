"""What an update does to a deployed resource, and what that drags along: the property changes
between deployed and new inputs, whether the provider replaces the resource (its replaceOnChanges,
or a field the provider cannot change in place: the curated ForceNew facts), and the walk down the
dependency graph from what is replaced or removed. `gpufleet diff` and the pack's update policy read
the same answers.

Resources are the plan view's typed resources (`plans.index.Resource`), keyed by their URN without
the stack (`key`), so plans of one stack previewed under two stack names still match.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping

from gpufleet.catalog import catalog
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.plans.index import Resource


@functools.cache
def _autonames() -> tuple[re.Pattern, ...]:
    """The providers' auto-names (curated autonaming): the logical name, a dash and random hex, new
    on every create: 7 digits from the bridged providers, 8 for Kubernetes objects."""
    facts = catalog.load().facts.autonaming
    return tuple(re.compile(rf"^(.+)-[0-9a-f]{{{n}}}$") for n in sorted({facts.random_length, facts.kubernetes_random_length}))


def key(urn: str) -> str:
    """A URN without its stack."""
    return urn.split("::", 1)[1] if urn.startswith("urn:pulumi:") and "::" in urn else urn


def flatten(value, path: str = "") -> dict[str, object]:
    """Leaf values by path (`a.b[0].c`); JSON text that holds an object or a list is read as JSON."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except ValueError:
            pass
    if isinstance(value, dict) and value:
        out = {}
        for k in sorted(value):
            out.update(flatten(value[k], f"{path}.{k}" if path else k))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{path}[{i}]"))
        return out
    return {path: value}


def noise(before, after) -> bool:
    """Differences two previews show that are not changes: a value unknown before that is known
    now (the earlier preview ran before the resource existed), and an auto-name's random suffix."""
    if before == UNKNOWN and after is not None:
        return True
    if isinstance(before, str) and isinstance(after, str):
        return any((a := p.match(before)) and (b := p.match(after)) and a.group(1) == b.group(1) for p in _autonames())
    return False


def _in_order(path: str) -> str:
    """A path's sort key that keeps list entries in their order ([2] before [10])."""
    return re.sub(r"\[(\d+)\]", lambda m: f"[{int(m[1]):010d}]", path)


def property_changes(before: Mapping, after: Mapping) -> list[dict]:
    a, b = flatten(dict(before)), flatten(dict(after))
    return [
        {"path": path, "before": a.get(path), "after": b.get(path)}
        for path in sorted(set(a) | set(b), key=_in_order)
        if a.get(path) != b.get(path) and not noise(a.get(path), b.get(path))
    ]


def matches(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((f"{prefix}.", f"{prefix}["))


def forces_new(resource_type: str, path: str) -> bool:
    """The provider cannot change this input of the type in place (curated ForceNew fields)."""
    facts = catalog.load().facts.replacement.get(resource_type)
    return facts is not None and any(matches(path, k) for k in facts.replaces)


def _forced_through(resource: Resource, prop: str) -> bool:
    """Does a new value of the input `prop` (read from a replaced resource) replace the resource? The
    input itself cannot change in place, or a field inside it that holds a value known only after
    apply (the replaced resource's output, such as an Auto Scaling group's ARN) cannot."""
    if forces_new(resource.type, prop):
        return True
    return any(v == UNKNOWN and forces_new(resource.type, path) for path, v in flatten(resource.props.get(prop), prop).items())


def replacement_reason(resource: Resource, changes: list[dict]) -> str | None:
    """Why the change creates a new resource, or None for an in-place update."""
    keys = resource.replace_on_changes
    hit = [c["path"] for c in changes if any(matches(c["path"], k) for k in keys)]
    if hit:
        return f"replaceOnChanges {', '.join(keys)}: {', '.join(hit)} changed"
    hit = [c["path"] for c in changes if forces_new(resource.type, c["path"])]
    if hit:
        return f"{', '.join(hit)} cannot change in place"
    return None


def users(plan: Mapping[str, Resource], target: str) -> list[tuple[str, str]]:
    """(URN key, input) of every resource of the plan whose input depends on `target` (a URN key)."""
    return [(key(r.urn), prop) for r in plan.values() for prop, urns in r.deps.items() if target in {key(u) for u in urns}]


def direct(old: Mapping[str, Resource], new: Mapping[str, Resource]) -> dict[str, str]:
    """URN key -> "replaced" or "removed", by each resource's own change."""
    going = {u: "removed" for u in old if u not in new}
    for u in (u for u in new if u in old):
        changes = property_changes(old[u].props, new[u].props)
        if changes and replacement_reason(new[u], changes):
            going[u] = "replaced"
    return going


def cascade(going: dict[str, str], old: Mapping[str, Resource], new: Mapping[str, Resource], follow: bool = True) -> dict[str, dict]:
    """The resources that read what `going` replaces or removes: URN key -> {"effect": "replaced" |
    "updated", "because": ["prop <- Kind name (how)", ...], "forcedBy": the line that replaces it}.
    A replaced resource's outputs are unknown until it exists, so its readers get new values:
    replaced where that input cannot change in place (added to `going`, and followed down the
    graph), updated otherwise. With `follow=False` (the engine already decided) nothing is added:
    the walk only says why."""
    queue = list(going)
    affected: dict[str, dict] = {}
    while queue:
        target = queue.pop(0)
        how = going[target]
        source = new.get(target) or old[target]
        for urn, prop in users(new if how == "replaced" else old, target):
            if urn not in new or urn in going and urn not in affected and follow:
                continue  # goes too, or is replaced by its own change
            entry = affected.setdefault(urn, {"effect": "updated", "because": []})
            entry["because"].append(f"{prop} <- {source.type.rsplit(':', 1)[-1]} {source.name} ({how})")
            if not follow:
                entry["effect"] = "replaced" if urn in going else "updated"
            elif entry["effect"] == "updated" and _forced_through(new[urn], prop):
                entry["effect"], entry["forcedBy"] = "replaced", entry["because"][-1]
                going[urn] = "replaced"
                queue.append(urn)
    return affected
