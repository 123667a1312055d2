"""Dynamic Resource Allocation for one node, as kube-scheduler's DynamicResources plugin allocates
it: k8s.io/dynamic-resource-allocation's structured allocator, stable variant, tag v0.35.6 (commit
c181a505b8c74dfba3c9bcb0e2e4d53d00a7334d, Kubernetes 1.35), file
structured/internal/stable/allocator_stable.go; `Lnnn` below are its lines.

Claims are taken one after the other, each claim's requests in order, each request's devices one by
one; a device is tried, the search goes on, and where it dead-ends the device is given back and the
next one tried (L720-L903), so a later constraint or request may force a different earlier choice.
The first full solution wins. Alpha features (partitionable devices, consumable capacity, device
taints, binding conditions, admin access) are off, as in the stable variant's own features: their
fields make a device unusable or a request an error exactly where upstream's do with the gate off.
Device configuration is not carried into the result."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gpufleet.errors import GpufleetError, NotJudged
from gpufleet.simulate.dra_cel import Selector, compile_selector
from gpufleet.simulate.dra_cel_parse import CelCompileError, CelRuntimeError, CelUnsupported
from gpufleet.simulate.dra_objects import (
    Attribute,
    Constraint,
    Device,
    DeviceClass,
    DeviceRequestSpec,
    Node,
    NodeSelector,
    Requirement,
    ResourceClaim,
    ResourceSlice,
    Term,
)
from gpufleet.simulate.dra_pools import NODE_NAME_FIELD, GatheredPool, gather_pools

# AllocationResultsMaxSize: kubernetes/api @v0.35.6 (c6912955960bfa7dba668f1d2d9bac711876d7fc) resource/v1/types.go L1582
MAX_RESULTS = 32
EXACT_COUNT, ALL = "ExactCount", "All"


class AllocationError(GpufleetError):
    """Upstream's Allocate returned this error: the pod cannot be scheduled until the input changes."""


class NodeAllocationError(AllocationError):
    """ErrFailedAllocationOnNode: only this node failed (L274-L281), others may still take the claims."""


class SelectorGap(NotJudged):
    """A selector outside the CEL subset decided whether a device matches: not judged, never guessed."""


@dataclass(frozen=True)
class Features:
    """The allocator's optional features; the stable variant supports none of them (L50-L57), yet
    keeps DRAPrioritizedList's code (L156-L185): the caller says whether its cluster has that gate on."""

    prioritized_list: bool = False


@dataclass(frozen=True)
class DeviceResult:
    request: str
    driver: str
    pool: str
    device: str

    @property
    def device_id(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True)
class ClaimAllocation:
    claim: str
    results: tuple[DeviceResult, ...]
    node_selector: NodeSelector | None


@dataclass(frozen=True)
class _Candidate:
    device: Device
    slice: ResourceSlice

    @property
    def id(self) -> str:
        return f"{self.slice.driver}/{self.slice.pool.name}/{self.device.name}"


@dataclass
class _Request:
    """requestData (L537-L550): one per request without subrequests, one per subrequest."""

    spec: DeviceRequestSpec
    parent: str | None
    device_class: DeviceClass
    num_devices: int = 0
    all_devices: list[_Candidate] = field(default_factory=list)

    @property
    def result_name(self) -> str:
        return f"{self.parent}/{self.spec.name}" if self.parent else self.spec.name


