"""Human output of a preview: the resource tree, then the accelerators the stack provisions."""

from __future__ import annotations

import contextlib
import gc

from rich.console import Console

from gpufleet.catalog.wording import counted
from gpufleet.cli.text_layout import TextTable, TextTree
from gpufleet.rules import fargate as fargate_rules


@contextlib.contextmanager
def _no_collection():
    """The report's objects are short-lived and make no cycles (reference counting frees them),
    while the collector's full passes would walk the whole plan: a third of a second of the largest
    ECS stack's report went to them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def render_preview(plan: dict, console: Console) -> None:
    with _no_collection():
        _render_preview(plan, console)


def _render_preview(plan: dict, console: Console) -> None:
    resources = plan["resources"]
    root = TextTree(f"{plan['project']}/{plan['stack']}  ({len(resources)} resources, preview: all to create)", bold=True)
    nodes: dict[str | None, TextTree] = {None: root}
    for r in resources:
        parent = nodes.get(r["parent"], root)
        # Components in bold: the groups a reader scans for.
        nodes[r["urn"]] = parent.add(f"{r['type']}  {r['name']}", bold=not r["custom"])
    root.print(console)
    render_summary(plan["summary"], console, plan.get("cost"))
    render_placement(plan.get("placement") or {}, console)
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
        by_urn.setdefault(v.get("urn") or "", []).append(v)
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


def _per_instance(g: dict) -> str:
    if g["kind"] == "neuron":
        return f"{g['perInstance']} x {g['manufacturer']} {g['model']}\n{g['neuronCoresPerChip']} NeuronCores, {g['memoryMiBPerAccelerator']} MiB each"
    if g.get("gpuFraction"):
        return f"{g['gpuFraction']:g} of an {g.get('manufacturer')} {g.get('model')}\n{g['memoryMiBPerAccelerator']} MiB"
    return f"{g['perInstance']} x {g.get('manufacturer')} {g.get('model')}\n{g['memoryMiBPerAccelerator']} MiB each" + _gpu_resources(g)


def _gpu_resources(g: dict) -> str:
    """A GKE pool's MIG slices or shares: what its nvidia.com/gpu counts."""
    if "gpuResourcesPerInstance" not in g or g["gpuResourcesPerInstance"] == g["perInstance"]:
        return ""
    unit = f"{g['partitionSize']} slices" if g.get("partitionSize") else "shares"
    if g.get("sharing"):
        unit += f" ({g['sharing']['strategy']}, {g['sharing']['maxSharedClientsPerGpu']} per GPU)"
    return f"\n= {g['gpuResourcesPerInstance']} {unit}"


def _sizes(counts: dict | None) -> str:
    # G6f slices count as fractions of a GPU: 0.25, not 0.250000.
    show = lambda n: "?" if n is None else f"{n:g}" if isinstance(n, float) else str(n)  # noqa: E731
    return f"{show(counts['min'])}/{show(counts['desired'])}/{show(counts['max'])}" if counts else "-"


def _software(g: dict) -> str:
    """What runs the accelerators: the AMI (ECS variant, EKS AMI type), else who installs the
    GPU driver (the cloud, or no one: the GPU Operator brings its own)."""
    if g.get("provisioner"):  # a NodePool: Karpenter (and its AMI alias) or EKS Auto Mode
        return ", ".join(x for x in (g["provisioner"], g.get("amiAlias")) if x)
    if g.get("amiVariant") or g.get("amiType"):
        return g.get("amiVariant") or g["amiType"]
    by = g["driverInstalledBy"]
    return "no cloud driver" if by == "none" else f"driver: {by.upper()}"


def _money(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:,.0f}" if value >= 1000 else f"{value:,.2f}"


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${_money(value)}"


def _cost_sizes(amounts: dict | None) -> str:
    return "/".join(_money(amounts[k]) for k in ("min", "desired", "max")) if amounts else "-"


def _cost_cells(c: dict | None) -> list[str]:
    """A group's cost column: $/h at min/desired/max (one instance's price and one accelerator-hour's
    follow the table, per group)."""
    if c is None:
        return ["-"]
    if c["pricePerHour"] is None:
        return [f"unknown ({c['purchase']})"]
    return [_cost_sizes(c["hourly"])]


