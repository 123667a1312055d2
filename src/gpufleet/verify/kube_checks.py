"""A Kubernetes fleet held against the plan's placement: the nodes of each node group (registered
against desired) and NodePool, each node's accelerators against the plan's allocatable for its group,
each device plugin ready on every node the plan put it on, and each pod where the plan placed it.

The plan's groups are named on their nodes by a label the plan's node shapes carry (EKS's
eks.amazonaws.com/nodegroup, GKE's node pool, AKS's agent pool, Karpenter's karpenter.sh/nodepool):
a node belongs to the shape whose naming label it matches (`system-*` for a prefix-named group).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import cast

from gpufleet.catalog.catalog import Catalog
from gpufleet.plans.placement import PlanPlacement
from gpufleet.simulate import k8s_scheduler
from gpufleet.simulate.k8s_shapes import NodeShape, QuantityError, quantity, show
from gpufleet.verify.fleet import KubeFleet
from gpufleet.verify.verdict import MATCH, MISMATCH, NOT_JUDGED, Finding

_OWNER = re.compile(r"^(?P<kind>\w+) (?P<namespace>[^/\s]+)/(?P<name>\S+)(?: \((?P<extra>[^)]*)\))?$")
# Helm's standard labels: a chart's DaemonSet names its chart in app.kubernetes.io/name.
HELM_NAME = "app.kubernetes.io/name"
QUARANTINE_TAINT = "gpufleet.dev/quarantine"
BATCH_KINDS = ("Job", "CronJob", "MPIJob")


def _exact(resource: str) -> bool:
    """Compared exactly: the accelerators and EFA devices a device plugin advertises (any extended
    resource); hugepages must be at least the plan's; cpu, memory and pods depend on the kubelet's
    configuration and are not compared."""
    return "/" in resource


def _compared(resource: str) -> bool:
    return _exact(resource) or resource.startswith("hugepages-")


@dataclass
class _Group:
    name: str
    kind: str  # node group | NodePool
    label: str  # the label that names it on its nodes
    shapes: dict[str, NodeShape]  # instance type -> the plan's node
    urn: str | None
    desired: int | None = None  # None: a NodePool (Karpenter launches what pods need)
    max_nodes: int | None = None
    nodes: list[dict] = field(default_factory=list)
    differs: bool = False  # its nodes do not match the plan (a Pending pod there is the fleet's doing)


def _groups(placement: PlanPlacement, urns: Mapping[str, str], cat: Catalog) -> list[_Group]:
    found = []
    for shape in placement.shapes:
        label = next((k for k, v in shape.labels.items() if v == shape.group), None)
        if label is not None:
            found.append(
                _Group(shape.group, "node group", label, {shape.instance_type: shape}, urns.get(shape.group), shape.nodes, shape.max_nodes)
            )
    node_pool = cat.facts.karpenter.labels.node_pool
    for pool in placement.pools:
        shapes = {c.shape.instance_type: c.shape for c in pool.candidates}
        found.append(_Group(pool.name, "NodePool", node_pool, shapes, pool.urn))
    return found


def _labels(obj: Mapping) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _name(obj: Mapping) -> str:
    return str((obj.get("metadata") or {}).get("name"))


def _ready(obj: Mapping) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or [])


def _group_of(node: Mapping, groups: list[_Group]) -> _Group | None:
    labels = _labels(node)
    return next((g for g in groups if g.label in labels and fnmatchcase(labels[g.label], g.name)), None)


def _quarantine(node: str, reason: str) -> tuple[str, ...]:
    return (f"kubectl cordon {node}", f"kubectl taint nodes {node} {QUARANTINE_TAINT}={reason}:NoSchedule")


def check(placement: PlanPlacement, fleet: KubeFleet, urns: Mapping[str, str], cat: Catalog) -> list[Finding]:
    """Every comparison of the fleet with the plan; `urns` names each group's resource by its name."""
    groups = _groups(placement, urns, cat)
    findings: list[Finding] = []
    if fleet.nodes is None:
        findings.append(
            Finding(
                "nodes", NOT_JUDGED, "nodes", "the recording holds no Node objects: nodes, allocatable, plugins and pods are not compared"
            )
        )
        return findings
    by_node: dict[str, _Group] = {}
    foreign = []
    for node in fleet.nodes:
        group = _group_of(node, groups)
        if group is None:
            foreign.append(_name(node))
            continue
        group.nodes.append(node)
        by_node[_name(node)] = group
    findings += _node_counts(groups)
    findings += _allocatable(groups)
    if foreign:
        findings.append(
            Finding(
                "nodes",
                NOT_JUDGED,
                "nodes outside the plan",
                f"{len(foreign)} node(s) belong to no group of the plan: {', '.join(sorted(foreign)[:10])}",
            )
        )
    short_groups = {g.name for g in groups if g.differs}
    findings += _plugins(placement, fleet, groups, by_node)
    findings += _pods(placement, fleet, by_node, short_groups)
    return findings