@dataclass
class _MatchAttribute:
    """matchAttributeConstraint (L602-L686): every device of its requests carries the attribute,
    with one type and value."""

    requests: frozenset[str]
    attribute: str
    first: Attribute | None = None
    count: int = 0

    def applies(self, base: str, sub: str | None) -> bool:
        return not self.requests or base in self.requests or (sub is not None and f"{base}/{sub}" in self.requests)

    def add(self, base: str, sub: str | None, c: _Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        found = _lookup_attribute(c, self.attribute)
        if found is None:
            return False
        if self.count and (found.kind is None or (found.kind, found.value) != (self.first.kind, self.first.value)):  # type: ignore[union-attr]
            return False
        if not self.count:
            self.first = found
        self.count += 1
        return True

    def remove(self, base: str, sub: str | None) -> None:
        if self.applies(base, sub):
            self.count -= 1


def _lookup_attribute(c: _Candidate, name: str) -> Attribute | None:
    """lookupAttribute (L688-L713): the fully qualified name, or the bare name in the driver's domain."""
    if name in c.device.attributes:
        return c.device.attributes[name]
    domain, sep, ident = name.partition("/")
    if not sep or domain != c.slice.driver:
        return None
    return c.device.attributes.get(ident)


class _Search:
    def __init__(
        self,
        node: Node | None,
        claims: Sequence[ResourceClaim],
        classes: Sequence[DeviceClass],
        slices: Sequence[ResourceSlice],
        allocated: Iterable[str],
        features: Features,
    ):
        self.node, self.claims, self.features = node, claims, features
        self.classes = {c.name: c for c in classes}
        self.allocated = frozenset(allocated)
        self.pools = gather_pools(slices, node)
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.subrequests: dict[tuple[int, int], int] = {}  # claim, request -> number of subrequests
        self.chosen: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[str, set[int]] = {}
        self.results: list[list[tuple[_Request, _Candidate]]] = [[] for _ in claims]
        self.matches: dict[tuple[str, tuple[int, int, int]], bool] = {}
        self.compiled: dict[str, Selector] = {}

    # --- validation (L145-L236, validateDeviceRequest L396-L474) ---

    def validate(self) -> None:
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, request in enumerate(claim.requests):
                if request.first_available and not self.features.prioritized_list:
                    raise AllocationError(
                        f"claim {claim.shown}, request {request.name}: has subrequests, but the DRAPrioritizedList feature is disabled"
                    )
                if request.first_available:
                    counts = [self._validate((ci, ri, si), sub, request.name).num_devices for si, sub in enumerate(request.first_available)]
                    self.subrequests[(ci, ri)] = len(counts)
                    minimum += min(counts)
                else:
                    minimum += self._validate((ci, ri, 0), request.exactly, None).num_devices  # type: ignore[arg-type]
            if minimum > MAX_RESULTS:
                raise AllocationError(
                    f"claim {claim.shown}: number of requested devices {minimum} exceeds the claim limit of {MAX_RESULTS}"
                )
            self.constraints.append([self._constraint(claim, i, c) for i, c in enumerate(claim.constraints)])

    @staticmethod
    def _constraint(claim: ResourceClaim, i: int, c: Constraint) -> _MatchAttribute:
        if c.match_attribute is None:
            raise AllocationError(f"claim {claim.shown}, constraint #{i}: empty constraint (unsupported constraint type?)")
        return _MatchAttribute(frozenset(c.requests), c.match_attribute)

    def _validate(self, key: tuple[int, int, int], spec: DeviceRequestSpec, parent: str | None) -> _Request:
        where = f"claim {self.claims[key[0]].shown}, request {spec.name}"
        for i, selector in enumerate(spec.selectors):
            if selector is None:
                raise AllocationError(f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)")
        if spec.admin_access:
            raise AllocationError(f"{where}: admin access is requested, but the feature is disabled")
        if not spec.device_class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        if spec.device_class_name not in self.classes:
            raise AllocationError(f"{where}: could not retrieve device class {spec.device_class_name}: not found")
        request = _Request(spec, parent, self.classes[spec.device_class_name])
        self.requests[key] = request
        if spec.allocation_mode == EXACT_COUNT:
            request.num_devices = spec.count
        elif spec.allocation_mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"{where}: asks for all devices, but resource pool {pool.shown} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"{where}: asks for all devices, but resource pool {pool.shown} is currently invalid")
                request.all_devices += [c for c in _candidates(pool) if self.selectable(key, c)]
            request.num_devices = len(request.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {spec.allocation_mode}")
        return request

    # --- selection (isSelectable L905-L955, selectorsMatch L957-L1000) ---

    def selectable(self, key: tuple[int, int, int], c: _Candidate) -> bool:
        if c.device.binding_conditions:
            return False  # DRADeviceBindingConditions off (L907-L911)
        cached = self.matches.get((c.id, key))
        if cached is None:
            request = self.requests[key]
            cached = self._selectors_match(key, c, request.device_class.selectors, request.device_class.name) and self._selectors_match(
                key, c, request.spec.selectors, None
            )
            self.matches[(c.id, key)] = cached
        return cached

    def _selectors_match(self, key: tuple[int, int, int], c: _Candidate, selectors: Sequence[str | None], class_name: str | None) -> bool:
        for i, expression in enumerate(selectors):
            owner = f"class {class_name}" if class_name else f"claim {self.claims[key[0]].shown}"
            if expression is None:
                # only a class can get here (a request's are checked first, L402-L407); upstream
                # dereferences the missing CEL there and panics, gpufleet refuses in the request's words
                raise AllocationError(f"{owner}: selector #{i}: CEL expression empty (unsupported selector type?)")
            try:
                if expression not in self.compiled:
                    self.compiled[expression] = compile_selector(expression)
                selector = self.compiled[expression]
            except CelCompileError as err:
                raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {err}") from None
            except CelUnsupported as err:
                raise SelectorGap(f"{owner}: selector #{i} {expression!r}: {err}; its match is not judged") from None
            try:
                if not selector.matches(c.device, c.slice.driver):
                    return False
            except CelRuntimeError as err:
                raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {err}") from None
            except CelUnsupported as err:
                raise SelectorGap(f"{owner}: selector #{i} {expression!r} on device {c.id}: {err}; its match is not judged") from None
        return True

    # --- search (allocateOne L720-L903, allocateDevice L1008-L1111) ---

    def in_use(self, device_id: str) -> bool:
        return device_id in self.allocated or bool(self.allocating.get(device_id))  # deviceInUse L1244-L1246

    def allocate_one(self, ci: int, ri: int, si: int, di: int, in_subrequest: bool) -> bool:
        if ci >= len(self.claims):
            return True
        if ri >= len(self.claims[ci].requests):
            return self.allocate_one(ci + 1, 0, 0, 0, False)
        if not in_subrequest and (ci, ri) in self.subrequests:
            # firstAvailable: the first subrequest that leads to a full solution (L749-L776)
            for sub in range(self.subrequests[(ci, ri)]):
                if self.allocate_one(ci, ri, sub, di, True):
                    self.chosen[(ci, ri)] = sub
                    return True
            return False
        request = self.requests[(ci, ri, si)]
        if request.spec.allocation_mode == ALL and not request.all_devices:
            return False  # L779-L784: All needs at least one device
        if di >= request.num_devices:
            return self.allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + request.num_devices - di > MAX_RESULTS:
            return False  # L793-L801
        if request.spec.allocation_mode == ALL:
            return self._try(ci, ri, si, di, in_subrequest, request.all_devices[di], must=True)
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for c in _candidates(pool):
                if self.in_use(c.id) or not self.selectable((ci, ri, si), c):
                    continue
                if self._try(ci, ri, si, di, in_subrequest, c, must=False):
                    return True
        return False

    def _try(self, ci: int, ri: int, si: int, di: int, in_subrequest: bool, c: _Candidate, must: bool) -> bool:
        """allocateDevice, then the rest of the search; the device given back if that dead-ends."""
        request = self.requests[(ci, ri, si)]
        if self.in_use(c.id) or c.device.consumes_counters:
            return False  # L1013-L1027: consumesCounters needs DRAPartitionableDevices
        base, sub = (request.parent, request.spec.name) if request.parent else (request.spec.name, None)
        added: list[_MatchAttribute] = []
        for constraint in self.constraints[ci]:
            if not constraint.add(base, sub, c):
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].shown}, request {request.spec.name}: cannot add device {c.id} because a claim constraint would not be satisfied"
                    )
                for undo in added:
                    undo.remove(base, sub)
                return False
            added.append(constraint)
        self.allocating.setdefault(c.id, set()).add(ci)
        self.results[ci].append((request, c))
        # L818: after a device of an All request upstream goes on without the subrequest's index
        if self.allocate_one(ci, ri, 0 if must else si, di + 1, in_subrequest):
            return True
        for constraint in self.constraints[ci]:
            constraint.remove(base, sub)
        self.allocating[c.id].discard(ci)
        self.results[ci].pop()
        return False

    def outcome(self) -> tuple[ClaimAllocation, ...]:
        return tuple(
            ClaimAllocation(
                claim.name,
                tuple(DeviceResult(r.result_name, c.slice.driver, c.slice.pool.name, c.device.name) for r, c in self.results[ci]),
                _node_selector([c for _, c in self.results[ci]]),
            )
            for ci, claim in enumerate(self.claims)
        )


