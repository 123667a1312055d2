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

from gpufleet.apis.quantity import QuantityError, quantity
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.chart_objects import RenderedDaemonSet
from gpufleet.plans.placement import PlanPlacement
from gpufleet.plans.releases import matches
from gpufleet.simulate import k8s_scheduler
from gpufleet.simulate.k8s_shapes import NodeShape, show
from gpufleet.verify import pod_state
from gpufleet.verify.fleet import KubeFleet
from gpufleet.verify.pod_state import DONE, FAILING, READY, STARTING, UNSCHEDULED, PodState
from gpufleet.verify.verdict import MATCH, MISMATCH, NOT_JUDGED, Finding, PlanItem

_OWNER = re.compile(r"^(?P<kind>\w+) (?P<namespace>[^/\s]+)/(?P<name>\S+)(?: \((?P<extra>[^)]*)\))?$")
# Helm's standard labels: a chart's DaemonSet names its chart in app.kubernetes.io/name.
HELM_NAME = "app.kubernetes.io/name"
QUARANTINE_TAINT = "gpufleet.dev/quarantine"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
# The NVIDIA chart's MPS control daemon, by the suffix its template gives its name (curated.yaml,
# charts.nvidiaDevicePlugin.names: daemonset-mps-control-daemon.yml @1b826acc L16-L31).
MPS_DAEMON = "-mps-control-daemon"
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
    nodes: list[Mapping] = field(default_factory=list)
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


def workload(placed) -> str:
    """A placed pod template's name in the ledger: its owner (a DaemonSet without its chart's words)."""
    owner = owner_of(placed)
    if placed.status == k8s_scheduler.DAEMON and owner is not None:
        return f"DaemonSet {owner['namespace']}/{owner['name']}"
    return placed.pod.owner


def items(placement: PlanPlacement, urns: Mapping[str, str]) -> list[PlanItem]:
    """What the plan holds on Kubernetes, each to be judged: its node groups and NodePools, and every
    pod template it places (DaemonSets, Deployments, Jobs, an MPIJob's launcher and workers)."""
    groups = [PlanItem("group", f"node group {s.group}", urns.get(s.group)) for s in placement.shapes]
    groups += [PlanItem("group", f"NodePool {p.name}", p.urn) for p in placement.pools]
    workloads = [PlanItem("workload", workload(p), p.pod.urn) for p in placement.pods]
    return list(dict.fromkeys(groups + workloads))


def unjudged(placement: PlanPlacement, urns: Mapping[str, str], reason: str) -> list[Finding]:
    """Every Kubernetes item of the plan, not judged for one reason (nothing of the kind was read)."""
    return [
        Finding("nodes" if i.kind == "group" else "pods", NOT_JUDGED, i.subject, reason, i.urn, item=i.subject)
        for i in items(placement, urns)
    ]


def _labels(obj: Mapping) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def name_of(obj: Mapping) -> str:
    return str((obj.get("metadata") or {}).get("name"))


def _ready(obj: Mapping) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or [])


def nodes_by_group(placement: PlanPlacement, nodes: Iterable[Mapping], urns: Mapping[str, str], cat: Catalog) -> dict[str, list[Mapping]]:
    """The recorded nodes of each group of the plan (by the label that names it), by group name."""
    groups = _groups(placement, urns, cat)
    _assign(nodes, groups)
    return {g.name: g.nodes for g in groups if g.nodes}


def _assign(nodes: Iterable[Mapping], groups: list[_Group]) -> list[str]:
    """Each node onto its group's list; the names of those in no group of the plan."""
    foreign = []
    for node in nodes:
        group = _group_of(node, groups)
        if group is None:
            foreign.append(name_of(node))
        else:
            group.nodes.append(node)
    return foreign


def _group_of(node: Mapping, groups: list[_Group]) -> _Group | None:
    labels = _labels(node)
    return next((g for g in groups if g.label in labels and fnmatchcase(labels[g.label], g.name)), None)


def _quarantine(node: str, reason: str) -> tuple[str, ...]:
    return (f"kubectl cordon {node}", f"kubectl taint nodes {node} {QUARANTINE_TAINT}={reason}:NoSchedule")