def _matching(g: dict, priced: list[dict], shown: list[dict]) -> dict | None:
    """The cost block's entry for a summary group: the same type and sizes, and the same name, else
    the one whose name ends in it (a capacity provider is named for its cluster and group). None when
    that is not one entry: the cost block's group then has a row of its own."""
    same = [c for c in priced if c not in shown and c["instanceType"] == g["instanceType"] and c["instances"] == g["instances"]]
    exact = [c for c in same if c["group"] == g["group"]]
    suffixed = [c for c in same if c["group"].endswith(f"-{g['group']}")]
    found = exact or suffixed
    return found[0] if len(found) == 1 else None


def render_summary(summary: dict, console: Console, cost: dict | None = None) -> None:
    groups = summary.get("groups") or []
    priced = list((cost or {}).get("groups") or [])
    if groups:
        columns = ["group", "instance type", "per instance", "instances\nmin/des/max", "GPUs or chips\nmin/des/max"]
        money = ["$ per hour\nmin/des/max"] if cost else []
        table = TextTable("Accelerators", columns + money)
        shown: list[dict] = []
        for g in groups:
            row = [
                f"{g['group']}\n{g['platform']}, {g['purchase']}, {_software(g)}"
                + (f"\n{counted(g['efaInterfacesPerInstance'], 'EFA interface')}" if g.get("efaInterfacesPerInstance") else ""),
                g["instanceType"] + (f"\n(largest of {g['typesAdmitted']})" if g.get("typesAdmitted", 1) > 1 else ""),
                _per_instance(g),
                _sizes(g["instances"]),
                _sizes(g["accelerators"]) + (f"\n= {_sizes(g.get('neuronCores'))}\nNeuronCores" if g["kind"] == "neuron" else ""),
            ]
            match = _matching(g, priced, shown) if cost else None
            if match is not None:
                shown.append(match)
            table.add_row(*row, *(_cost_cells(match) if cost else []))
        for c in priced:
            if c not in shown:  # a group without accelerators (a system group) costs money too
                row = [
                    f"{c['group']}\n{c['platform']}, {c['purchase']}",
                    c["instanceType"],
                    "no accelerators" if not c["acceleratorsPerInstance"] else "-",
                    _sizes(c["instances"]),
                    "-",
                ]
                table.add_row(*row, *_cost_cells(c))
        for t in summary.get("totals") or []:
            cores = f"\n= {_sizes(t.get('neuronCores'))}\nNeuronCores" if t.get("neuronCores") else ""
            row = ["total", "", f"{t['model']} ({'chips' if t['kind'] == 'neuron' else 'GPUs'})", "", _sizes(t) + cores]
            table.add_row(*row, *([""] if cost else []), bold=True)
        if cost:
            at_least = "" if cost["complete"] else "at least\n"
            table.add_row("cost", "", "", "", "", at_least + _cost_sizes(cost["total"]["hourly"]), bold=True)
        table.print(console)
        # Groups that state what repairs their nodes: one line per distinct statement.
        repairs: dict[str, list[str]] = {}
        for g in groups:
            if g.get("repair"):
                repairs.setdefault(g["repair"], []).append(g["group"])
        for text, names in repairs.items():
            console.print(f"Node repair ({', '.join(names)}): {text}", highlight=False)
    if cost:
        render_cost(cost, console, table_shown=bool(groups))
    if summary.get("managedInstances"):
        table = TextTable("ECS Managed Instances (ECS launches what the tasks need)", ["provider", "admitted types", "accelerators"])
        for m in summary["managedInstances"]:
            table.add_row(f"{m['group']}\n{m['purchase']}", ", ".join(m["instanceTypes"]), "\n".join(m["accelerators"]))
        table.print(console)
    nccl = summary.get("ncclTest")
    if nccl:
        console.print(
            f"NCCL test on {nccl['nodeGroup']}: {counted(nccl['workers'], 'worker')} x {counted(nccl['slotsPerWorker'], 'GPU')} = world size "
            f"{nccl['worldSize']}, {counted(nccl['efaInterfacesPerWorker'], 'EFA interface')} per worker",
            highlight=False,
        )
    if summary.get("ackPools"):
        render_ack_pools(summary["ackPools"], console)
    workloads = summary.get("workloads") or []
    if workloads:
        table = TextTable("Workloads", ["workload", "capacity provider", "per task", "tasks/instance", "service\ntasks"])
        for w in workloads:
            if "neuronDevicesPerTask" in w:
                per_task = f"{counted(w['neuronDevicesPerTask'], 'chip')} ({w['neuronCoresPerTask']} NeuronCores)"
            elif "gpuShare" in w:
                share = w["gpuShare"]
                per_task = f"MPS {share['memoryMiBPerTask']} MiB, {share['computePercentPerTask']}% compute\n{share['tasksPerGpu']} per GPU by memory"
                if share["computeBinds"]:
                    per_task += f", {share['tasksPerGpuByCompute']} by compute"
            elif "gpuFractionPerTask" in w:
                per_task = f"{w['gpuFractionPerTask']:g} of a GPU"
            else:
                per_task = counted(w["gpusPerTask"], "GPU")
            fit = str(w.get("tasksPerInstance", "-")) + (f" on {w['landsOn']}" if w.get("landsOn") else "")
            service = str(w.get("serviceDesiredCount", "-"))
            if "perChip" in w:
                service += f"\n{w['perChip']['note']}"
            table.add_row(w["name"], w["capacityProvider"], per_task, str(fit), service)
        table.print(console)


