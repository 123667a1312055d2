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