def check(
    placement: PlanPlacement,
    fleet: KubeFleet,
    urns: Mapping[str, str],
    cat: Catalog,
    rendered: Mapping[str, list[RenderedDaemonSet]],
) -> list[Finding]:
    """Every comparison of the fleet with the plan; `urns` names each group's resource by its name;
    `rendered`, per Helm release (URN), the DaemonSets its pinned chart renders
    (plans.releases.release_daemonsets)."""
    if fleet.nodes is None:
        return unjudged(placement, urns, "the recording holds no Node objects: its nodes, plugins and pods are not compared")
    groups = _groups(placement, urns, cat)
    named = {g.name for g in groups}
    findings = [
        Finding(
            "nodes",
            NOT_JUDGED,
            f"node group {s.group}",
            "the plan gives its nodes no label that names the group: they cannot be told from others",
            urns.get(s.group),
            item=f"node group {s.group}",
        )
        for s in placement.shapes
        if s.group not in named
    ]
    foreign = _assign(fleet.nodes, groups)
    by_node = {name_of(node): g for g in groups for node in g.nodes}
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
    findings += _plugins(placement, fleet, groups, rendered)
    findings += _pods(placement, fleet, by_node, short_groups)
    return findings


def _node_counts(groups: list[_Group]) -> list[Finding]:
    found = []
    for g in groups:
        ready = [n for n in g.nodes if _ready(n)]
        not_ready = sorted(name_of(n) for n in g.nodes if not _ready(n))
        subject = f"{g.kind} {g.name}"
        if g.desired is None:
            verdict = MATCH if not not_ready else MISMATCH
            g.differs |= bool(not_ready)
            message = f"{len(ready)} node(s) Ready (Karpenter launches what its pods need)" + (
                f"; NotReady: {', '.join(not_ready)}" if not_ready else ""
            )
            found.append(Finding("nodes", verdict, subject, message, g.urn, observed=len(ready), item=subject))
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
        found.append(
            Finding(
                "nodes", MISMATCH if problems else MATCH, subject, message, g.urn, expected=g.desired, observed=len(ready), item=subject
            )
        )
    return found


def _allocatable(groups: list[_Group]) -> list[Finding]:
    found = []
    for g in groups:
        item = f"{g.kind} {g.name}"
        matched: dict[str, list[str]] = {}  # what the matching nodes carry -> their names
        for node in g.nodes:
            name = name_of(node)
            kind = _labels(node).get(INSTANCE_TYPE)
            shape = g.shapes.get(kind) if kind else (next(iter(g.shapes.values())) if len(g.shapes) == 1 else None)
            if shape is None:
                found.append(
                    Finding(
                        "allocatable",
                        NOT_JUDGED,
                        f"node {name}",
                        f"{kind or 'an unlabelled type'} is not a type the plan gives {g.kind} {g.name}",
                        g.urn,
                        item=item,
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
                        item=item,
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
                        item=item,
                    )
                )
            elif unread:
                found.append(Finding("allocatable", NOT_JUDGED, subject, "not a quantity: " + ", ".join(unread), g.urn, item=item))
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
            found.append(Finding("allocatable", MATCH, item, said, g.urn, observed=sorted(names), item=item))
    return found


def _shown(allocatable: Mapping[str, int]) -> dict[str, str]:
    return {r: show(r, a) for r, a in sorted(allocatable.items()) if _compared(r) and a}


def owner_of(placed) -> re.Match | None:
    return _OWNER.match(placed.pod.owner)


def _daemonsets_for(owner: re.Match, daemonsets: Iterable[Mapping]) -> list[Mapping]:
    namespace, name = owner["namespace"], owner["name"]
    chart = (owner["extra"] or "").split(" ")[0] or None
    here = [d for d in daemonsets if (d.get("metadata") or {}).get("namespace") == namespace]
    exact = [d for d in here if name_of(d) == name]
    if exact or chart is None:
        return exact
    # A release the provider names (name plus a random suffix): its chart's DaemonSet, by label or name.
    return [d for d in here if _labels(d).get(HELM_NAME) == chart or name_of(d).startswith(chart)]


