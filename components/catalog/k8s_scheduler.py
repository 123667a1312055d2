"""The filter stage of kube-scheduler over node groups: where each pod template can run.

Plain functions and frozen records, no I/O. The stack spec, the summary and the policy pack all call
`simulate`, so a pod that stays Pending is reported the same way at every door. The filters are
kube-scheduler's default ones that a plan can decide, in its order (pkg/scheduler/apis/config/v1
default plugins): TaintToleration (NoSchedule and NoExecute), NodeAffinity (nodeSelector and the
required node affinity), NodeResourcesFit (requests against allocatable, and the pod count), and
the messages are its own ("0/2 nodes are available: 2 node(s) had untolerated taint {...}.").

Nodes are the groups' nodes at creation (desired size). DaemonSet pods land first, one per matching
node, and take their requests from it; an extended resource that a device-plugin DaemonSet
advertises exists only on the nodes that plugin runs on. Other pods are placed replica by replica,
first fit, in the order given; a pod that fits no node that exists but fits a new node of a group
that may grow (maxSize > desiredSize) is placeable after scale-up.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

SCHEDULED, AFTER_SCALE_UP, PENDING, DAEMON = "scheduled", "after-scale-up", "pending", "daemon"

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$")


class QuantityError(ValueError):
    """Not a Kubernetes resource quantity."""


def quantity(resource: str, value: object) -> int:
    """A resource quantity in the scheduler's integer units: millicores for cpu, else base units
    (bytes for memory, hugepages and storage; a count for pods and extended resources). Rounds up,
    as the API server does for fractions of the smallest unit."""
    if isinstance(value, bool):
        raise QuantityError(f"{resource}: {value!r} is not a quantity")
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        match = _QUANTITY.match(str(value).strip())
        if not match:
            raise QuantityError(f"{resource}: {value!r} is not a quantity")
        digits, exponent, suffix = match.groups()
        number = float(digits) * (10 ** int(exponent[1:]) if exponent else _BINARY.get(suffix or "", 0) or _DECIMAL[suffix or ""])
    if resource == "cpu":
        number *= 1000
    return math.ceil(round(number, 6))


def show(resource: str, amount: int) -> str:
    """An amount in the units people write: 1500m, 32000Mi, 8."""
    if resource == "cpu":
        return f"{amount}m" if amount % 1000 else str(amount // 1000)
    if resource == "memory" or resource.startswith(("hugepages-", "ephemeral-storage")):
        return f"{amount / 2**30:g}Gi" if amount % 2**30 == 0 else f"{math.ceil(amount / 2**20)}Mi"
    return str(amount)


@dataclass(frozen=True)
class NodeShape:
    """The nodes of one node group as the scheduler sees them."""

    group: str
    instance_type: str
    labels: Mapping[str, str]
    taints: tuple[Mapping, ...]  # Kubernetes spelling: key, value, effect NoSchedule | NoExecute | PreferNoSchedule
    allocatable: Mapping[str, int]  # resource -> amount (quantity units); `pods` is the pod count
    nodes: int  # at creation (desired size)
    max_nodes: int
    min_nodes: int
    # Memory allocatable if the OS keeps the estimated share rather than the documented one: a node
    # whose pods need more than this may not fit them on a real instance.
    memory_estimate: int | None = None
    # Labels whose value differs between the group's nodes or is unknown (the zone of a multi-zone group).
    uncertain_labels: frozenset[str] = frozenset()
    # Resources whose amount cannot be known from the plan (MIG partitions): not checked, noted.
    unknown_resources: frozenset[str] = frozenset()
    # Extended resources the kubelet rejects requests larger than 1 of (time-slicing's failRequestsGreaterThanOne).
    single_unit_resources: frozenset[str] = frozenset()
    # Facts the shape takes on trust (kubelet reservations of an AMI type no source gives).
    assumptions: tuple[str, ...] = ()
    # Extended resources a device plugin of the plan should advertise (a request for one that no
    # DaemonSet of the plan advertises is judged on trust).
    plugin_resources: frozenset[str] = frozenset()
    # Resources a pod takes from one device (a shared GPU's memory and compute): per device, what it
    # holds. A pod's requests of these must fit one device (ACK's GPU sharing binpacks them).
    devices: tuple[Mapping[str, int], ...] = ()


@dataclass(frozen=True)
class PodTemplate:
    """A pod template as the scheduler filters it."""

    owner: str  # "Deployment kube-system/coredns", "MPIJob default/nccl-tests (Worker)"
    replicas: int | None  # None for a DaemonSet (one per matching node)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    # required nodeSelectorTerms (ORed; each term's matchExpressions ANDed); None: no node affinity.
    affinity_terms: tuple[Mapping, ...] | None = None
    tolerations: tuple[Mapping, ...] = ()
    requests: Mapping[str, int] = field(default_factory=dict)
    # Extended resources this DaemonSet's pods advertise on their nodes (device plugins).
    advertises: tuple[str, ...] = ()
    urn: str | None = None
    source: str = ""  # where the pod spec comes from (a chart's values, an EKS add-on, a manifest)
    notes: tuple[str, ...] = ()  # what could not be read (unknown values)


@dataclass
class Placement:
    """Where one pod template runs: per group, how many fit one node and how many were placed; or
    Pending with the scheduler's words."""

    pod: PodTemplate
    status: str  # scheduled | after-scale-up | pending | daemon
    per_node: dict[str, int] = field(default_factory=dict)  # group -> pods of this template one empty node holds
    placed: dict[str, int] = field(default_factory=dict)  # group -> replicas placed (DaemonSet: nodes it runs on)
    scaled_up: dict[str, int] = field(default_factory=dict)  # group -> new nodes its replicas need
    pending: int = 0
    message: str = ""  # the scheduler's message for the replicas left Pending
    notes: list[str] = field(default_factory=list)  # tight memory, assumed facts, unknown capacities

    @property
    def unverified(self) -> bool:
        return bool(self.notes)


