"""kube-scheduler's DynamicResources plugin over node groups: a pod with resourceClaims fits a node
only where the structured allocator (simulate/dra) allocates every claim of the pod there, the
devices earlier pods' claims hold counted. A claim made from a ResourceClaimTemplate is one per
pod; a named ResourceClaim is shared by all its pods and allocated once, on one node.

The plugin's words are kube-scheduler's (rules/dra.py holds them): Filter "cannot allocate all
claims" and "resourceclaim not available on the node", PreFilter "request <name>: device class
<class> does not exist". What the plan cannot tell
(a selector on an attribute only NVML gives, a MIG layout gpufleet does not model, an expression
outside the CEL subset) is never a guessed match: the node is not refused for it, and the pod's
verdict carries a note naming it (advisory)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gpufleet.rules.dra import CANNOT_ALLOCATE, NO_CLASS, NOT_AVAILABLE
from gpufleet.simulate import dra
from gpufleet.simulate.dra_cel_parse import CelError, CelUnsupported, parse
from gpufleet.simulate.dra_objects import DeviceClass, DeviceRequestSpec, Node, ResourceClaim, ResourceSlice
from gpufleet.simulate.k8s_shapes import PodClaim

# The Filter's per-node refusals of a pod for its claims.
REFUSALS = (CANNOT_ALLOCATE, NOT_AVAILABLE)

# A pod's claims are tried this many times on one node at most when counting how many pods it holds.
_MAX_PER_NODE = 64


@dataclass(frozen=True)
class DraWorld:
    """The plan's DRA objects as the plugin reads them: DeviceClasses, named ResourceClaims and
    ResourceClaimTemplates (each template's spec as a claim named after it), by (namespace, name);
    the attributes no plan gives (read on the node from NVML)."""

    classes: tuple[DeviceClass, ...] = ()
    claims: Mapping[tuple[str, str], ResourceClaim] = field(default_factory=dict)
    templates: Mapping[tuple[str, str], ResourceClaim] = field(default_factory=dict)
    runtime_attributes: frozenset[str] = frozenset()
    unmodelled_drivers: frozenset[str] = frozenset()  # drivers whose devices no node publishes here
    # DRAPrioritizedList (firstAvailable) is beta and on by default from Kubernetes 1.34, the first
    # release that serves resource.k8s.io/v1 (kubernetes/kubernetes pkg/features/kube_features.go);
    # a 1.33 cluster's gate, off by default, is not read from the plan.
    features: dra.Features = dra.Features(prioritized_list=True)


@dataclass(frozen=True)
class PodClaims:
    """A pod's claims resolved: those made for each pod from templates, the named (shared) ones,
    the PreFilter's refusal (every node fails alike), and what is not judged."""

    per_pod: tuple[ResourceClaim, ...] = ()
    shared: tuple[ResourceClaim, ...] = ()
    refusal: str | None = None
    unjudged: tuple[str, ...] = ()
    unmodelled: bool = False  # a class selects a driver whose devices are not published: no node is refused
    # selectors the allocator met outside the CEL subset while placing the pod (dra.SelectorGap)
    gaps: set[str] = field(default_factory=set, compare=False)
    # the allocator's errors met on some node (a CEL runtime error, a request the allocator refuses):
    # upstream's Filter returns them as an error status, and an error aborts the pod's scheduling on
    # every node (kubernetes/kubernetes cf37f0bf pkg/scheduler/framework/plugins/dynamicresources/
    # dynamicresources.go Filter, `case err != nil: ... Return an error to abort scheduling of it`)
    errors: set[str] = field(default_factory=set, compare=False)

    def notes(self) -> list[str]:
        return [f"DRA: {u}: whether a device matches is not judged" for u in self.unjudged] + [f"DRA: {g}" for g in sorted(self.gaps)]


def _specs(claim: ResourceClaim) -> Iterable[DeviceRequestSpec]:
    for request in claim.requests:
        yield from ([request.exactly] if request.exactly else request.first_available)


def _missing_class(claim: ResourceClaim, classes: set[str]) -> str | None:
    """PreFilter's refusal for a request whose class does not exist (`request <r>: device class
    <c> does not exist`; a subrequest is named `<r>/<sub>`)."""
    for request in claim.requests:
        for spec in [request.exactly] if request.exactly else request.first_available:
            if spec is not None and spec.device_class_name not in classes:
                name = request.name if request.exactly else f"{request.name}/{spec.name}"
                return f"request {name}: {NO_CLASS.format(cls=spec.device_class_name)}"
    return None


def _first_missing(claims: Iterable[ResourceClaim], classes: Sequence[DeviceClass]) -> str | None:
    names = {c.name for c in classes}
    return next((r for r in (_missing_class(c, names) for c in claims) if r), None)


def _attributes_read(tree: tuple) -> Iterable[str]:
    """The attribute names a selector reads (`device.attributes['<domain>'].<name>`), as <domain>/<name>."""
    if tree[0] == "select" and isinstance(tree[1], tuple) and tree[1][0] == "index":
        target, key = tree[1][1], tree[1][2]
        if target == ("select", ("ident", "device"), "attributes") and key[0] == "lit":
            yield f"{key[1]}/{tree[2]}"
    for child in tree[1:]:
        if isinstance(child, tuple) and child and isinstance(child[0], str):
            yield from _attributes_read(child)
        elif isinstance(child, tuple):
            for item in child:
                if isinstance(item, tuple) and item and isinstance(item[0], str):
                    yield from _attributes_read(item)


def _runtime_reads(expressions: Iterable[str | None], runtime: frozenset[str]) -> list[str]:
    found = []
    for expression in expressions:
        if expression is None:
            continue
        try:
            tree = parse(expression)
        except CelUnsupported as err:
            found.append(f"selector {expression!r}: {err}")
            continue
        except CelError:
            continue  # the allocator refuses it in upstream's words
        found += [f"selector {expression!r} reads {a}" for a in _attributes_read(tree) if a.rsplit("/", 1)[-1] in runtime or a in runtime]
    return found


def _unjudged(claims: Sequence[ResourceClaim], world: DraWorld) -> list[str]:
    """What in the claims (or their classes) reads attributes only the node gives."""
    classes = {c.name: c for c in world.classes}
    expressions: list[str | None] = []
    for claim in claims:
        for spec in _specs(claim):
            expressions += [*spec.selectors, *(classes[spec.device_class_name].selectors if spec.device_class_name in classes else ())]
    found = _runtime_reads(dict.fromkeys(expressions), world.runtime_attributes)
    for claim in claims:
        for constraint in claim.constraints:
            name = constraint.match_attribute or ""
            if name.rsplit("/", 1)[-1] in world.runtime_attributes or name in world.runtime_attributes:
                found.append(f"claim {claim.shown}: matchAttribute {name}")
    return found


def resolve(claims: Sequence[PodClaim], namespace: str, world: DraWorld) -> PodClaims:
    """The pod's claims as the plugin's PreFilter finds them; a claim or template the plan does
    not hold is a note (it may exist in the cluster), never a refusal."""
    per_pod, shared, unjudged = [], [], []
    for entry in claims:
        if entry.claim is not None:
            found = world.claims.get((namespace, entry.claim))
            (shared.append(found) if found else unjudged.append(f"ResourceClaim {namespace}/{entry.claim} is not in the plan"))
        elif entry.template is not None:
            found = world.templates.get((namespace, entry.template))
            if found is None:
                unjudged.append(f"ResourceClaimTemplate {namespace}/{entry.template} is not in the plan")
            else:
                per_pod.append(ResourceClaim(f"<pod>-{entry.name}", namespace, found.requests, found.constraints))
    refusal = _first_missing([*per_pod, *shared], world.classes)
    unjudged += _unjudged([*per_pod, *shared], world)
    unmodelled = _unmodelled([*per_pod, *shared], world)
    unjudged += [
        f"device class {c} selects devices of {', '.join(sorted(world.unmodelled_drivers))}, which gpufleet does not publish"
        for c in unmodelled
    ]
    return PodClaims(tuple(per_pod), tuple(shared), refusal, tuple(unjudged), bool(unmodelled))


def _unmodelled(claims: Sequence[ResourceClaim], world: DraWorld) -> list[str]:
    """The classes the claims ask for whose selectors name a driver whose devices are not published."""
    classes = {c.name: c for c in world.classes}
    asked = dict.fromkeys(s.device_class_name for claim in claims for s in _specs(claim) if s.device_class_name in classes)
    return [n for n in asked if any(d in (e or "") for e in classes[n].selectors for d in world.unmodelled_drivers)]


@dataclass
class Held:
    """What the claims hold on one node state: its devices, the shared claims allocated there,
    and (one object for the whole simulation) where every shared claim went."""

    devices: frozenset[str] = frozenset()
    shared: frozenset[tuple[str, str]] = frozenset()
    everywhere: set[tuple[str, str]] = field(default_factory=set)

    def copy(self) -> Held:
        return Held(self.devices, self.shared, self.everywhere)


def _key(claim: ResourceClaim) -> tuple[str, str]:
    return (claim.namespace, claim.name)


def _allocate(claims: PodClaims, node: Node, slices: Sequence[ResourceSlice], world: DraWorld, held: Held) -> list[str] | None:
    """One pod's fresh claims on the node: their device ids, None where they do not all fit (an
    allocator error is kept on the claims); where a match is not judged, the gap is kept on the
    claims and the node is not refused ([] held)."""
    fresh = [*claims.per_pod, *(c for c in claims.shared if _key(c) not in held.shared)]
    try:
        result = dra.allocate(node, fresh, world.classes, slices, held.devices, world.features)
    except dra.SelectorGap as gap:
        claims.gaps.add(str(gap))
        return []
    except dra.NodeAllocationError:
        return None
    except dra.AllocationError as err:
        claims.errors.add(str(err))
        return None
    if result is None:
        return None
    return [r.device_id for allocation in result for r in allocation.results]


def _refusal(claims: PodClaims, world: DraWorld, held: Held) -> str | None:
    """PreFilter's refusal, for the claims still to allocate: a claim allocated already needs no
    class (kubernetes/kubernetes cf37f0bf dynamicresources.go PreFilter calls validateDeviceClass
    only for a claim whose status.allocation is nil)."""
    if claims.refusal is None:
        return None
    return _first_missing([*claims.per_pod, *(c for c in claims.shared if _key(c) not in held.everywhere)], world.classes)


def reasons(claims: PodClaims, node: Node, slices: Sequence[ResourceSlice], world: DraWorld, held: Held) -> list[str]:
    """The plugin's Filter on one node: [] where the pod's claims can all be had there."""
    refusal = _refusal(claims, world, held)
    if refusal:
        return [refusal]
    if claims.errors:
        return sorted(claims.errors)
    if claims.unmodelled:
        return []
    if any(_key(c) in held.everywhere and _key(c) not in held.shared for c in claims.shared):
        return [NOT_AVAILABLE]
    devices = _allocate(claims, node, slices, world, held)
    if claims.errors:
        return sorted(claims.errors)
    return [CANNOT_ALLOCATE] if devices is None else []


def take(claims: PodClaims, node: Node, slices: Sequence[ResourceSlice], world: DraWorld, held: Held, times: int) -> None:
    """`times` pods onto the node: each one's claims allocated in turn, their devices held."""
    for _ in range(times):
        devices = _allocate(claims, node, slices, world, held)
        held.devices = held.devices | set(devices or ())
        shared = {_key(c) for c in claims.shared}
        held.shared = held.shared | shared
        held.everywhere |= shared


def room(claims: PodClaims, node: Node, slices: Sequence[ResourceSlice], world: DraWorld, held: Held) -> int | None:
    """How many pods of the template the node's devices hold; None where the claims do not bound
    it (only shared claims, once allocated; or a match not judged)."""
    if claims.refusal or claims.unmodelled or not claims.per_pod:
        return None
    trial = Held(held.devices, held.shared, set(held.everywhere))
    for count in range(_MAX_PER_NODE):
        devices = _allocate(claims, node, slices, world, trial)
        if devices is None:
            return count
        if not devices:
            return None
        trial.devices = trial.devices | set(devices)
        trial.shared = trial.shared | {_key(c) for c in claims.shared}
    return None