def _pods_of_daemonset(ds: Mapping, pods: Iterable[Mapping]) -> list[Mapping]:
    uid = (ds.get("metadata") or {}).get("uid")
    name = name_of(ds)
    return [
        p
        for p in pods
        if any(
            r.get("kind") == "DaemonSet" and (r.get("uid") == uid if uid else r.get("name") == name)
            for r in (p.get("metadata") or {}).get("ownerReferences") or []
        )
    ]


def _not_ready_on(node: str, states: list[PodState]) -> str:
    """A node where a DaemonSet is not ready, with what its pod there says."""
    here = [st for st in states if st.node == node]
    return f"{node} ({'; '.join(st.said() for st in here)})" if here else f"{node} (no pod)"


def _plugins(
    placement: PlanPlacement, fleet: KubeFleet, groups: list[_Group], rendered: Mapping[str, list[RenderedDaemonSet]]
) -> list[Finding]:
    """Each DaemonSet the plan places. A release of a chart gpufleet renders is found as its chart
    renders it (namespace, name, selector), with the chart's MPS control daemon beside it; any
    other by its name or chart (`_daemonsets_for`)."""
    found = []
    for placed in placement.pods:
        if placed.status != k8s_scheduler.DAEMON or (owner := owner_of(placed)) is None:
            continue
        charted = rendered.get(placed.pod.urn or "", [])
        own = next((d for d in charted if not d.suffix), None)
        found.append(_plugin(placed, owner, fleet, groups, own))
        if fleet.daemonsets is not None:
            found += [_mps_daemon(placed, d, fleet.daemonsets, placement, groups) for d in charted if d.suffix == MPS_DAEMON]
    return found


def _pairs(labels: Mapping) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _described(rendered: RenderedDaemonSet) -> str:
    return f"{rendered.namespace}/{rendered.name} selecting {_pairs(rendered.selector)}"


def _several(candidates: Iterable[Mapping]) -> str:
    return f"several DaemonSets could be it ({', '.join(sorted(name_of(d) for d in candidates))})"


def _not_rendered(rendered: RenderedDaemonSet, daemonsets: Iterable[Mapping]) -> str:
    """What the cluster holds under the rendered name that is not it (another selector)."""
    named = [
        d for d in daemonsets if (d.get("metadata") or {}).get("namespace") == rendered.namespace and fnmatchcase(name_of(d), rendered.name)
    ]
    said = [
        f"{name_of(d)} selects {_pairs(((d.get('spec') or {}).get('selector') or {}).get('matchLabels') or {}) or 'nothing by label'}"
        for d in named
    ]
    return f" ({'; '.join(said)})" if said else ""


def _counts(status: Mapping) -> str:
    return f"ready {status.get('numberReady', 0)} of {status.get('desiredNumberScheduled', 0)} scheduled"