# --- filters ------------------------------------------------------------------------------------


def _effect(effect: object) -> str:
    return {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}.get(str(effect), str(effect))


def taint(given: Mapping) -> dict:
    """A taint in Kubernetes' spelling (an EKS API effect converted), with a value only where it has one."""
    found = {"key": given.get("key"), "effect": _effect(given.get("effect"))}
    if given.get("value"):
        found["value"] = given["value"]
    return found


def toleration_matches(toleration: Mapping, taint: Mapping) -> bool:
    """Kubernetes' ToleratesTaint: key (empty key with Exists matches all), value (Equal), effect
    (empty matches all)."""
    operator = toleration.get("operator") or "Equal"
    if toleration.get("effect") and _effect(toleration.get("effect")) != _effect(taint.get("effect")):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    if not toleration.get("key") and operator != "Exists":
        return False
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(pod: PodTemplate, node: NodeShape) -> Mapping | None:
    """The first NoSchedule or NoExecute taint no toleration of the pod matches."""
    for taint in node.taints:
        if _effect(taint.get("effect")) not in ("NoSchedule", "NoExecute"):
            continue
        if not any(toleration_matches(t, taint) for t in pod.tolerations):
            return taint
    return None


def _expression_matches(expression: Mapping, labels: Mapping[str, str]) -> bool:
    key, operator = expression.get("key"), expression.get("operator")
    values = [str(v) for v in expression.get("values") or []]
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, bound = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    return False


def affinity_matches(pod: PodTemplate, labels: Mapping[str, str]) -> bool:
    """nodeSelector (every pair) and the required node affinity (any term; every expression)."""
    if any(labels.get(k) != str(v) for k, v in pod.node_selector.items()):
        return False
    if pod.affinity_terms is None:
        return True
    return any(
        bool(term.get("matchExpressions")) and all(_expression_matches(e, labels) for e in term["matchExpressions"])
        for term in pod.affinity_terms
    )