def _candidates(pool: GatheredPool) -> Iterable[_Candidate]:
    return (_Candidate(d, s) for s in pool.slices for d in s.devices)


def _node_selector(chosen: Sequence[_Candidate]) -> NodeSelector | None:
    """createNodeSelector (L1276-L1327): one node-local device pins the claim to its node; else the
    union of the slices' single-term selectors; None where every device is reachable everywhere."""
    expressions: list[Requirement] = []
    fields: list[Requirement] = []
    for c in chosen:
        if c.slice.node_name:
            return NodeSelector((Term(match_fields=(Requirement(NODE_NAME_FIELD, "In", (c.slice.node_name,)),)),))
        if c.slice.node_selector is not None and len(c.slice.node_selector.terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(c.slice.node_selector.terms)} terms")
        for term in c.slice.node_selector.terms if c.slice.node_selector else ():
            expressions += [r for r in term.match_expressions if not _contains(expressions, r)]
            fields += [r for r in term.match_fields if not _contains(fields, r)]
    if expressions or fields:
        return NodeSelector((Term(tuple(expressions), tuple(fields)),))
    return None


def _contains(requirements: Sequence[Requirement], r: Requirement) -> bool:
    """containsNodeSelectorRequirement (L1430-L1445): same key, operator and set of values."""
    return any(e.key == r.key and e.operator == r.operator and set(e.values) == set(r.values) for e in requirements)