def _node_counts(groups: list[_Group]) -> list[Finding]:
    found = []
    for g in groups:
        ready = [n for n in g.nodes if _ready(n)]
        not_ready = sorted(_name(n) for n in g.nodes if not _ready(n))
        subject = f"{g.kind} {g.name}"
        if g.desired is None:
            verdict = MATCH if not not_ready else MISMATCH
            g.differs |= bool(not_ready)
            message = f"{len(ready)} node(s) Ready (Karpenter launches what its pods need)" + (
                f"; NotReady: {', '.join(not_ready)}" if not_ready else ""
            )
            found.append(Finding("nodes", verdict, subject, message, g.urn, observed=len(ready)))
            continue
        problems = []
        if len(ready) < g.desired:
            problems.append(f"{len(ready)} of {g.desired} desired nodes registered and Ready")
        if g.max_nodes is not None and len(g.nodes) > g.max_nodes:
            problems.append(f"{len(g.nodes)} nodes, more than its maximum {g.max_nodes}")
        if not_ready:
            problems.append(f"NotReady: {', '.join(not_ready)}")
        message = "; ".join(problems) or f"{len(ready)} node(s) registered and Ready (desired {g.desired})"
        g.differs |= bool(problems)
        found.append(Finding("nodes", MISMATCH if problems else MATCH, subject, message, g.urn, expected=g.desired, observed=len(ready)))
    return found


def _allocatable(groups: list[_Group]) -> list[Finding]:
    found = []
    for g in groups:
        matched: dict[str, list[str]] = {}  # what the matching nodes carry -> their names
        for node in g.nodes:
            name = _name(node)
            kind = _labels(node).get("node.kubernetes.io/instance-type")
            shape = g.shapes.get(kind) if kind else (next(iter(g.shapes.values())) if len(g.shapes) == 1 else None)
            if shape is None:
                found.append(
                    Finding(
                        "allocatable",
                        NOT_JUDGED,
                        f"node {name}",
                        f"{kind or 'an unlabelled type'} is not a type the plan gives {g.kind} {g.name}",
                        g.urn,
                    )
                )
                continue
            have = (node.get("status") or {}).get("allocatable") or {}
            short, beyond, unread = [], [], []
            for resource, amount in sorted(shape.allocatable.items()):
                if not _compared(resource) or amount == 0:
                    continue
                try:
                    got = quantity(resource, have.get(resource, 0))
                except QuantityError:
                    unread.append(f"{resource} {have.get(resource)!r}")
                    continue
                if got < amount:
                    short.append(f"{resource} {show(resource, got)} of {show(resource, amount)}")
                elif got > amount and _exact(resource):
                    beyond.append(f"{resource} {show(resource, got)}, the plan's model says {show(resource, amount)}")
            subject = f"node {name}"
            g.differs |= bool(short)
            if short:
                reason = "short-" + re.sub(r"[^a-z0-9]+", "-", short[0].split(" ")[0].rsplit("/", 1)[-1].lower()).strip("-")
                message = (
                    f"{g.kind} {g.name} ({shape.instance_type}): allocatable " + "; ".join(short) + ": quarantine it (printed, not run)"
                )
                found.append(
                    Finding(
                        "allocatable",
                        MISMATCH,
                        subject,
                        message,
                        g.urn,
                        _quarantine(name, reason[:63]),
                        expected=_shown(shape.allocatable),
                        observed=dict(have),
                    )
                )
            elif beyond:
                found.append(
                    Finding(
                        "allocatable",
                        MISMATCH,
                        subject,
                        f"{g.kind} {g.name} ({shape.instance_type}): "
                        + "; ".join(beyond)
                        + ": a finding against gpufleet's model of the type",
                        g.urn,
                    )
                )
            elif unread:
                found.append(Finding("allocatable", NOT_JUDGED, subject, "not a quantity: " + ", ".join(unread), g.urn))
            else:
                carried = (
                    ", ".join(f"{r} {have.get(r)}" for r, a in sorted(shape.allocatable.items()) if _compared(r) and a)
                    or "no accelerator in the plan"
                )
                matched.setdefault(f"{shape.instance_type}: {carried}", []).append(name)
        for carried, names in matched.items():
            expected = (
                ", ".join(f"{r} {show(r, a)}" for r, a in sorted(next(iter(g.shapes.values())).allocatable.items()) if _compared(r) and a)
                if len(g.shapes) == 1
                else None
            )
            said = f"{len(names)} node(s) of {g.kind} {g.name} ({carried})" + (f"; the plan: {expected}" if expected else "")
            found.append(Finding("allocatable", MATCH, f"{g.kind} {g.name}", said, g.urn, observed=sorted(names)))
    return found