def selected_keys(pod: PodTemplate) -> set[str]:
    keys = set(pod.node_selector)
    for term in pod.affinity_terms or ():
        keys |= {e.get("key") for e in term.get("matchExpressions") or []}
    return keys


def _device_bound(pod: PodTemplate, node: NodeShape) -> dict[str, int]:
    bound = {k for d in node.devices for k in d}
    return {k: v for k, v in pod.requests.items() if k in bound and v > 0}


def device_for(pod: PodTemplate, node: NodeShape, devices: Sequence[Mapping[str, int]]) -> int | None:
    """The first device (binpack) whose free amounts hold all the pod's device-bound requests."""
    wanted = _device_bound(pod, node)
    for i, free in enumerate(devices):
        if all(free.get(k, 0) >= v for k, v in wanted.items()):
            return i
    return None


def insufficient(pod: PodTemplate, free: Mapping[str, int], node: NodeShape, devices: Sequence[Mapping[str, int]] = ()) -> list[str]:
    """NodeResourcesFit's reasons: 'Too many pods' and 'Insufficient <resource>' for each short one
    (for a device-bound resource: no single device has enough)."""
    reasons = []
    if "pods" not in node.unknown_resources and free.get("pods", 0) < 1:
        reasons.append("Too many pods")
    bound = _device_bound(pod, node)
    for resource, amount in sorted(pod.requests.items()):
        if amount <= 0 or resource in node.unknown_resources or resource in bound:
            continue
        if free.get(resource, 0) < amount:
            reasons.append(f"Insufficient {resource}")
    if bound and device_for(pod, node, devices) is None:
        reasons += [f"Insufficient {r} on any one device" for r in sorted(bound)]
    return reasons


def _admission(pod: PodTemplate, node: NodeShape) -> str | None:
    """What the kubelet refuses after the scheduler placed the pod (it then fails, not Pending)."""
    for resource in sorted(node.single_unit_resources):
        if pod.requests.get(resource, 0) > 1:
            return (
                f"node(s) time-slice {resource} with failRequestsGreaterThanOne: the kubelet rejects a request of "
                f"{pod.requests[resource]} (UnexpectedAdmissionError)"
            )
    return None


