"""Human output of a preview: the resource tree, then the accelerators the stack provisions."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.tree import Tree


def _label(resource: dict) -> str:
    kind = "[bold]" if not resource["custom"] else ""
    end = "[/bold]" if kind else ""
    return f"{kind}{resource['type']}{end}  {resource['name']}"


def render_preview(plan: dict, console: Console) -> None:
    resources = plan["resources"]
    nodes: dict[str | None, Tree] = {}
    root = Tree(f"[bold]{plan['project']}/{plan['stack']}[/bold]  ({len(resources)} resources, preview: all to create)")
    nodes[None] = root
    for r in resources:
        parent = nodes.get(r["parent"], root)
        nodes[r["urn"]] = parent.add(_label(r))
    console.print(root)
    render_summary(plan["summary"], console)
    render_findings(plan["policy"], console)


def render_findings(policy: dict, console: Console) -> None:
    """Findings grouped by resource: URN and type, then policy, level, message and the fix."""
    if policy.get("pack") is None:
        console.print("Policy pack: skipped (--no-policy)")
        return
    violations = policy["violations"]
    mandatory = sum(1 for v in violations if v["level"] == "mandatory")
    head = f"Policy pack {policy['pack']} {policy.get('version', '')}".rstrip()
    for r in policy.get("remediations", []):
        console.print(f"{head}: {r['policy']} remediated {r['urn']}", highlight=False, soft_wrap=True)
    if not violations:
        console.print(f"{head}: no violations")
        return
    console.print(f"{head}: {mandatory} mandatory, {len(violations) - mandatory} advisory", style="bold")
    by_urn: dict[str, list[dict]] = {}
    for v in violations:
        by_urn.setdefault(v["urn"], []).append(v)
    for urn, found in by_urn.items():
        kind = found[0].get("type", "")
        # soft_wrap: a URN is copied into other tools, so it is never broken across lines.
        console.print(f"\n[bold]{urn or '(stack)'}[/bold]" + (f"  {kind}" if kind else ""), highlight=False, soft_wrap=True)
        for v in found:
            colour = "red" if v["level"] == "mandatory" else "yellow"
            console.print(f"  [{colour}]{v['level']}[/{colour}]  {v['policy']}", highlight=False)
            for line in v["message"].splitlines():
                console.print(f"      {line}", highlight=False, markup=False, soft_wrap=True)
            if v.get("fix"):
                console.print(f"      fix: {v['fix']}", highlight=False, markup=False, soft_wrap=True)


def render_summary(summary: dict, console: Console) -> None:
    groups = summary.get("groups") or []
    if groups:
        table = Table(title="Accelerators", title_justify="left")
        for col in ("group", "instance type", "per instance", "instances\nmin/des/max", "GPUs\nmin/des/max"):
            table.add_column(col)
        for g in groups:
            inst, acc = g["instances"], g["accelerators"]
            table.add_row(
                f"{g['group']}\n{g['platform']}, {g['purchase']}, {g['amiVariant']}",
                g["instanceType"],
                f"{g['perInstance']} x {g['manufacturer']} {g['model']}\n{g['memoryMiBPerAccelerator']} MiB each",
                f"{inst['min']}/{inst['desired']}/{inst['max']}",
                f"{acc['min']}/{acc['desired']}/{acc['max']}",
            )
        for t in summary.get("totals") or []:
            table.add_row("total", "", t["model"], "", f"{t['min']}/{t['desired']}/{t['max']}", style="bold")
        console.print(table)
    workloads = summary.get("workloads") or []
    if workloads:
        table = Table(title="Workloads", title_justify="left")
        for col in ("workload", "capacity provider", "GPUs/task", "tasks/instance\n(by GPU)", "service\ntasks"):
            table.add_column(col)
        for w in workloads:
            table.add_row(
                w["name"],
                w["capacityProvider"],
                str(w["gpusPerTask"]),
                str(w.get("tasksPerInstanceByGpu", "-")),
                str(w.get("serviceDesiredCount", "-")),
            )
        console.print(table)