def _shown(allocatable: Mapping[str, int]) -> dict[str, str]:
    return {r: show(r, a) for r, a in sorted(allocatable.items()) if _compared(r) and a}


def _owner(placed) -> re.Match | None:
    return _OWNER.match(placed.pod.owner)


def _daemonsets_for(owner: re.Match, daemonsets: Iterable[Mapping]) -> list[Mapping]:
    namespace, name = owner["namespace"], owner["name"]
    chart = (owner["extra"] or "").split(" ")[0] or None
    here = [d for d in daemonsets if (d.get("metadata") or {}).get("namespace") == namespace]
    exact = [d for d in here if _name(d) == name]
    if exact or chart is None:
        return exact
    # A release the provider names (name plus a random suffix): its chart's DaemonSet, by label or name.
    return [d for d in here if _labels(d).get(HELM_NAME) == chart or _name(d).startswith(chart)]


def _pods_of_daemonset(ds: Mapping, pods: Iterable[Mapping]) -> list[Mapping]:
    uid = (ds.get("metadata") or {}).get("uid")
    name = _name(ds)
    return [
        p
        for p in pods
        if any(
            r.get("kind") == "DaemonSet" and (r.get("uid") == uid if uid else r.get("name") == name)
            for r in (p.get("metadata") or {}).get("ownerReferences") or []
        )
    ]


def _plugins(placement: PlanPlacement, fleet: KubeFleet, groups: list[_Group], by_node: dict[str, _Group]) -> list[Finding]:
    found = []
    for placed in placement.pods:
        owner = _owner(placed)
        if placed.status != k8s_scheduler.DAEMON or owner is None:
            continue
        subject = f"DaemonSet {owner['namespace']}/{owner['name']}"
        wanted = {g.name: g for g in groups if g.name in placed.placed}
        nodes = sorted(_name(n) for g in wanted.values() for n in g.nodes)
        if fleet.daemonsets is None:
            found.append(Finding("device-plugins", NOT_JUDGED, subject, "the recording holds no DaemonSets", placed.pod.urn))
            continue
        candidates = _daemonsets_for(owner, fleet.daemonsets)
        if not candidates:
            where = ", ".join(sorted(wanted)) or "the nodes its NodePools launch"
            found.append(Finding("device-plugins", MISMATCH, subject, f"not in the cluster; the plan runs it on {where}", placed.pod.urn))
            continue
        if len(candidates) > 1:
            names = ", ".join(sorted(_name(d) for d in candidates))
            found.append(Finding("device-plugins", NOT_JUDGED, subject, f"several DaemonSets could be it ({names})", placed.pod.urn))
            continue
        ds = candidates[0]
        status = ds.get("status") or {}
        counts = f"ready {status.get('numberReady', 0)} of {status.get('desiredNumberScheduled', 0)} scheduled"
        if not placed.placed:
            # The plan puts it on no node group (its nodes are a NodePool's, launched later): its own
            # status says whether it is ready where it runs.
            verdict = MATCH if status.get("numberReady", 0) == status.get("desiredNumberScheduled", 0) else MISMATCH
            found.append(
                Finding("device-plugins", verdict, subject, f"{_name(ds)}: {counts} (the plan puts it on no node group)", placed.pod.urn)
            )
            continue
        if fleet.pods is not None:
            ready_on = {(p.get("spec") or {}).get("nodeName") for p in _pods_of_daemonset(ds, fleet.pods) if _ready(p)}
            missing = [n for n in nodes if n not in ready_on]
        else:
            missing = [] if status.get("numberReady") == status.get("desiredNumberScheduled") else ["(its pods are not recorded)"]
        if missing:
            message = (
                f"{_name(ds)}: {counts}; not ready on "
                + ", ".join(missing[:10])
                + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
            )
            found.append(
                Finding(
                    "device-plugins", MISMATCH, subject, message, placed.pod.urn, expected=len(nodes), observed=status.get("numberReady", 0)
                )
            )
        else:
            found.append(
                Finding(
                    "device-plugins",
                    MATCH,
                    subject,
                    f"{_name(ds)}: {counts}; ready on the {len(nodes)} node(s) of {', '.join(sorted(wanted))}",
                    placed.pod.urn,
                )
            )
    return found


# The names the controllers give their pods (a 5-character random suffix from generateName; a
# Deployment's ReplicaSet adds its pod-template hash, up to 10 characters; an indexed Job its index;
# the MPI operator names its workers by index and its launcher's Job after the MPIJob). A bare name
# prefix would take coredns-autoscaler's pods for CoreDNS's.
_POD_NAMES = {
    "Deployment": r"-[a-z0-9]{1,10}-[a-z0-9]{5}",
    "Job": r"(-\d+)?-[a-z0-9]{5}",
    "CronJob": r"-\d+(-\d+)?-[a-z0-9]{5}",
    "StatefulSet": r"-\d+",
    ("MPIJob", "worker"): r"-worker-\d+",
    ("MPIJob", "launcher"): r"-launcher(-[a-z0-9]{5})?",
}