def filter_reasons(pod: PodTemplate, node: NodeShape, free: Mapping[str, int], devices: Sequence[Mapping[str, int]] | None = None) -> list[str]:
    """Why the pod cannot run on this node, in kube-scheduler's words: the first failing filter
    plugin's reasons (TaintToleration, NodeAffinity, NodeResourcesFit), [] when it fits."""
    taint = untolerated_taint(pod, node)
    if taint is not None:
        return [f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"]
    if not affinity_matches(pod, node.labels):
        return ["node(s) didn't match Pod's node affinity/selector"]
    reasons = insufficient(pod, free, node, node.devices if devices is None else devices)
    if reasons:
        return reasons
    admission = _admission(pod, node)
    return [admission] if admission else []


def fit_count(pod: PodTemplate, free: Mapping[str, int], node: NodeShape, devices: Sequence[Mapping[str, int]] | None = None) -> int:
    """How many pods of the template `free` holds (the pod count included; device-bound requests
    packed device by device)."""
    bound = _device_bound(pod, node)
    counts = [] if "pods" in node.unknown_resources else [free.get("pods", 0)]
    for resource, amount in pod.requests.items():
        if amount > 0 and resource not in node.unknown_resources and resource not in bound:
            counts.append(free.get(resource, 0) // amount)
    if bound:
        counts.append(sum(min(d.get(k, 0) // v for k, v in bound.items()) for d in (node.devices if devices is None else devices)))
    return max(0, min(counts)) if counts else 0


def unavailable_message(total: int, reasons: Counter) -> str:
    """FitError's message: '0/N nodes are available: <count> <reason>, ...', the '<count> <reason>'
    strings sorted (pkg/scheduler/framework FitError.Error); ErrNoNodesAvailable without nodes."""
    if total == 0:
        return "no nodes available to schedule pods"
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    return f"0/{total} nodes are available: {', '.join(parts)}."


# --- simulation ---------------------------------------------------------------------------------


@dataclass
class _Node:
    shape: NodeShape
    index: int
    free: dict[str, int]
    memory_used: int = 0
    new: bool = False
    devices: list[dict[str, int]] = field(default_factory=list)

    def reasons(self, pod: PodTemplate) -> list[str]:
        return filter_reasons(pod, self.shape, self.free, self.devices)


def _node(shape: NodeShape, index: int, free: Mapping[str, int], devices=None) -> _Node:
    return _Node(shape, index, dict(free), devices=[dict(d) for d in (shape.devices if devices is None else devices)])


def _take(node: _Node, pod: PodTemplate) -> None:
    node.free["pods"] = node.free.get("pods", 0) - 1
    for resource, amount in pod.requests.items():
        node.free[resource] = node.free.get(resource, 0) - amount
    node.memory_used += pod.requests.get("memory", 0)
    bound = _device_bound(pod, node.shape)
    if bound:
        i = device_for(pod, node.shape, node.devices)
        if i is not None:
            for k, v in bound.items():
                node.devices[i][k] -= v


def _advertisers(pods: Sequence[PodTemplate]) -> dict[str, list[PodTemplate]]:
    found: dict[str, list[PodTemplate]] = {}
    for pod in pods:
        for resource in pod.advertises:
            found.setdefault(resource, []).append(pod)
    return found


def _landing(pod: PodTemplate, node: _Node) -> bool:
    return untolerated_taint(pod, node.shape) is None and affinity_matches(pod, node.shape.labels)


def _fresh(shape: NodeShape, index: int, daemons: Sequence[PodTemplate], advertisers: dict) -> _Node:
    """A node of the group as it joins: allocatable, minus what the DaemonSets that land on it take;
    an extended resource some DaemonSet advertises exists only where one of them runs."""
    node = _node(shape, index, shape.allocatable)
    landed = [d for d in daemons if _landing(d, node)]
    for resource, plugins in advertisers.items():
        if resource in node.free and not any(p in landed for p in plugins):
            node.free[resource] = 0
    for daemon in landed:
        _take(node, daemon)
    return node


def _notes(pod: PodTemplate, shapes: Sequence[NodeShape], advertisers: dict) -> list[str]:
    notes = list(pod.notes)
    for resource in sorted(pod.requests):
        if pod.requests[resource] > 0 and resource not in advertisers and any(resource in s.plugin_resources for s in shapes):
            notes.append(f"{resource}: no device plugin in the plan advertises it; assumed installed outside the plan")
    keys = selected_keys(pod)
    for shape in shapes:
        uncertain = sorted(keys & shape.uncertain_labels)
        if uncertain:
            notes.append(f"node group {shape.group}: {', '.join(uncertain)} differs between its nodes or is unknown")
        unknown = sorted(r for r in pod.requests if r in shape.unknown_resources)
        if unknown and _landing(pod, _node(shape, 0, {})):
            notes.append(f"node group {shape.group}: the amount of {', '.join(unknown)} depends on its MIG layout, which the plan does not set")
    return notes


def simulate(shapes: Sequence[NodeShape], pods: Sequence[PodTemplate]) -> list[Placement]:
    """Place every pod template on the groups' nodes; one Placement per template, in input order."""
    daemons = [p for p in pods if p.replicas is None]
    advertisers = _advertisers(daemons)
    nodes = [_fresh(s, i, daemons, advertisers) for s in shapes for i in range(s.nodes)]
    empty = {s.group: _fresh(s, -1, daemons, advertisers) for s in shapes}
    grown = Counter()
    results = []
    for pod in pods:
        result = Placement(pod, DAEMON if pod.replicas is None else SCHEDULED, notes=_notes(pod, shapes, advertisers))
        for shape in shapes:
            probe = empty[shape.group]
            if not probe.reasons(pod):
                result.per_node[shape.group] = fit_count(pod, probe.free, shape, probe.devices)
        if pod.replicas is None:
            for node in nodes:
                if _landing(pod, node):
                    result.placed[node.shape.group] = result.placed.get(node.shape.group, 0) + 1
        else:
            _place_replicas(pod, result, nodes, shapes, empty, grown)
        result.notes += _tight(pod, result, nodes)
        if pod.replicas is not None and (pod.requests.get("cpu") or pod.requests.get("memory")):
            result.notes += [a for s in shapes if s.group in result.placed or s.group in result.scaled_up for a in s.assumptions]
        results.append(result)
    return results


def unserved(result: Placement, shapes: Sequence[NodeShape]) -> list[tuple[NodeShape, list[str]]]:
    """The groups a device-plugin DaemonSet should serve (their nodes have what it advertises) but
    runs on no node of: there those resources are never advertised."""
    if result.pod.replicas is not None or not result.pod.advertises:
        return []
    found = []
    for shape in shapes:
        wanted = [r for r in result.pod.advertises if r in shape.allocatable]
        if wanted and shape.nodes and shape.group not in result.placed:
            found.append((shape, wanted))
    return found


def unserved_message(result: Placement, shape: NodeShape, wanted: list[str]) -> str:
    return (
        f"{result.pod.owner} runs on no node of group {shape.group} (its taints, node selector or affinity exclude "
        f"{shape.instance_type}): {', '.join(wanted)} is never advertised there"
    )


def _place_replicas(pod, result: Placement, nodes: list[_Node], shapes, empty, grown: Counter) -> None:
    for _ in range(pod.replicas):
        node = next((n for n in nodes if not n.reasons(pod)), None)
        if node is None:
            node = _scale_up(pod, nodes, shapes, empty, grown)
            if node is not None:
                result.scaled_up[node.shape.group] = result.scaled_up.get(node.shape.group, 0) + 1
                result.status = AFTER_SCALE_UP
        if node is None:
            if not result.pending:
                reasons = Counter(r for n in nodes for r in n.reasons(pod))
                result.message = unavailable_message(len(nodes), reasons)
            result.pending += 1
            result.status = PENDING
            continue
        _take(node, pod)
        result.placed[node.shape.group] = result.placed.get(node.shape.group, 0) + 1


def _scale_up(pod, nodes: list[_Node], shapes, empty, grown: Counter) -> _Node | None:
    """A new node of the first group that may grow and would hold the pod."""
    for shape in shapes:
        if shape.nodes + grown[shape.group] >= shape.max_nodes:
            continue
        if empty[shape.group].reasons(pod):
            continue
        grown[shape.group] += 1
        node = _node(shape, shape.nodes + grown[shape.group] - 1, empty[shape.group].free, empty[shape.group].devices)
        node.new = True
        node.memory_used = shape.allocatable.get("memory", 0) - node.free.get("memory", 0)
        nodes.append(node)
        return node
    return None


def _tight(pod: PodTemplate, result: Placement, nodes: list[_Node]) -> list[str]:
    """Nodes whose pods need more memory than the estimate leaves, where this template landed."""
    if not pod.requests.get("memory"):
        return []
    tight = sorted(
        {
            n.shape.group
            for n in nodes
            if n.shape.memory_estimate is not None
            and n.shape.group in result.placed
            and n.memory_used > n.shape.memory_estimate
        }
    )
    return [
        f"node group {g}: memory is tight (its pods need more than the {show('memory', next(n.shape.memory_estimate for n in nodes if n.shape.group == g))} "
        "allocatable if the OS keeps the estimated share of memory; they may not all fit a real node)"
        for g in tight
    ]