def _plugin(placed, owner: re.Match, fleet: KubeFleet, groups: list[_Group], rendered: RenderedDaemonSet | None) -> Finding:
    """One DaemonSet the plan places: found as its chart renders it (`rendered`), else by name or
    chart; ready on every node the plan puts it on; where it is not, what its pod there says."""
    subject = workload(placed)

    def finding(verdict: str, message: str, **values) -> Finding:
        return Finding("device-plugins", verdict, subject, message, placed.pod.urn, item=subject, **values)

    wanted = {g.name: g for g in groups if g.name in placed.placed}
    nodes = sorted(name_of(n) for g in wanted.values() for n in g.nodes)
    if fleet.daemonsets is None:
        return finding(NOT_JUDGED, "the recording holds no DaemonSets")
    candidates = [d for d in fleet.daemonsets if matches(rendered, d)] if rendered else _daemonsets_for(owner, fleet.daemonsets)
    if not candidates:
        where = ", ".join(sorted(wanted)) or "the nodes its NodePools launch"
        if rendered is None:
            return finding(MISMATCH, f"not in the cluster; the plan runs it on {where}")
        return finding(
            MISMATCH,
            f"not in the cluster as its chart renders it ({_described(rendered)}){_not_rendered(rendered, fleet.daemonsets)}; "
            f"the plan runs it on {where}",
        )
    if len(candidates) > 1:
        return finding(NOT_JUDGED, _several(candidates))
    ds = candidates[0]
    status = ds.get("status") or {}
    counts = _counts(status)
    if not placed.placed:
        # The plan puts it on no node group (its nodes are a NodePool's, launched later): its own
        # status says whether it is ready where it runs.
        verdict = MATCH if status.get("numberReady", 0) == status.get("desiredNumberScheduled", 0) else MISMATCH
        return finding(verdict, f"{name_of(ds)}: {counts} (the plan puts it on no node group)")
    if fleet.pods is not None:
        states = [pod_state.read(p) for p in _pods_of_daemonset(ds, fleet.pods)]
        ready_on = {st.node for st in states if st.state == READY}
        missing = [_not_ready_on(n, states) for n in nodes if n not in ready_on]
    else:
        missing = [] if status.get("numberReady") == status.get("desiredNumberScheduled") else ["(its pods are not recorded)"]
    if missing:
        message = (
            f"{name_of(ds)}: {counts}; not ready on "
            + ", ".join(missing[:10])
            + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        )
        return finding(MISMATCH, message, expected=len(nodes), observed=status.get("numberReady", 0))
    return finding(MATCH, f"{name_of(ds)}: {counts}; ready on the {len(nodes)} node(s) of {', '.join(sorted(wanted))}")


def _plan_nodes_carrying(selector: Mapping[str, str], placement: PlanPlacement, groups: list[_Group]) -> int | None:
    """How many of the plan's nodes carry every label of `selector`: a node group's desired size, a
    NodePool's nodes as they are (Karpenter launches what its pods need). None: a label's value
    differs between a group's nodes or is not known."""

    def carries(shape: NodeShape) -> bool:
        return all(shape.labels.get(k) == v for k, v in selector.items())

    pools = [g for g in groups if g.desired is None]
    if any(set(selector) & s.uncertain_labels for s in [*placement.shapes, *(s for g in pools for s in g.shapes.values())]):
        return None
    in_groups = sum(s.nodes for s in placement.shapes if carries(s))
    in_pools = sum(1 for g in pools for n in g.nodes if (s := g.shapes.get(_labels(n).get(INSTANCE_TYPE, ""))) and carries(s))
    return in_groups + in_pools


def _mps_daemon(placed, rendered: RenderedDaemonSet, daemonsets: list[dict], placement: PlanPlacement, groups: list[_Group]) -> Finding:
    """The NVIDIA chart's MPS control daemon, which the chart renders with every plugin and which
    runs only on nodes its nodeSelector names (nvidia.com/mps.capable=true, which GPU feature
    discovery sets only under an MPS sharing config): scheduled on as many nodes as the plan has
    carrying those labels (none without such a config), and ready on each."""
    item = workload(placed)
    subject = f"{item}: MPS control daemon"

    def finding(verdict: str, message: str, **values) -> Finding:
        return Finding("device-plugins", verdict, subject, message, placed.pod.urn, item=item, **values)

    live = [d for d in daemonsets if matches(rendered, d)]
    if not live:
        return finding(
            MISMATCH,
            f"not in the cluster; the chart renders it beside the plugin ({_described(rendered)}){_not_rendered(rendered, daemonsets)}",
        )
    if len(live) > 1:
        return finding(NOT_JUDGED, _several(live))
    labelled = _pairs(rendered.node_selector)
    expected = _plan_nodes_carrying(rendered.node_selector, placement, groups)
    if expected is None:
        return finding(NOT_JUDGED, f"{name_of(live[0])}: the plan cannot tell which of its nodes are labelled {labelled}")
    status = live[0].get("status") or {}
    desired, ready = status.get("desiredNumberScheduled", 0), status.get("numberReady", 0)
    problems = []
    if desired != expected:
        problems.append(f"scheduled on {desired} node(s), the plan has {expected} labelled {labelled}")
    if ready != desired:
        problems.append(f"ready {ready} of {desired} scheduled")
    if problems:
        return finding(MISMATCH, f"{name_of(live[0])}: " + "; ".join(problems), expected=expected, observed=desired)
    return finding(MATCH, f"{name_of(live[0])}: {_counts(status)}; the plan has {expected} node(s) labelled {labelled}")