def render_cost(cost: dict, console: Console, table_shown: bool = True) -> None:
    """The cost lines under the Accelerators table (or a table of their own for a plan without one):
    totals, by purchase option, the idle cost of the minimum sizes, what the workloads need, the
    prices' date and source, and every group whose price is unknown."""
    groups = cost.get("groups") or []
    if not table_shown and groups:
        table = TextTable("Cost", ["group", "instance type", "instances\nmin/des/max", "$ per hour\nmin/des/max"])
        for c in groups:
            table.add_row(f"{c['group']}\n{c['platform']}", c["instanceType"], _sizes(c["instances"]), *_cost_cells(c))
        table.add_row("total", "", "", _cost_sizes(cost["total"]["hourly"]), bold=True)
        table.print(console)
    total, hours = cost["total"], cost["prices"]["hoursPerMonth"]
    if not groups and not cost.get("unpriced"):
        return  # the plan provisions no instances
    partial = "" if cost["complete"] else f" (without {counted(len(cost['unpriced']), 'group')} of unknown price)"
    if total["hourly"]["desired"] is None and total["hourly"]["max"] is None:
        console.print("Cost: unknown: no group of the plan has a price in the snapshot", highlight=False)
    else:
        console.print(
            f"Cost{partial}: {_usd(total['hourly']['desired'])}/h at desired size ({_usd(total['monthly']['desired'])}/month), "
            f"{_usd(total['monthly']['max'])}/month at max; idle at min size {_usd(total['idleMonthly'])}/month",
            highlight=False,
        )
    if "needed" in total and total["needed"]["hourly"] is not None:
        need = total["needed"]
        least = "" if need["complete"] else " (at least: some of their nodes have no price)"
        span = f"{_usd(need['hourly'])}/h ({_usd(need['monthly'])}/month)"
        if need["hourlyAtMost"] != need["hourly"]:
            span = f"{_usd(need['hourly'])} to {_usd(need['hourlyAtMost'])}/h ({_usd(need['monthly'])} to {_usd(need['monthlyAtMost'])}/month: workloads sharing nodes, or each on nodes of its own)"
        console.print(f"What the workloads need (placement): {span}{least}", highlight=False)
    options = cost.get("byPurchase") or {}
    if len(options) > 1:
        said = "; ".join(
            f"{o} unknown"
            if v["hourly"]["max"] is None
            else f"{o} {_usd(v['hourly']['desired'])}/h at desired, {_usd(v['hourly']['max'])}/h at max"
            for o, v in options.items()
        )
        console.print(f"By purchase option: {said}", highlight=False)
    each = [
        f"{c['group']} {_usd(c['pricePerHour'])}/h an instance ({c['purchase']})"
        + (f", {_usd(c['perAcceleratorHour'])} an accelerator-hour" if c["perAcceleratorHour"] is not None else "")
        for c in groups
        if c["pricePerHour"] is not None
    ]
    if each:
        console.print(f"Prices: {'; '.join(each)}", highlight=False)
    for u in cost.get("unpriced") or []:
        console.print(f"Cost of {u['group']} ({u['instanceType']}) unknown: {u['reason']}", highlight=False, soft_wrap=True)
    for note in sorted({n for c in groups for n in c.get("notes") or []}):
        console.print(f"Cost: {note}", highlight=False, soft_wrap=True)
    stated = cost["prices"]["stated"]
    console.print(f"{stated[0].upper()}{stated[1:]}, in USD, {hours} hours a month", highlight=False, soft_wrap=True)
    for source in cost["prices"]["sources"].values():
        console.print(f"  {source}", highlight=False, soft_wrap=True)
    for advisory in cost["prices"]["advisories"]:
        console.print(f"Prices (advisory): {advisory}", highlight=False, soft_wrap=True)