def _live_pods(owner: re.Match, pods: Iterable[Mapping]) -> list[Mapping]:
    namespace, name, role = owner["namespace"], owner["name"], (owner["extra"] or "").lower()
    suffix = _POD_NAMES.get((owner["kind"], role)) or _POD_NAMES.get(owner["kind"]) or r"-[a-z0-9-]+"
    pattern = re.compile(re.escape(name) + suffix)
    return [p for p in pods if (p.get("metadata") or {}).get("namespace") == namespace and pattern.fullmatch(_name(p))]


def _unschedulable(pod: Mapping) -> str | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message") or c.get("reason") or "not scheduled"
    return None


def _pods(placement: PlanPlacement, fleet: KubeFleet, by_node: dict[str, _Group], short_groups: set[str]) -> list[Finding]:
    if fleet.pods is None:
        return [Finding("pods", NOT_JUDGED, "pods", "the recording holds no Pod objects: where pods run is not compared")]
    found = []
    for placed in placement.pods:
        owner = _owner(placed)
        if placed.status == k8s_scheduler.DAEMON or owner is None:
            continue
        subject = placed.pod.owner
        live = _live_pods(owner, fleet.pods)
        predicted = sorted(set(placed.placed) | {p["nodePool"] for p in placed.provisioned})
        may_land = set(placed.per_node) | {p["nodePool"] for p in placed.provisioned}
        plan_pending = placed.status == k8s_scheduler.PENDING
        plan_words = f"the plan: Pending ({placed.message})" if plan_pending else f"the plan: on {', '.join(predicted) or 'no group'}"
        if not live:
            verdict = NOT_JUDGED if owner["kind"] in BATCH_KINDS else MISMATCH
            why = "a finished job's pods may have been cleaned up" if verdict == NOT_JUDGED else "not created"
            found.append(Finding("pods", verdict, subject, f"no pod of it in the cluster ({why}); {plan_words}", placed.pod.urn))
            continue
        running = [p for p in live if (p.get("status") or {}).get("phase") in ("Running", "Succeeded")]
        pending = [(p, _unschedulable(p)) for p in live if (p.get("status") or {}).get("phase") == "Pending"]
        elsewhere = sorted(
            {
                (_name(p), by_node[n].name if (n := (p.get("spec") or {}).get("nodeName")) in by_node else f"node {n}")
                for p in running
                if (p.get("spec") or {}).get("nodeName") not in by_node
                # a key of by_node here: the test before `or` says so
                or by_node[cast(str, (p.get("spec") or {}).get("nodeName"))].name not in may_land
            }
        )
        unscheduled = [(p, m) for p, m in pending if m]
        if unscheduled and not plan_pending:
            live_words = f"the live scheduler: {unscheduled[0][1]}"
            fleet_short = sorted(set(predicted) & short_groups)
            if fleet_short:
                message = f"{len(unscheduled)} Pending where the fleet differs from the plan ({', '.join(fleet_short)}): {live_words}; {plan_words}"
                found.append(Finding("pods", MISMATCH, subject, message, placed.pod.urn))
            else:
                message = f"{len(unscheduled)} Pending though the fleet matches the plan: {live_words}; {plan_words}: a finding against gpufleet's simulator"
                found.append(Finding("simulator", MISMATCH, subject, message, placed.pod.urn))
        elif plan_pending and running and not unscheduled:
            message = f"{len(running)} running; {plan_words}: a finding against gpufleet's simulator"
            found.append(Finding("simulator", MISMATCH, subject, message, placed.pod.urn))
        elif elsewhere:
            where = ", ".join(f"{pod} on {group}" for pod, group in elsewhere[:5])
            found.append(
                Finding("simulator", MISMATCH, subject, f"runs where the plan said it cannot land: {where}; {plan_words}", placed.pod.urn)
            )
        elif plan_pending:
            live_words = f"the live scheduler: {unscheduled[0][1]}" if unscheduled else "no pod scheduled"
            found.append(Finding("pods", MATCH, subject, f"Pending, as predicted: {live_words}; {plan_words}", placed.pod.urn))
        else:
            waiting = len(live) - len(running) - len(unscheduled)
            extra = f"; {waiting} starting" if waiting else ""
            # Every running pod's node is in by_node here (none runs elsewhere).
            groups = ", ".join(sorted({by_node[cast(str, (p.get("spec") or {}).get("nodeName"))].name for p in running}))
            found.append(
                Finding(
                    "pods",
                    MATCH,
                    subject,
                    f"{len(running)} running on {groups}{extra}; {plan_words}",
                    placed.pod.urn,
                )
            )
    return found