# The names the controllers give their pods (a 5-character random suffix from generateName; a
# Deployment's ReplicaSet adds its pod-template hash, up to 10 characters; an indexed Job its index;
# the MPI operator names its workers by index and its launcher's Job after the MPIJob). A bare name
# prefix would take coredns-autoscaler's pods for CoreDNS's.
_POD_NAMES = {
    "Deployment": r"-[a-z0-9]{1,10}-[a-z0-9]{5}",
    "Job": r"(-\d+)?-[a-z0-9]{5}",
    "CronJob": r"-\d+(-\d+)?-[a-z0-9]{5}",
    "StatefulSet": r"-\d+",
    "Pod": "",  # a bare Pod is named as the plan names it
    ("MPIJob", "worker"): r"-worker-\d+",
    ("MPIJob", "launcher"): r"-launcher(-[a-z0-9]{5})?",
}


def live_pods(owner: re.Match, pods: Iterable[Mapping]) -> list[Mapping]:
    namespace, name, role = owner["namespace"], owner["name"], (owner["extra"] or "").lower()
    suffix = _POD_NAMES.get((owner["kind"], role), _POD_NAMES.get(owner["kind"], r"-[a-z0-9-]+"))
    pattern = re.compile(re.escape(name) + suffix)
    return [p for p in pods if (p.get("metadata") or {}).get("namespace") == namespace and pattern.fullmatch(name_of(p))]


def _pods(placement: PlanPlacement, fleet: KubeFleet, by_node: dict[str, _Group], short_groups: set[str]) -> list[Finding]:
    workloads = [p for p in placement.pods if p.status != k8s_scheduler.DAEMON]
    if fleet.pods is None:
        reason = "the recording holds no Pod objects: where its pods run and how they are is not compared"
        return [Finding("pods", NOT_JUDGED, workload(p), reason, p.pod.urn, item=workload(p)) for p in workloads]
    found = []
    for placed in workloads:
        owner = owner_of(placed)
        if owner is None:
            reason = "its owner is not named Kind namespace/name: its pods cannot be told from others"
            found.append(Finding("pods", NOT_JUDGED, placed.pod.owner, reason, placed.pod.urn, item=placed.pod.owner))
            continue
        states = [pod_state.read(p) for p in live_pods(owner, fleet.pods)]
        if owner["kind"] == "MPIJob" and (owner["extra"] or "").lower() == "launcher":
            states = [pod_state.restarting_launcher(st) for st in states]
        found.append(_judge_pods(placed, owner["kind"] in BATCH_KINDS, states, by_node, short_groups, placement.certain(placed)))
    return found


def _group_name(node: str | None, by_node: dict[str, _Group]) -> str:
    return by_node[node].name if node in by_node else f"node {node}"