def render_ack_pools(pools: list[dict], console: Console) -> None:
    table = TextTable(
        "ACK shared-GPU pools", ["pool", "instance types", "per node", "nodes\nmin/des/max", "pod size", "pods per\nGPU / node"]
    )
    for p in pools:
        head = [
            f"{p['pool']}\n{p['sharingMode']}" + (f", {p['placement']}" if p.get("placement") else ""),
            "\n".join(p["instanceTypes"]),
            f"{p['gpusPerNode']} x {p['model']}\n{p['gpuMemGiBPerGpu']} GiB gpu-mem each",
            "/".join(str(p["nodes"].get(k, "-")) for k in ("min", "desired", "max")),
        ]
        for i, size in enumerate(p["sizes"] or [None]):
            if size is None:
                table.add_row(*head, "-", "-")
                continue
            pct = f", {size['gpuCorePercentage']} %" if size.get("gpuCorePercentage") else ""
            what = f"{size['gpuMemGiB']} GiB{pct}\n({', '.join(size['workloads'])})"
            table.add_row(*(head if i == 0 else [""] * 4), what, f"{size['podsPerGpu']} / {size['podsPerNode']}")
    table.print(console)
    for p in pools:
        console.print(f"{p['pool']}: {p['replacement']}", highlight=False)


def _landing(p: dict) -> str:
    groups = p.get("nodeGroups") or {}
    if p["status"] == "daemon":
        lines = [f"{g}: on {counted(v['placed'], 'node')}" for g, v in groups.items()]
    else:
        lines = [
            f"{g}: " + (f"{v['perNode']} per node, " if v["perNode"] is not None else "") + f"{v['placed']} placed"
            for g, v in groups.items()
        ]
    for g, n in (p.get("scaleUp") or {}).items():
        lines.append(f"{g}: +{counted(n, 'node')} after scale-up")
    if p.get("fargate"):
        lines.append(f"a Fargate node each, of {p['fargate']['capacityProvisioned']}")
    for launch in p.get("provisioned") or []:
        # Which rule named the type: the cheapest of a claim's types, or the smallest where one has no price.
        chosen = f"; {launch['chosen']}" if launch.get("chosen") else ""
        lines.append(
            f"provisioned by NodePool {launch['nodePool']} as {launch['instanceType']} ({counted(launch['nodes'], 'node')}), {launch['placed']} placed{chosen}"
        )
    return "\n".join(lines) or "-"


def render_placement(placement: dict, console: Console) -> None:
    """Where every pod template and task lands, or why it stays Pending (the plan's placement block)."""
    pods, tasks = placement.get("pods") or [], placement.get("tasks") or []
    if pods or tasks:
        _placement_table(pods, tasks).print(console)
    for n in placement.get("networks") or []:
        subnets = ", ".join(f"{s['type'].lower()} {s['cidrBlock']}" for s in n["subnets"]) or "subnets not derived"
        console.print(
            f"network {n['network']}: {n['cidrBlock'] or 'unknown block'} over {len(n['zones'])} zones ({subnets}); derived {n['derived']}",
            highlight=False,
        )
    if pods or tasks:
        for gap in placement.get("gaps") or []:
            console.print(f"placement: {gap} (verdicts that depend on it are advisory)", highlight=False)


def _placement_table(pods: list[dict], tasks: list[dict]) -> TextTable:
    table = TextTable("Placement", ["pod or task", "replicas", "lands on", "status"])
    for p in pods:
        status = p["status"]
        if p.get("pending"):
            status += f" ({p['pending']})\n{p['message']}"
        for note in p.get("notes") or []:
            status += f"\nnote: {note}"
        table.add_row(p["pod"], str(p["replicas"]), _landing(p), status)
    for t in tasks:
        lands = f"{t['capacityProvider']}: {t['perInstance']} per instance" if t.get("capacityProvider") else "-"
        fargate = all(p in fargate_rules.PROVIDERS for p in str(t.get("capacityProvider")).split(", "))
        if fargate:  # no instances there: each task runs on a Fargate VM of its own
            lands = f"{t['capacityProvider']}: one task per Fargate VM"
        if "instancesNeeded" in t:
            lands += f", {counted(t['instancesNeeded'], 'task' if fargate else 'instance')} needed"
        status = t["status"] + (f"\n{t['reason']}" if t.get("reason") else "")
        for note in t.get("notes") or []:
            status += f"\nnote: {note}"
        replicas = str(t["desiredCount"]) if "desiredCount" in t else "task"
        table.add_row(f"task {t['task']}", replicas, lands, status)
    return table
