"""The filter stage of kube-scheduler over node groups: where each pod template can run.

Plain functions and frozen records, no I/O. The stack spec, the summary and the policy pack all call
`simulate`, so a pod that stays Pending is reported the same way at every door. The filters are
kube-scheduler's default ones that a plan can decide, in its order (pkg/scheduler/apis/config/v1
default plugins): TaintToleration (NoSchedule and NoExecute), NodeAffinity (nodeSelector and the
required node affinity), NodePorts, NodeResourcesFit (requests against allocatable, and the pod
count), PodTopologySpread and InterPodAffinity (k8s_topology), and the messages are its own ("0/2 nodes are available: 2 node(s) had untolerated taint(s).").

Nodes are the groups' nodes at creation (desired size). DaemonSet pods land first, one per matching
node, and take their requests from it; an extended resource that a device-plugin DaemonSet
advertises exists only on the nodes that plugin runs on. Other pods are placed replica by replica,
first fit, in the order given; a pod that fits no node that exists but fits a new node of a group
that may grow (maxSize > desiredSize) is placeable after scale-up. Identical nodes and replicas are
placed as counts (a node state times N, a template times R), never one object per node or replica;
a template under inter-pod rules is placed in steps of counts that its filters allow in any order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.wording import counted
from gpufleet.simulate import k8s_dra
from gpufleet.simulate import k8s_topology as topology
from gpufleet.simulate.dra_objects import Node
from gpufleet.simulate.k8s_filters import (
    device_bound,
    filter_reasons,
    fit_count,
    lands,
    selected_keys,
    unavailable_message,
)
from gpufleet.simulate.k8s_requests import HostPort
from gpufleet.simulate.k8s_shapes import AFTER_SCALE_UP, DAEMON, PENDING, SCHEDULED, NodeShape, Placement, PodTemplate, show


@dataclass
class _Node:
    """`count` identical nodes of one group in one state: a group's nodes are one _Node until pods
    make them differ, so the cost grows with groups and templates, not with nodes and replicas."""

    shape: NodeShape
    free: dict[str, int]
    cat: Catalog  # the facts the filters read (taint effects' spellings, label rules, the messages' wording)
    memory_used: int = 0
    devices: list[dict[str, int]] = field(default_factory=list)
    count: int = 1
    ports: frozenset[HostPort] = frozenset()  # the host ports its pods hold
    tally: dict[str, int] = field(default_factory=dict)  # pods of each template (owner) on each node
    dra: _Dra | None = None  # the plan's DRA objects (None: claims are not judged)
    held: k8s_dra.Held = field(default_factory=k8s_dra.Held)  # what DRA claims hold on each node

    def reasons(self, pod: PodTemplate) -> list[str]:
        if pod.one_per_node and self.tally.get(pod.owner):
            return [topology.ANTI_AFFINITY]
        found = filter_reasons(pod, self.shape, self.free, self.cat, self.devices, self.ports)
        if found or self.dra is None or not pod.claims or self.shape.slices_unknown:
            return found
        return k8s_dra.reasons(self.dra.claims(pod), _dra_node(self.shape), self.shape.slices, self.dra.world, self.held)

    def fits(self, pod: PodTemplate) -> int | None:
        """Pods of the template one node in this state holds by its free resources and devices
        (None: nothing known bounds it)."""
        fits = fit_count(pod, self.free, self.shape, self.devices)
        if self.dra is None or not pod.claims:
            return fits
        room = k8s_dra.room(self.dra.claims(pod), _dra_node(self.shape), self.shape.slices, self.dra.world, self.held)
        return room if fits is None else fits if room is None else min(fits, room)

    def copy(self, count: int) -> _Node:
        return _Node(
            self.shape,
            dict(self.free),
            self.cat,
            self.memory_used,
            [dict(d) for d in self.devices],
            count,
            self.ports,
            dict(self.tally),
            self.dra,
            self.held.copy(),
        )


def _dra_node(shape: NodeShape) -> Node:
    """One node of the group as the allocator matches slices to it (their nodeName is the group's)."""
    return Node(shape.group, shape.labels)


@dataclass
class _Dra:
    """The plan's DRA objects and each template's claims, resolved once per simulation."""

    world: k8s_dra.DraWorld
    resolved: dict[int, k8s_dra.PodClaims] = field(default_factory=dict)
    everywhere: set[tuple[str, str]] = field(default_factory=set)  # the shared claims allocated, on any node

    def notes(self, pod: PodTemplate, shapes: Sequence[NodeShape]) -> list[str]:
        if not pod.claims:
            return []
        unknown = [f"DRA: node group {s.group}: {s.slices_unknown}: its claims are not judged there" for s in shapes if s.slices_unknown]
        return self.claims(pod).notes() + unknown

    def one_node(self, pod: PodTemplate) -> bool:
        """A named claim is allocated on one node: its pods all go there."""
        return bool(pod.claims and self.claims(pod).shared)

    def claims(self, pod: PodTemplate) -> k8s_dra.PodClaims:
        if id(pod) not in self.resolved:
            self.resolved[id(pod)] = k8s_dra.resolve(pod.claims, topology.namespace_of(pod.owner) or "default", self.world)
        return self.resolved[id(pod)]


def _node(shape: NodeShape, free: Mapping[str, int], cat: Catalog, devices=None, dra: _Dra | None = None, held=None) -> _Node:
    devices = [dict(d) for d in (shape.devices if devices is None else devices)]
    return _Node(shape, dict(free), cat, devices=devices, dra=dra, held=k8s_dra.Held() if held is None else held.copy())


def _take(node: _Node, pod: PodTemplate, times: int = 1) -> None:
    """`times` pods of the template onto each node of `node`, device-bound requests first fit device
    by device (as `times` pods placed one after another)."""
    node.free["pods"] = node.free.get("pods", 0) - times
    if times:
        node.tally = {**node.tally, pod.owner: node.tally.get(pod.owner, 0) + times}
    if times:
        node.ports = node.ports | set(pod.host_ports)
    for resource, amount in pod.requests.items():
        node.free[resource] = node.free.get(resource, 0) - amount * times
    node.memory_used += pod.requests.get("memory", 0) * times
    bound = device_bound(pod, node.shape)
    left = times if bound else 0
    for device in node.devices:
        if not left:
            break
        n = min(left, *(device.get(k, 0) // v for k, v in bound.items()))
        for k, v in bound.items():
            device[k] -= v * n
        left -= n
    if node.dra is not None and pod.claims and times:
        k8s_dra.take(node.dra.claims(pod), _dra_node(node.shape), node.shape.slices, node.dra.world, node.held, times)


def _advertisers(pods: Sequence[PodTemplate]) -> dict[str, list[PodTemplate]]:
    found: dict[str, list[PodTemplate]] = {}
    for pod in pods:
        for resource in pod.advertises:
            found.setdefault(resource, []).append(pod)
    return found


def _landing(pod: PodTemplate, node: _Node) -> bool:
    return lands(pod, node.shape, node.cat)


def _fresh(shape: NodeShape, daemons: Sequence[PodTemplate], advertisers: dict, cat: Catalog, dra: _Dra | None = None) -> _Node:
    """A node of the group as it joins: allocatable, minus what the DaemonSets that land on it take;
    an extended resource some DaemonSet advertises exists only where one of them runs."""
    node = _node(shape, shape.allocatable, cat, dra=dra, held=k8s_dra.Held(everywhere=dra.everywhere) if dra else None)
    landed = [d for d in daemons if _landing(d, node)]
    for resource, plugins in advertisers.items():
        if resource in node.free and not any(p in landed for p in plugins):
            node.free[resource] = 0
    for daemon in landed:
        _take(node, daemon)
    return node


# A provisioner asks about the same candidate node for pod after pod: the node as it joins is worked
# out once per (shape, DaemonSets, catalog) object triple, and each caller gets its own copy. The
# objects are kept with their node, so their ids are not reused while cached.
_JOINED: dict[tuple[int, int, bool, int], tuple[NodeShape, Sequence[PodTemplate], _Node]] = {}


def _fresh_copy(shape: NodeShape, daemons: Sequence[PodTemplate], advertised: bool, cat: Catalog) -> _Node:
    key = (id(shape), id(daemons), advertised, id(cat))
    if key not in _JOINED:
        if len(_JOINED) > 4096:
            _JOINED.clear()
        _JOINED[key] = (shape, daemons, _fresh(shape, daemons, _advertisers(daemons) if advertised else {}, cat))
    return _JOINED[key][2].copy(1)


def _notes(pod: PodTemplate, shapes: Sequence[NodeShape], advertisers: dict, cat: Catalog) -> list[str]:
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
        if unknown and _landing(pod, _node(shape, {}, cat)):
            notes.append(f"node group {shape.group}: the amount of {', '.join(unknown)} {shape.unknown_reason}")
    return notes


def given(cat: Catalog | None) -> Catalog:
    """The catalog a simulation was handed. plans/placement.py calls `simulate` and `provision`
    without one until issue 51's plan-view work ports it; every other caller passes its own."""
    return cat if cat is not None else catalog.load()


def simulate(
    shapes: Sequence[NodeShape], pods: Sequence[PodTemplate], cat: Catalog | None = None, dra: k8s_dra.DraWorld | None = None
) -> list[Placement]:
    """Place every pod template on the groups' nodes; one Placement per template, in input order.
    `dra`: the plan's DRA objects, against which pods' resourceClaims are allocated (None: the
    claims are not judged, and each such pod says so)."""
    cat = given(cat)
    daemons = [p for p in pods if p.replicas is None]
    advertisers = _advertisers(daemons)
    context = _Dra(dra) if dra is not None else None
    nodes = [_fresh(s, daemons, advertisers, cat, context).copy(s.nodes) for s in shapes if s.nodes > 0]
    empty = {s.group: _fresh(s, daemons, advertisers, cat, context) for s in shapes}
    grown: Counter[str] = Counter()
    templates = {p.owner: p for p in pods}
    results = []
    for pod in pods:
        result = Placement(pod, DAEMON if pod.replicas is None else SCHEDULED, notes=_notes(pod, shapes, advertisers, cat))
        for shape in shapes:
            probe = empty[shape.group]
            if not probe.reasons(pod):
                result.per_node[shape.group] = probe.fits(pod)
        if pod.replicas is None:
            for node in nodes:
                if _landing(pod, node):
                    result.placed[node.shape.group] = result.placed.get(node.shape.group, 0) + node.count
        elif topology.involved(pod, cluster := topology.Cluster(nodes, templates, cat.facts.eks.well_known_labels.hostname, cat)):
            result.notes += topology.notes(pod, cluster)
            _place_topology(pod, result, nodes, shapes, empty, grown, templates, cat)
        else:
            _place_replicas(pod, result, nodes, shapes, empty, grown)
        result.notes += _tight(pod, result, nodes)
        result.notes += context.notes(pod, shapes) if context else [_UNREAD_CLAIMS] if pod.claims else []
        if pod.replicas is not None and (pod.requests.get("cpu") or pod.requests.get("memory")):
            result.notes += [a for s in shapes if s.group in result.placed or s.group in result.scaled_up for a in s.assumptions]
        results.append(result)
    return results


_UNREAD_CLAIMS = "DRA: its resourceClaims are not judged (the plan's DRA objects were not read)"


def per_new_node(
    pod: PodTemplate,
    shape: NodeShape,
    daemons: Sequence[PodTemplate],
    cat: Catalog,
    assigned: Sequence[tuple[PodTemplate, int]] = (),
    advertised: bool = True,
    whole_type: bool = False,
) -> tuple[int, list[str]]:
    """How many pods of the template one new node of the shape holds once the DaemonSets that land
    on it, and the pods already `assigned` to it, took their share; 0 and the filters' reasons when
    none. `advertised=False` counts extended resources whether or not a device plugin of the plan
    runs there to advertise them (as a provisioner counts a type's capacity). `whole_type` asks as
    Karpenter does: what the DaemonSets and the assigned pods request must fit every resource of the
    type, whatever the pod itself asks for (`_overloaded`)."""
    node = _fresh_copy(shape, daemons, advertised, cat)
    for other, count in assigned:
        _take(node, other, count)
    # Karpenter's NodeClaim checks taints, host ports and requirements before the types' resources.
    reasons = node.reasons(pod) or (_overloaded(node) if whole_type else [])
    if reasons:
        return 0, reasons
    per = node.fits(pod)
    return (pod.replicas or 1) if per is None else per, []


def _overloaded(node: _Node) -> list[str]:
    """The resources of the node that its DaemonSets and pods already ask more of than it has.
    Karpenter merges the DaemonSets' requests with the pods' and keeps a type only where the sum
    fits every resource of it (kubernetes-sigs/karpenter @v1.14.1
    pkg/controllers/provisioning/scheduling/nodeclaim.go L562-L582 and
    pkg/utils/resources/resources.go L187-L201, Fits), so a pod that asks for no CPU still does not
    land on a type its DaemonSets overload; kube-scheduler checks only what the pod asks for."""
    return [
        f"Insufficient {resource} (the DaemonSets' requests exceed the type's)"
        for resource, left in sorted(node.free.items())
        if left < 0 and resource not in node.shape.unknown_resources
    ]


def new_nodes(scale_up: Mapping[str, int]) -> str:
    """The nodes a pod waits for, in words ('1 new node of g5, 2 new nodes of p5'): the pack's
    finding and the diff say it alike."""
    return ", ".join(f"{counted(n, 'new node')} of {group}" for group, n in scale_up.items())


def unserved(result: Placement, shapes: Sequence[NodeShape], placed: Sequence[Placement] = ()) -> list[tuple[NodeShape, list[str]]]:
    """The groups a device-plugin DaemonSet should serve (their nodes have what it advertises) but
    runs on no node of: there those resources are never advertised. A resource another DaemonSet of
    `placed` serves otherwise on the group (serves_instead: the DRA driver) is not wanted there."""
    if result.pod.replicas is not None or not result.pod.advertises:
        return []
    found = []
    for shape in shapes:
        instead = {r for p in placed if shape.group in p.placed for r in p.pod.serves_instead}
        wanted = [r for r in result.pod.advertises if r in shape.allocatable and r not in instead]
        if wanted and shape.nodes and shape.group not in result.placed:
            found.append((shape, wanted))
    return found


def unserved_message(result: Placement, shape: NodeShape, wanted: list[str]) -> str:
    return (
        f"{result.pod.owner} runs on no node of group {shape.group} (its taints, node selector or affinity exclude "
        f"{shape.instance_type}): {', '.join(wanted)} is never advertised there"
    )


def _per_node(pod: PodTemplate, node: _Node) -> int | None:
    """Pods of the template one node in this state holds (it holds one: its reasons are none); None
    when nothing known bounds it."""
    fits = node.fits(pod)
    return None if fits is None else max(fits, 1)


def _place_replicas(pod, result: Placement, nodes: list[_Node], shapes, empty, grown: Counter) -> None:
    """First fit, replica by replica, in counts: the first nodes that hold the pod fill up one after
    another (a node in the same state holds as many), then a group that may grow adds nodes."""
    remaining = pod.replicas
    while remaining > 0:
        i = next((i for i, n in enumerate(nodes) if not n.reasons(pod)), None)
        if i is None:
            if _scale_up(pod, nodes, shapes, empty, grown, remaining, result):
                continue
            _pending(result, nodes, [n.reasons(pod) for n in nodes], remaining)
            return
        per = _per_node(pod, nodes[i])
        context = nodes[i].dra
        count = 1 if context is not None and context.one_node(pod) else nodes[i].count
        placed = remaining if per is None else min(remaining, count * per)
        remaining -= _apply(pod, nodes, {i: topology.split(placed, placed if per is None else per)}, result)


# Steps a template under inter-pod rules is placed in at most: one takes a self-matching spread
# constraint whole (topology.step), several constraints rise a skew's worth a step.
_STEPS = 64


def _place_topology(pod, result: Placement, nodes: list[_Node], shapes, empty, grown: Counter, templates, cat: Catalog) -> None:
    """Replicas under inter-pod rules (topology spread, pod affinity and anti-affinity), in steps:
    each step every state takes what the filters and topology.step let it, in any order of which
    each placement passes the filters; then a group that may grow adds nodes."""
    remaining, scaled = pod.replicas, False
    hostname = cat.facts.eks.well_known_labels.hostname
    for _ in range(_STEPS):
        cluster = topology.Cluster(nodes, templates, hostname, cat)
        reasons = [n.reasons(pod) or topology.reasons(pod, i, cluster) for i, n in enumerate(nodes)]
        room = [0 if r else (_per_node(pod, n) or remaining) for r, n in zip(reasons, nodes, strict=True)]
        placed = _apply(pod, nodes, dict(enumerate(topology.step(pod, cluster, room, remaining))), result)
        remaining -= placed
        if remaining <= 0:
            return
        if placed:
            scaled = False
        elif not scaled and _scale_up(pod, nodes, shapes, empty, grown, remaining, result):
            scaled = True
        else:
            _pending(result, nodes, reasons, remaining)
            return
    _pending(result, nodes, [[] for _ in nodes], remaining)
    result.notes.append(f"{remaining} replicas not judged: their topology rules were followed for {_STEPS} steps only")


def _apply(pod: PodTemplate, nodes: list[_Node], pieces: Mapping[int, list[tuple[int, int]]], result: Placement) -> int:
    """Pieces of replicas onto states: (nodes, pods on each) split off state i; the replicas placed."""
    placed = 0
    for i in sorted(pieces, reverse=True):
        node, filled = nodes[i], []
        for count, per in pieces[i]:
            filled.append(node.copy(count))
            _take(filled[-1], pod, per)
            node.count -= count
            placed += count * per
            result.placed[node.shape.group] = result.placed.get(node.shape.group, 0) + count * per
        nodes[i : i + 1] = [*filled, *([node] if node.count else [])]
    return placed


def _pending(result: Placement, nodes: list[_Node], reasons: list[list[str]], remaining: int) -> None:
    counted: Counter[str] = Counter()
    for node, found in zip(nodes, reasons, strict=True):
        for r in found:
            counted[r] += node.count
    claims = next((n.dra.claims(result.pod) for n in nodes if n.dra is not None and result.pod.claims), None)
    # PreFilter's refusal stands alone, where the nodes' reasons are it (a claim allocated already needs no class).
    refusal = claims.refusal if claims is not None and claims.refusal in counted else None
    result.message = unavailable_message(sum(n.count for n in nodes), counted, refusal)
    # An allocator error aborts the pod's scheduling on every node (the plugin's Filter returns it).
    result.claims_refused = claims is not None and (refusal is not None or bool(claims.errors) or any(counted[r] for r in k8s_dra.REFUSALS))
    result.pending += remaining
    result.status = PENDING


def _scale_up(pod, nodes: list[_Node], shapes, empty, grown: Counter, wanted: int, result: Placement) -> bool:
    """New nodes of the first group that may grow and would hold the pod: as many as `wanted`
    replicas need, up to its maxSize; False when no group may."""
    for shape in shapes:
        room = shape.max_nodes - shape.nodes - grown[shape.group]
        probe = empty[shape.group]
        if room <= 0 or probe.reasons(pod):
            continue
        per = _per_node(pod, probe)
        added = min(room, 1 if per is None else -(-wanted // per))
        grown[shape.group] += added
        node = _node(shape, probe.free, probe.cat, probe.devices, probe.dra, probe.held)
        node.memory_used = shape.allocatable.get("memory", 0) - node.free.get("memory", 0)
        node.count = added
        node.ports = probe.ports
        node.tally = dict(probe.tally)
        nodes.append(node)
        result.scaled_up[shape.group] = result.scaled_up.get(shape.group, 0) + added
        result.status = AFTER_SCALE_UP
        return True
    return False


def _tight(pod: PodTemplate, result: Placement, nodes: list[_Node]) -> list[str]:
    """Nodes whose pods need more memory than the estimate leaves, where this template landed."""
    if not pod.requests.get("memory"):
        return []
    tight = sorted(
        {
            n.shape.group
            for n in nodes
            if n.shape.memory_estimate is not None and n.shape.group in result.placed and n.memory_used > n.shape.memory_estimate
        }
    )
    # A group's nodes share its shape, whose memory_estimate is set for every group in `tight`.
    return [
        f"node group {g}: memory is tight (its pods need more than the "
        f"{show('memory', cast(int, next(n.shape.memory_estimate for n in nodes if n.shape.group == g)))} "
        "allocatable if the OS keeps the estimated share of memory; they may not all fit a real node)"
        for g in tight
    ]
