"""The reviewer's diff as text for a terminal or Markdown for a pull-request comment (with the Mermaid
picture of the groups before and after)."""

from __future__ import annotations

from gpufleet.catalog.wording import counted
from gpufleet.cli.diff import COUNTS, PlanDiff, not_running
from gpufleet.plans.groups import CARRIED


def _where(finding: dict) -> str:
    """What a finding is on: a resource's name, or the stack for a stack policy's finding on no resource."""
    return (finding.get("urn") or "the stack").rsplit("::", 1)[-1]


def _dollars(value: float | None, per: str) -> str:
    if value is None:
        return "unknown"
    sign = "+" if value > 0 else "-" if value < 0 else "±"
    return f"{sign}${abs(value):,.2f}/{per}"


def _launched(change: dict | None) -> str:
    """What the nodes Karpenter launches for the Pending pods add or save, where they change."""
    if change is None:
        return ""
    if change["hourly"] is None:
        return "; the nodes Karpenter launches: cost unknown (a type without a price)"
    return f"; the nodes Karpenter launches: {_dollars(change['hourly'], 'h')} ({_dollars(change['monthly'], 'month')})"


def _cost_lines(cost: dict, h, bullet: str) -> list[str]:
    """The cost a change adds or saves: each group whose cost changes, then the fleet."""
    if not cost or not cost["groups"]:
        return []

    def at(sides: dict) -> str:
        return ", ".join(
            f"{_dollars(sides[s]['hourly'], 'h')} at {s} ({_dollars(sides[s]['monthly'], 'month')})" for s in ("max", "desired")
        )

    lines = ["", h(3, "Cost"), ""]
    for g in cost["groups"]:
        what = "; ".join(g["changes"]) or g["status"]
        title = f"{bullet}{g['platform']} {g['group']} ({g['instanceType']}) {what}"
        if g.get("unknown") and all(g[s]["hourly"] is None for s in ("max", "desired")):
            lines.append(f"{title}: cost unknown ({g['unknown']})")
        else:
            unknown = f" (price unknown: {g['unknown']})" if g.get("unknown") else ""
            lines.append(f"{title}: {at(g)}{unknown}{_launched(g.get('launched'))}")
    partial = "" if cost["complete"] else " (groups of unknown price left out)"
    lines.append(f"{bullet}fleet: {at(cost['total'])}{partial}; {cost['prices']}")
    return lines


def render(d: PlanDiff, base_name: str, head_name: str, markdown: bool) -> str:
    def h(level: int, text: str) -> str:
        if markdown:
            return f"{'#' * level} {text}"
        return f"{text}\n{('=' if level <= 2 else '-') * len(text)}"

    bullet = "- " if markdown else "  - "
    code = (lambda t: f"`{t}`") if markdown else (lambda t: t)
    lines = [h(2, f"gpufleet diff: {base_name} -> {head_name}"), ""]
    if not d.changed:
        return "\n".join([*lines, "No changes."]) + "\n"
    lines += [h(3, "Accelerators"), ""]
    if not d.groups and not any(d.totals[side][k] for side in ("before", "after") for k, _ in COUNTS):
        lines.append("No accelerated groups on either side.")
    elif markdown:
        lines += ["| | before | after |", "|---|---|---|"]
        lines += [f"| {words} (desired) | {d.totals['before'][k]} | {d.totals['after'][k]} |" for k, words in COUNTS]
    else:
        lines += [f"{bullet}{words} (desired): {d.totals['before'][k]} -> {d.totals['after'][k]}" for k, words in COUNTS]
    lines.append("")
    for g in d.groups:
        side = g["after"] or g["before"]
        title = f"{g['platform']} {g['group']} ({side['instanceType']})"
        if g["status"] != "changed":
            t = side["total"]
            carried = [counted(side["instances"]["desired"], "instance")] + [counted(t[k], noun) for k, noun in CARRIED]
            lines.append(f"{bullet}{title}: {g['status']}, " + ", ".join(carried))
        else:
            lines.append(f"{bullet}{title}: " + "; ".join(g["notes"]))
    lines += _cost_lines(d.cost, h, bullet)
    if markdown and d.picture:
        lines += ["", "```mermaid", d.picture.rstrip("\n"), "```"]

    def placement(e: dict) -> str:
        why = f": {e['why']}" if e["why"] and not_running(e["after"]) else ""
        return f"{e['name']}: {e['before']} -> {e['after']}{why}"

    # Each section is shown only when it has entries, in the order a reviewer weighs them.
    sections = (
        ("Replaces instances (running jobs are drained)", [f"{x['platform']} {x['group']}: {x['reason']}" for x in d.drains]),
        (
            "Tolerations changed",
            [f"{code(t['type'])} {t['name']}: {', '.join(code(c['path']) for c in t['properties'])}" for t in d.tolerations],
        ),
        ("Placement", [placement(e) for e in d.placement_worse + d.placement_better]),
        (
            "Replaced or updated because what they read is replaced or removed",
            [f"{a['effect']} {code(a['type'])} {a['name']}: {'; '.join(a['because'])}" for a in d.affected],
        ),
        (
            "Deletes the cloud will refuse",
            [f"{code(r['type'])} {r['name']} ({r['how']}): {r['reason']}. Fix: {r['fix']}" for r in d.refused],
        ),
        (
            "Policy",
            [f"new ({f['level']}) {code(f['policy'])} on {_where(f)}: {f['message']}" for f in d.new_findings]
            + [f"fixed {code(f['policy'])} on {_where(f)}" for f in d.fixed_findings],
        ),
    )
    for title, rows in sections:
        if rows:
            lines += ["", h(3, title), "", *(f"{bullet}{row}" for row in rows)]
    lines += ["", h(3, "Resources"), ""]
    for verb, entries in (("added", d.added), ("removed", d.removed), ("replaced", d.replaced), ("updated", d.updated)):
        for e in entries:
            lines.append(f"{bullet}{verb} {code(e['type'])} {e['name']}" + (f" ({e['reason']})" if e.get("reason") else ""))
            for line in e.get("summary", []):
                path, _, rest = line.partition(": ")
                lines.append(f"{'  ' if markdown else '      '}{bullet if markdown else ''}{code(path)}: {rest}")
    return "\n".join(lines) + "\n"