def _judge_pods(placed, batch: bool, states: list[PodState], by_node: dict[str, _Group], short_groups: set[str], certain: bool) -> Finding:
    """One placed workload against its live pods: where they landed, then how they are (ready,
    completed, failing with the kubelet's reason, still starting). A Pending the plan is not
    `certain` of (its gaps, or the pod's notes: nodes outside the plan, values not read) is not
    held against a cluster that runs the pod, or lacks it."""
    subject = placed.pod.owner

    def finding(check: str, verdict: str, message: str) -> Finding:
        return Finding(check, verdict, subject, message, placed.pod.urn, item=subject)

    predicted = sorted(set(placed.placed) | {p["nodePool"] for p in placed.provisioned})
    may_land = set(placed.per_node) | {p["nodePool"] for p in placed.provisioned}
    plan_pending = placed.status == k8s_scheduler.PENDING
    plan_words = f"the plan: Pending ({placed.message})" if plan_pending else f"the plan: on {', '.join(predicted) or 'no group'}"
    if not states:
        if batch:
            return finding(
                "pods", NOT_JUDGED, f"no pod of it in the cluster (a finished job's pods may have been cleaned up); {plan_words}"
            )
        if plan_pending and not certain:
            return finding("pods", NOT_JUDGED, f"no pod of it in the cluster; {plan_words}, which the plan is not certain of")
        return finding("pods", MISMATCH, f"no pod of it in the cluster (not created); {plan_words}")
    by_state = {k: [st for st in states if st.state == k] for k in (READY, DONE, FAILING, UNSCHEDULED, STARTING)}
    on_node = [st for st in states if st.node]
    elsewhere = sorted(
        {(st.name, _group_name(st.node, by_node)) for st in on_node if st.node not in by_node or by_node[st.node].name not in may_land}
    )
    unscheduled = by_state[UNSCHEDULED]
    if unscheduled and not plan_pending:
        live_words = f"the live scheduler: {unscheduled[0].scheduler}"
        fleet_short = sorted(set(predicted) & short_groups)
        if fleet_short:
            message = (
                f"{len(unscheduled)} Pending where the fleet differs from the plan ({', '.join(fleet_short)}): {live_words}; {plan_words}"
            )
            return finding("pods", MISMATCH, message)
        message = f"{len(unscheduled)} Pending though the fleet matches the plan: {live_words}; {plan_words}: a finding against gpufleet's simulator"
        return finding("simulator", MISMATCH, message)
    if plan_pending and on_node and not unscheduled:
        if not certain:
            return finding("pods", NOT_JUDGED, f"{len(on_node)} running; {plan_words}, which the plan is not certain of")
        return finding("simulator", MISMATCH, f"{len(on_node)} running; {plan_words}: a finding against gpufleet's simulator")
    if elsewhere:
        where = ", ".join(f"{pod} on {group}" for pod, group in elsewhere[:5])
        return finding("simulator", MISMATCH, f"runs where the plan said it cannot land: {where}; {plan_words}")
    if plan_pending:
        live_words = f"the live scheduler: {unscheduled[0].scheduler}" if unscheduled else "no pod scheduled"
        return finding("pods", MATCH, f"Pending, as predicted: {live_words}; {plan_words}")
    return _by_state(placed, batch, by_state, by_node, plan_words, finding)


def _by_state(placed, batch: bool, by_state: dict[str, list[PodState]], by_node: dict[str, _Group], plan_words: str, finding) -> Finding:
    """Landed where the plan said: judged by its containers. A Job's pods and an MPI launcher are
    done when Succeeded; a failed attempt before a completion is named, not held against it."""
    ready, done, failing, starting = by_state[READY], by_state[DONE], by_state[FAILING], by_state[STARTING]
    wanted = placed.pod.replicas or 1
    parts = []
    for states, word in ((ready, "running"), (done, "completed")):
        if states:
            parts.append(f"{len(states)} {word} on " + ", ".join(sorted({_group_name(st.node, by_node) for st in states})))
    restarted = [st for st in ready + done if st.restarts]
    if restarted:
        parts.append("restarts: " + ", ".join(f"{st.name} {st.restarts}" for st in restarted[:5]))
    if failing and not (batch and len(done) >= wanted):
        named = "; ".join(st.said() for st in failing[:5]) + (f"; and {len(failing) - 5} more" if len(failing) > 5 else "")
        return finding(
            "pods", MISMATCH, f"{len(failing)} of {len(ready + done + failing + starting)} pod(s) failing: {named}; {plan_words}"
        )
    if failing:
        parts.append("failed attempts before its completion: " + "; ".join(st.said() for st in failing[:5]))
    if starting:
        parts.append(f"{len(starting)} starting")
        if len(ready) + len(done) < wanted:
            said = "; ".join(st.said() for st in starting[:5])
            return finding("pods", NOT_JUDGED, "; ".join(parts) + f" ({said}): not proven until Ready; {plan_words}")
    return finding("pods", MATCH, "; ".join(parts) + f"; {plan_words}")