def allocate(
    node: Node | None,
    claims: Sequence[ResourceClaim],
    classes: Sequence[DeviceClass],
    slices: Sequence[ResourceSlice],
    allocated: Iterable[str] = (),
    features: Features = Features(),
) -> tuple[ClaimAllocation, ...] | None:
    """Allocate (L97-L389): one allocation per claim, in the claims' order; None where the claims
    cannot all be allocated on this node. `allocated` holds the driver/pool/device ids other claims
    hold already (a shared claim allocated for an earlier pod is one of those, not passed again).
    AllocationError in upstream's words where upstream errors; SelectorGap where a selector's match
    could not be judged."""
    search = _Search(node, claims, classes, slices, allocated, features)
    search.validate()
    if search.allocate_one(0, 0, 0, 0, False):
        return search.outcome()
    if any(pool.invalid for pool in search.pools):
        raise NodeAllocationError("invalid resource pools were encountered")
    return None


def allocate_pods(
    node: Node | None,
    pods: Sequence[Sequence[ResourceClaim]],
    classes: Sequence[DeviceClass],
    slices: Sequence[ResourceSlice],
    allocated: Iterable[str] = (),
    features: Features = Features(),
) -> tuple[tuple[ClaimAllocation, ...], ...] | None:
    """Pods placed on the node one after the other, each pod's claims in one Allocate. The
    allocator takes only unallocated claims (its contract, structured/allocator.go L86-L120), so
    a claim shared by several pods (same namespace and name) is allocated once, for the first pod,
    and its devices stay taken for every later one. None where some pod's claims do not fit."""
    taken = set(allocated)
    done: dict[tuple[str, str], ClaimAllocation] = {}
    out = []
    for claims in pods:
        fresh = [c for c in dict.fromkeys(claims) if (c.namespace, c.name) not in done]
        result = allocate(node, fresh, classes, slices, taken, features)
        if result is None:
            return None
        for claim, allocation in zip(fresh, result, strict=True):
            done[(claim.namespace, claim.name)] = allocation
            taken |= {r.device_id for r in allocation.results}
        out.append(tuple(done[(c.namespace, c.name)] for c in claims))
    return tuple(out)
