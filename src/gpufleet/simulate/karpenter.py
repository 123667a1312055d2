"""Karpenter's provisioning of the pods the node groups leave Pending: which NodePool admits them,
which of its instance types hold them once the DaemonSets are counted, how many nodes, within the
pool's `limits`; or why no pool ever launches one.

Plain functions and frozen records, no I/O. As Karpenter's scheduler (kubernetes-sigs/karpenter
v1.14.1, pkg/controllers/provisioning/scheduling): pools are tried highest weight first, equal
weights by name in reverse; a pool admits a pod whose tolerations its taints allow and whose
requirements are compatible with its own (rules/karpenter_requirements.py: a custom label key the
pool does not define admits only NotIn and DoesNotExist); a NodeClaim holds the intersection of its
pool's requirements and its pods', and keeps taking pods compatible with it while one of its types
(those whose labels intersect it) still holds them all, each type judged on Karpenter's estimate of
a node of it (node_capacity.karpenter_*) by kube-scheduler's own filters, DaemonSets counted; a
pool's limits lose the largest capacity among a new claim's types.

A type is launched only where it has an offering the claim allows (its zones in the region, its
capacity types, an AMI family that runs it: karpenter_pools.py reads them); a pool whose
PreferNoSchedule taint the pod does not tolerate is tried only once no other pool holds it.
A claim launches in the first capacity type it allows that one of its types is offered in
(reserved, spot, on-demand), the cheapest of those types by the price snapshot (EC2 Fleet's
lowest-price strategy for on-demand); where one of them has no price in the snapshot, the smallest
(fewest vCPUs, then least memory; a generic type before an accelerated one), and `chosen` says
which rule named the type and why, `candidates` how many types would hold the pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.wording import counted
from gpufleet.rules import dra as dra_rules
from gpufleet.rules import karpenter_requirements
from gpufleet.rules.cost import Price
from gpufleet.rules.k8s import describe_taint, k8s_effect, tolerates
from gpufleet.rules.karpenter_requirement import DOES_NOT_EXIST
from gpufleet.rules.karpenter_requirements import Requirements
from gpufleet.simulate import k8s_scheduler, karpenter_gaps, karpenter_topology
from gpufleet.simulate.k8s_shapes import PENDING, NodeShape, Placement, PodTemplate, show

PROVISIONED = "provisioned"


@dataclass(frozen=True)
class Requirement:
    """A NodePool requirement (a node selector requirement with Karpenter's Gte and Lte)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None  # the distinct values a NodeClaim's types must still cover


@dataclass(frozen=True)
class Candidate:
    """One instance type a pool may launch: a node as Karpenter estimates it, and its capacity (what
    the pool's limits count)."""

    shape: NodeShape
    capacity: Mapping[str, int]
    vcpus: int
    memory_mib: int
    # An accelerated or bare-metal type: Karpenter launches one only where no other type fits
    # (ExoticInstanceTypeFilter, karpenter-provider-aws pkg/providers/instance/filter/filter.go @bde00654 L326-L368).
    exotic: bool = False
    overlaid: frozenset[str] = frozenset()  # resources a NodeOverlay sets on this type (what Karpenter then sees)
    # Its labels, each In its value, DoesNotExist for a provider label its record gives no value, and
    # its offerings' zones, region and capacity types (a NodeClaim keeps the types it intersects).
    requirements: Requirements = Requirements()
    unoffered: str | None = None  # why it has no offering Karpenter may launch (not in the region, AMI family)
    # Per capacity type it is offered in, its cheapest offering's price, or why the snapshot has none.
    prices: Mapping[str, Price] = field(default_factory=dict)


@dataclass(frozen=True)
class Pool:
    """A NodePool as Karpenter provisions from it."""

    name: str
    weight: int
    candidates: tuple[Candidate, ...]  # its requirements' types, with the pool's labels and taints
    # Keys the pool's requirements and labels define: the values a node may take (None: any).
    defined: Mapping[str, frozenset[str] | None]
    limits: Mapping[str, int] = field(default_factory=dict)  # resource -> amount; "nodes" counts nodes
    urn: str | None = None
    # Its requirements and labels, as Karpenter's NodeClaimTemplate holds them (keys read through `aliases`).
    requirements: Requirements = Requirements()
    taints: tuple[Mapping, ...] = ()
    # Keys a pod may select though the pool leaves them undefined: the well-known labels (and its types' label keys).
    allow_undefined: frozenset[str] = frozenset()
    aliases: Mapping[str, str] = field(default_factory=dict)  # deprecated or foreign label key -> the key Karpenter reads it as
    unknown_keys: frozenset[str] = frozenset()  # labels Karpenter gives its nodes that gpufleet cannot derive
    refused: str | None = None  # why it never launches, whatever it admits (no offering: reserved capacity with no reservation)
    unseen_node_class: str | None = None  # its EC2NodeClass, where the plan does not hold it
    unjudged: tuple[str, ...] = ()  # what of its requirements could not be judged (its types are then a guess)
    ami_problem: str | None = None  # why its node class's AMIs run none of its types
    plugins_built_in: bool = False  # its nodes advertise their accelerators with no DaemonSet (EKS Auto Mode)
    consolidation: str = ""  # its disruption.consolidationPolicy (the CRD's default where unset)
    # A pool of reserved capacity only: the instances its reservations hold (None: not known, or not only reserved).
    reserved: int | None = None
    unmodelled: tuple[karpenter_gaps.Unmodelled, ...] = ()  # what of its nodes the simulation does not model
    passed_over: str | None = None  # why the provisioner never launches from it for pods (a static pool)
    capacity_key: str = ""  # the capacity-type label: a claim's requirement on it picks the capacity type launched
    region: str | None = None  # where its nodes launch (its types' prices are that region's), where known
    # Who launches its nodes and at which version, where the plan says: ("karpenter", its chart's
    # version) or ("auto-mode", the cluster's Kubernetes version). DRA claims are judged by it.
    provisioner: tuple[Literal["karpenter", "auto-mode"], str | None] = ("karpenter", None)


def order(pools: Sequence[Pool]) -> list[Pool]:
    """Highest weight first; equal weights by name, in reverse (nodepool.go OrderByWeight)."""
    return sorted(sorted(pools, key=lambda p: p.name, reverse=True), key=lambda p: -p.weight)


def _pod_requirements(pod: PodTemplate, pool: Pool) -> Requirements:
    """The pod's requirements as Karpenter reads them: its nodeSelector and first required term
    (Karpenter tries the other terms only once that one fails; preferred terms are not read here)."""
    key = (id(pod), id(pool.aliases))
    if key not in _POD_REQUIREMENTS:
        if len(_POD_REQUIREMENTS) > 4096:
            _POD_REQUIREMENTS.clear()
        found = karpenter_requirements.of_pod(pod.node_selector, pod.affinity_terms, pool.aliases)
        _POD_REQUIREMENTS[key] = (pod, pool.aliases, found)
    return _POD_REQUIREMENTS[key][2]


# A pod's requirements are asked of claim after claim: read once per (pod, aliases) object pair,
# kept with their objects so their ids are not reused while cached.
_POD_REQUIREMENTS: dict[tuple[int, int], tuple[PodTemplate, Mapping[str, str], Requirements]] = {}


_ANYWHERE = Requirements()  # no topology domain given


def _incompatible(pod: PodTemplate, claim: _Claim, domain: Requirements = _ANYWHERE) -> str | None:
    """Why the pod's requirements (and the topology domain given it) cannot join the claim's, in
    Karpenter's words; None when they can."""
    wanted = _pod_requirements(pod, claim.pool)
    problem = claim.requirements.compatible(wanted.merged(domain) if domain.by_key else wanted, claim.pool.allow_undefined)
    return None if problem is None else f"incompatible requirements, {problem}"


def _node_labels(requirements: Requirements, pool: Pool, shape: NodeShape) -> dict[str, str]:
    """The node's labels: its type's and its pool's, and a value for each other key the claim's
    requirements allow one of (resolveCustomLabelsFromRequirements, kubernetes-sigs/karpenter
    pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go @6e7eab7a L96-L107; a well-known
    key, the zone, takes the value of the offering launched, here the first the claim allows), each
    again under the aliases that read as it (the kubelet and the cloud node controller write the
    deprecated spellings, curated eks.wellKnownLabels; the kubelet writes a CSI driver's topology
    key, the EBS CSI zone)."""
    labels = dict(shape.labels)
    for key, r in requirements.by_key.items():
        if key not in labels and r.operator() != DOES_NOT_EXIST:
            labels[key] = r.any()
    for alias, key in pool.aliases.items():
        if key in labels and alias not in labels:
            labels[alias] = labels[key]
    return labels


@dataclass
class _Claim:
    """`count` identical NodeClaims being built: the pool's types that still hold every pod given to
    each, and those pods (per claim). Identical claims are one record, as kube-scheduler's
    simulation counts identical nodes, so that a huge replica count is arithmetic, not a loop."""

    pool: Pool
    options: list[Candidate]
    requirements: Requirements  # the pool's, narrowed by each pod given to it
    assigned: list[tuple[PodTemplate, int]] = field(default_factory=list)
    count: int = 1

    @property
    def pods(self) -> int:
        return sum(n for _, n in self.assigned)

    def alike(self, other: _Claim) -> bool:
        """Whether two claims of one pool are the same claim to every later pass: requirements, types and pods."""
        return (
            self.requirements == other.requirements
            and [id(c) for c in self.options] == [id(c) for c in other.options]
            and [(id(p), n) for p, n in self.assigned] == [(id(p), n) for p, n in other.assigned]
        )

    def one_more(self) -> _Claim:
        """A copy of one of these claims, as its own record."""
        return _Claim(self.pool, list(self.options), self.requirements, list(self.assigned))


# The same type under the same labels, asked of claim after claim: one shape object each, so the
# scheduler's joined-node cache (keyed by the shape's identity) serves them all. The base shape is
# kept with its entry, so its id is not reused while cached.
_RELABELLED: dict[tuple[int, frozenset[tuple[str, str]]], tuple[NodeShape, NodeShape]] = {}


def _labelled(shape: NodeShape, labels: dict[str, str]) -> NodeShape:
    if labels == shape.labels:
        return shape
    key = (id(shape), frozenset(labels.items()))
    if key not in _RELABELLED:
        if len(_RELABELLED) > 4096:
            _RELABELLED.clear()
        _RELABELLED[key] = (shape, replace(shape, labels=labels))
    return _RELABELLED[key][1]


def _room(
    pod: PodTemplate, claim: _Claim, requirements: Requirements, candidate: Candidate, daemons: Sequence[PodTemplate], cat: Catalog
) -> tuple[int, list[str]]:
    shape = _labelled(candidate.shape, _node_labels(requirements, claim.pool, candidate.shape))
    return k8s_scheduler.per_new_node(pod, shape, daemons, cat, claim.assigned, advertised=False, whole_type=True)


def _unadvertised(pod: PodTemplate, claim: _Claim, daemons: Sequence[PodTemplate], cat: Catalog) -> list[str]:
    """The extended resources the pod needs that no device plugin of the plan advertises on the node
    Karpenter launches: Karpenter counts the type's capacity, the kubelet only what a plugin advertises."""
    if claim.pool.plugins_built_in:
        return []
    launched = _launched(claim)
    shape = _labelled(launched.shape, _node_labels(claim.requirements, claim.pool, launched.shape))
    alone = [(p, n) for p, n in claim.assigned if p is not pod]
    if k8s_scheduler.per_new_node(pod, shape, daemons, cat, alone)[0]:
        return []
    return sorted(r for r in pod.requests if r in launched.shape.plugin_resources and pod.requests[r] > 0)


@dataclass(frozen=True)
class _Topology:
    """The topology a replica meets on a claim: where pods are, and the domain its share was given."""

    where: karpenter_topology.Where | None = None
    domain: Requirements = _ANYWHERE


def _add(
    pod: PodTemplate,
    wanted: int,
    claim: _Claim,
    daemons: Sequence[PodTemplate],
    cat: Catalog,
    why: dict[str, int] | None = None,
    topology: _Topology = _Topology(),
) -> int:
    """Give the claim as many of `wanted` replicas as one of its types holds with what it already
    has, where the pod's requirements are compatible with the claim's (NodeClaim.CanAdd,
    kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/nodeclaim.go @6e7eab7a
    L130-L136) and the hostname topology lets it take them (karpenter_topology.claim_room); the
    claim's requirements narrow to the intersection, its types to those whose labels intersect it
    (L620-L622) and hold them all (Karpenter adds pods one by one while any does), and whose
    values still meet the requirements' minValues (Strict, the default MinValuesPolicy:
    filterInstanceTypesByRequirements, nodeclaim.go @v1.14.1 L602-L612)."""
    if _incompatible(pod, claim, topology.domain) is not None:
        return 0
    room = None if topology.where is None else karpenter_topology.claim_room(pod, claim.assigned, topology.where)
    wanted = wanted if room is None else min(wanted, room)
    if wanted <= 0:
        if why is not None:
            why[karpenter_topology.unsatisfiable(pod, topology.where, on_hostname=True)] = len(claim.options)
        return 0
    requirements = claim.requirements.merged(_pod_requirements(pod, claim.pool)).merged(topology.domain)
    options = [c for c in claim.options if c.requirements.meets(requirements)]
    rooms = []
    for candidate in options:
        room, reasons = _room(pod, claim, requirements, candidate, daemons, cat)
        rooms.append(room)
        if why is not None:
            for r in reasons:
                why[r] = why.get(r, 0) + 1
    if why is not None and len(options) < len(claim.options):
        why["its labels do not meet the pod's requirements"] = len(claim.options) - len(options)
    most = _most_meeting_min_values(requirements, options, rooms, min(wanted, max(rooms, default=0)), why)
    if most > 0:
        claim.options = [c for c, room in zip(options, rooms) if room >= most]
        claim.requirements = requirements
        claim.assigned.append((pod, most))
    return most


MIN_VALUES = "minValues requirement is not met for label(s)"  # SatisfiesMinValues' error (pkg/cloudprovider/types.go @v1.14.1 L430)


def _most_meeting_min_values(
    requirements: Requirements, options: Sequence[Candidate], rooms: Sequence[int], most: int, why: dict[str, int] | None
) -> int:
    """The most replicas (up to `most`) the claim takes whose types, those holding that many,
    still cover each minValues key's count of distinct values; 0 where even one replica's do not.
    A key none of the types holds is one whose values the plan does not give (the zones, without
    the region): not judged."""
    requirements = Requirements({k: r for k, r in requirements.by_key.items() if any(c.requirements.has(k) for c in options)})
    if most <= 0 or not requirements.has_min_values():
        return most
    unmet: dict[str, int] = {}
    for level in sorted({r for r in rooms if 0 < r <= most} | {most}, reverse=True):
        unmet = requirements.unmet_min_values([c.requirements for c, room in zip(options, rooms, strict=True) if room >= level])
        if not unmet:
            return level
    if why is not None:
        said = ", ".join(f"{k} ({n} of minValues {requirements.get(k).min_values})" for k, n in sorted(unmet.items()))
        why[f"{MIN_VALUES} {said}"] = len(options)
    return 0


def _counted(candidate: Candidate, resource: str) -> int:
    """What one node of the type counts against a pool limit on the resource."""
    return 1 if resource == "nodes" else candidate.capacity.get(resource, 0)


def _fits_limits(candidate: Candidate, remaining: Mapping[str, int]) -> bool:
    return all(_counted(candidate, r) <= left for r, left in remaining.items())


# The capacity type a NodeClaim launches in: the first of these it allows that one of its types is
# offered in (getCapacityType, aws/karpenter-provider-aws pkg/providers/instance/instance.go
# @bde00654 L743-L759).
LAUNCH_PREFERENCE = ("reserved", "spot", "on-demand")


def _launched(claim: _Claim) -> Candidate:
    return _launch(claim)[0]


def _smallest(options: Sequence[Candidate]) -> Candidate:
    return min(options, key=lambda c: (c.vcpus, c.memory_mib, c.shape.instance_type))


def _launch(claim: _Claim) -> tuple[Candidate, str]:
    """The type Karpenter launches for the claim, and the rule that names it. Accelerated and
    bare-metal types only where no other holds the pods (ExoticInstanceTypeFilter,
    karpenter-provider-aws pkg/providers/instance/filter/filter.go @bde00654 L326-L368); of the
    types offered in the capacity type launched, the cheapest (the NodeClaim's types ordered by
    their cheapest offering, nodeclaimtemplate.go @6e7eab7a L112-L116; CreateFleet's on-demand
    lowest-price strategy, instance/types.go @bde00654 L242-L246; spot's price-capacity-optimized,
    L232-L235, weighs the pools' capacity too). Where one of them has no price, the smallest."""
    options = [c for c in claim.options if not c.exotic] or claim.options
    allowed = claim.requirements.get(claim.pool.capacity_key)
    capacity = next((t for t in LAUNCH_PREFERENCE if allowed.has(t) and any(t in c.prices for c in options)), None)
    if capacity is None:
        return _smallest(
            options
        ), f"smallest of {counted(len(options), 'type')} holding them (no prices: {_unpriced(claim.pool, None, [])})"
    offered = [c for c in options if capacity in c.prices]
    missing = [c for c in offered if c.prices[capacity].dollars is None]
    if missing:
        return _smallest(
            offered
        ), f"smallest of {counted(len(offered), 'type')} holding them (no prices: {_unpriced(claim.pool, capacity, missing)})"
    cheapest = min(offered, key=lambda c: (c.prices[capacity].dollars, c.vcpus, c.memory_mib, c.shape.instance_type))
    return cheapest, f"cheapest of {counted(len(offered), 'type')} holding them ({cheapest.prices[capacity].basis})"


def _unpriced(pool: Pool, capacity: str | None, missing: Sequence[Candidate]) -> str:
    """Why a claim's types are not priced: the types the snapshot has no price for, or the reason
    none is (the region unknown, reserved capacity)."""
    if capacity is None or not missing:
        return "its types carry no prices"
    if pool.region is None or capacity == LAUNCH_PREFERENCE[0]:
        return missing[0].prices[capacity].basis
    names = [c.shape.instance_type for c in missing]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"no {capacity} price for {shown} in {pool.region}"


def _prefers_away(pod: PodTemplate, pool: Pool, cat: Catalog) -> str | None:
    """A PreferNoSchedule taint of the pool the pod does not tolerate: Karpenter holds it as it holds
    NoSchedule (Taints.Tolerates, kubernetes-sigs/karpenter pkg/scheduling/taints.go @6e7eab7a
    L82-L95) until the pod's last relaxation tolerates every PreferNoSchedule taint
    (preferences.go L38-L57, L132-L146), offered once any pool has one (scheduler.go L144-L153)."""
    eks = cat.facts.eks
    for taint in pool.taints:
        if k8s_effect(taint.get("effect"), eks) == "PreferNoSchedule" and not tolerates(pod.tolerations, taint, eks):
            return (
                f"its taint {describe_taint(dict(taint))} (PreferNoSchedule) is not tolerated: Karpenter launches from it only "
                "once no other pool holds the pod"
            )
    return None


def _offered(pool: Pool) -> list[Candidate]:
    """The pool's types with an offering its requirements allow (a zone, region and capacity type:
    fits(), nodeclaim.go @6e7eab7a L624-L639)."""
    return [c for c in pool.candidates if c.unoffered is None and c.requirements.meets(pool.requirements)]


def _no_offering(pool: Pool) -> str:
    """Why none of a pool's types has an offering, after Karpenter's NoCompatibleInstanceTypes event
    (scheduling/events.go @6e7eab7a L53-L62; scheduler.go L154-L171 skips the pool)."""
    held = [c.unoffered for c in pool.candidates if c.unoffered is not None]
    if not held:
        missed = sorted(
            {
                str(pool.requirements.by_key[k])
                for c in pool.candidates
                for k in pool.requirements.keys() & c.requirements.keys()
                if not c.requirements.meets(Requirements({k: pool.requirements.by_key[k]}))
            }
        )
        held = [f"none of its {len(pool.candidates)} instance types is offered where {', '.join(missed)}"]
    shown = "; ".join(sorted(set(held))[:3]) + (f" (and {len(set(held)) - 3} more)" if len(set(held)) > 3 else "")
    return f"NodePool requirements filtered out all compatible available instance types: {shown}"


@dataclass
class _Run:
    """One scheduling run's state: the claims built, each pool's limits and reservations left and its offered types."""

    pools: list[Pool]
    daemons: Sequence[PodTemplate]
    cat: Catalog
    claims: list[_Claim] = field(default_factory=list)
    remaining: dict[str, dict[str, int]] = field(default_factory=dict)
    reserved_left: dict[str, int] = field(default_factory=dict)
    offered: dict[str, list[Candidate]] = field(default_factory=dict)
    nodes: Sequence[tuple[Mapping[str, str], karpenter_topology.Held]] = ()  # the groups' nodes kube-scheduler filled
    hostname: str = ""
    joined: list[list[_Claim]] = field(default_factory=list)  # per template, the claims it joined, in order

    def split_off(self, claim: _Claim, one: _Claim) -> None:
        """`one`, a claim of the record `claim`, becomes its own record, just before the rest
        wherever they are listed: the order the claims were built and joined in."""
        claim.count -= 1
        for seq in (self.claims, *self.joined):
            for i in reversed([i for i, c in enumerate(seq) if c is claim]):
                seq.insert(i, one)

    def drop(self, claim: _Claim) -> None:
        """A record whose claims another record now counts."""
        for seq in (self.claims, *self.joined):
            seq[:] = [c for c in seq if c is not claim]

    def where(self, keys: Sequence[str]) -> karpenter_topology.Where:
        """Where pods are now, the claims read live, with the domains of `keys`."""
        pools = [(p.requirements, [c.requirements for c in self.offered[p.name]]) for p in self.pools]
        found = {k: karpenter_topology.domains_of(pools, k) for k in keys}
        return karpenter_topology.Where(
            self.nodes,
            self.claims,
            {k: launchable for k, (launchable, _) in found.items()},
            {k: registered for k, (_, registered) in found.items()},
            self.hostname,
        )


def _schedule(pod: PodTemplate, wanted: int, run: _Run, mine: list[_Claim], refusals: dict[str, str], strict: bool) -> int:
    """Give `wanted` replicas to the claims being built, then to new claims of the pools in order,
    each share of them in the topology domain Karpenter gives it (karpenter_topology.parts);
    `strict`: a pool whose PreferNoSchedule taint the pod does not tolerate is passed over. The
    replicas left."""
    others = [t for claim in run.claims for t, _ in claim.assigned] + [t for _, held in run.nodes for t, _ in held]
    if not karpenter_topology.involved(pod, others):
        return _schedule_share(pod, wanted, run, mine, refusals, strict, _Topology())
    where = run.where(karpenter_topology.keys(pod, others))
    admitted = _pod_requirements(pod, run.pools[0]) if run.pools else Requirements()
    shares, reason = karpenter_topology.parts(pod, wanted, where, admitted)
    left = wanted - sum(n for _, n in shares)
    for domain, n in shares:
        left += _schedule_share(pod, n, run, mine, refusals, strict, _Topology(where, domain))
    if reason:
        for pool in run.pools:
            refusals.setdefault(pool.name, reason)
    return left


def _schedule_share(
    pod: PodTemplate, wanted: int, run: _Run, mine: list[_Claim], refusals: dict[str, str], strict: bool, topology: _Topology
) -> int:
    away = {p.name: why for p in run.pools if strict and (why := _prefers_away(pod, p, run.cat))}
    for claim in sorted(run.claims, key=lambda c: c.pods):
        if wanted == 0:
            break
        if claim.pool.name not in away:
            wanted = _join(pod, wanted, claim, run, mine, topology)
    for pool in run.pools:
        if wanted == 0:
            break
        if pool.name in away:
            refusals[pool.name] = away[pool.name]
            continue
        wanted = _new_claims(pod, wanted, pool, run, mine, refusals, topology)
    return wanted


def _join(pod: PodTemplate, wanted: int, claim: _Claim, run: _Run, mine: list[_Claim], topology: _Topology) -> int:
    """Give replicas to the record's identical claims one after another, each that takes some split
    off as its own record; the replicas left. Once a claim ends as the one before it did, each
    claim left takes as many and ends alike (it reads the same claims and the same pods
    everywhere), so they are counted, not walked. One that takes none means none of them does."""
    last: _Claim | None = None
    while wanted > 0 and claim.count > 0:
        one = claim.one_more()
        added = _add(pod, wanted, one, run.daemons, run.cat, topology=topology)
        if not added:
            break
        wanted -= added
        run.split_off(claim, one)
        if last is None or not last.alike(one):
            last = one
            mine.append(one)
            continue
        run.drop(one)
        more = min(wanted // added, claim.count)
        last.count += 1 + more
        claim.count -= more
        wanted -= more * added
    if claim.count == 0:
        run.drop(claim)
    return wanted


def _each(options: Sequence[Candidate], resource: str) -> int:
    """What a new claim counts against a limit: the largest capacity among its types (subtractMax,
    scheduler.go L1045-L1066)."""
    return max(_counted(c, resource) for c in options)


def _launches(run: _Run, pool: Pool, options: Sequence[Candidate], claims: int) -> None:
    """Count new claims against the pool's limits and its reservations."""
    for resource in run.remaining[pool.name]:
        run.remaining[pool.name][resource] -= claims * _each(options, resource)
    if pool.name in run.reserved_left:
        run.reserved_left[pool.name] -= claims


def _alike_left(run: _Run, pool: Pool, options: Sequence[Candidate], most: int) -> int:
    """How many more claims (up to `most`) the pool's limits and reservations leave every one of
    `options` to: those see the same types, so they are built alike."""
    bounds = [most, *([run.reserved_left[pool.name]] if pool.name in run.reserved_left else [])]
    for resource, left in run.remaining[pool.name].items():
        if (each := _each(options, resource)) > 0:
            bounds.append(left // each)
    return min(bounds)


def _new_claims(
    pod: PodTemplate, wanted: int, pool: Pool, run: _Run, mine: list[_Claim], refusals: dict[str, str], topology: _Topology
) -> int:
    """New claims of the pool while it holds replicas of the pod; the replicas left."""
    reason = (
        pool.refused
        or pool.passed_over
        or pool.ami_problem
        or (_no_offering(pool) if pool.candidates and not run.offered[pool.name] else None)
    )
    if reason:
        refusals[pool.name] = reason
        return wanted
    last: _Claim | None = None
    while wanted > 0:
        if run.reserved_left.get(pool.name, 1) <= 0:
            refusals[pool.name] = f"held back by its capacity reservations: all {pool.reserved} reserved instances are launched"
            break
        options = [c for c in run.offered[pool.name] if _fits_limits(c, run.remaining[pool.name])]
        if not options:
            refusals[pool.name] = (
                f"held back by its limits ({_limits(pool)})"
                if pool.candidates
                else "its requirements admit no instance type of the catalog"
            )
            break
        claim = _Claim(pool, options, pool.requirements)
        why: dict[str, int] = {}
        added = _add(pod, wanted, claim, run.daemons, run.cat, why, topology)
        if not added and (problem := _incompatible(pod, claim, topology.domain)):
            refusals[pool.name] = problem
            break
        if not added:
            # Karpenter's own error where minValues or the topology refuse the claim, else the types' reasons counted.
            said = next((r for r in why if r.startswith((MIN_VALUES, karpenter_topology.UNSATISFIABLE))), None)
            top = sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
            refusals[pool.name] = said or f"none of its {len(options)} instance types holds the pod: " + "; ".join(
                f"{n} {r}" for r, n in top
            )
            break
        _launches(run, pool, options, 1)
        wanted -= added
        if last is None or not last.alike(claim):
            run.claims.append(claim)
            mine.append(claim)
            last = claim
            continue
        # As the one before: the claims after it see the same types and the same pods everywhere
        # (_join), while the limits leave them every type, so they are counted.
        more = _alike_left(run, pool, options, wanted // added)
        _launches(run, pool, options, more)
        last.count += 1 + more
        wanted -= more * added
    return wanted


def _give_out(
    wanted_by: Sequence[tuple[PodTemplate, int]],
    pools: Sequence[Pool],
    daemons: Sequence[PodTemplate],
    cat: Catalog,
    nodes: Sequence[tuple[Mapping[str, str], karpenter_topology.Held]] = (),
):
    """Karpenter's scheduling loop over (template, replicas left Pending): the claims it builds, and
    per template the claims holding it, the replicas left and each pool's reason. What the pools
    leave Pending is tried again tolerating PreferNoSchedule taints, Karpenter's last relaxation."""
    ordered = order(pools)
    run = _Run(
        ordered,
        daemons,
        cat,
        remaining={p.name: dict(p.limits) for p in ordered},
        reserved_left={p.name: p.reserved for p in ordered if p.reserved is not None},
        offered={p.name: _offered(p) for p in ordered},
        nodes=nodes,
        hostname=cat.facts.eks.well_known_labels.hostname,
    )
    outcomes = []
    for pod, wanted in sorted(wanted_by, key=lambda pw: (-pw[0].requests.get("cpu", 0), -pw[0].requests.get("memory", 0))):
        refusals: dict[str, str] = {}
        mine: list[_Claim] = []
        run.joined.append(mine)  # kept live: a later template splits the records it joined
        outcomes.append((pod, mine, _try(pod, wanted, run, mine, refusals), refusals))
    # Karpenter requeues a pod it cannot place behind the others and tries it again until a round
    # over the queue places none (queue.go @6e7eab7a L45-L66): a pod whose affinity target comes
    # later in the queue lands once the target has.
    progressed = True
    while progressed:
        progressed = False
        for i, (pod, mine, left, refusals) in enumerate(outcomes):
            again = _try(pod, left, run, mine, {}) if left else left
            if again < left:
                outcomes[i], progressed = (pod, mine, again, refusals), True
    # A claim joined in several tries, once.
    return run.claims, [(pod, list({id(c): c for c in mine}.values()), left, why) for pod, mine, left, why in outcomes]


def _try(pod: PodTemplate, wanted: int, run: _Run, mine: list[_Claim], refusals: dict[str, str]) -> int:
    """The replicas the pools leave Pending, tried again tolerating PreferNoSchedule taints."""
    wanted = _schedule(pod, wanted, run, mine, refusals, strict=True)
    if wanted and any(_prefers_away(pod, p, run.cat) for p in run.pools):
        wanted = _schedule(pod, wanted, run, mine, refusals, strict=False)
    return wanted


def _nodes_by_pool(claims: Sequence[_Claim]) -> dict[str, int]:
    found: dict[str, int] = {}
    for claim in claims:
        found[claim.pool.name] = found.get(claim.pool.name, 0) + claim.count
    return found


def _shared_view(pool: Pool, resource: str, replicas: int) -> Pool:
    """The pool as its nodes will be once the device plugin time-slices each GPU: the count
    Karpenter does not see (a type a NodeOverlay already sets is left as it is)."""
    candidates = tuple(
        c
        if resource not in c.shape.allocatable or resource in c.overlaid
        else replace(c, shape=replace(c.shape, allocatable={**c.shape.allocatable, resource: c.shape.allocatable[resource] * replicas}))
        for c in pool.candidates
    )
    return replace(pool, candidates=candidates)


def _single_unit(pool: Pool, resource: str) -> Pool:
    candidates = tuple(
        replace(c, shape=replace(c.shape, single_unit_resources=c.shape.single_unit_resources | {resource}))
        if resource in c.shape.allocatable
        else c
        for c in pool.candidates
    )
    return replace(pool, candidates=candidates)


def _claims_refusals(pools: Sequence[Pool], cat: Catalog) -> list[dra_rules.Verdict]:
    """Each distinct provisioner's verdict on launching nodes for pods with DRA claims: mandatory where
    its known version does not, advisory where gpufleet cannot judge the version, or where the
    provisioner does and gpufleet does not simulate its DRA scheduling."""
    verdicts = []
    for kind, version in dict.fromkeys(p.provisioner for p in pools):
        verdict = dra_rules.provisioner_problem(kind, version, cat.facts.dra)
        named = cat.facts.dra.provisioners[kind].named
        verdicts.append(
            verdict or dra_rules.Verdict(f"{named} {version} provisions nodes for DRA claims; gpufleet does not simulate how", False)
        )
    return verdicts


def provision(
    placed: Sequence[Placement],
    pools: Sequence[Pool],
    daemons: Sequence[PodTemplate],
    sharing: Mapping | None = None,
    cat: Catalog | None = None,
    shapes: Sequence[NodeShape] = (),
) -> list[dict]:
    """Give the replicas the node groups leave Pending to the NodePools, as Karpenter's scheduler
    does: templates largest first (CPU, then memory), each replica to a NodeClaim being built (fewest
    pods first) while one of its types holds it, else to a new NodeClaim of the first pool, in
    weight order, that admits it within its limits (and, reserved only, its reservations' instances). A pool's limits lose, per new NodeClaim, the
    largest capacity among its types (subtractMax, scheduler.go L1045-L1066). Each Placement gains
    `provisioned` (pool, type, nodes, replicas) and becomes `provisioned` when every replica is held,
    or stays Pending with each pool's reason. Returns the nodes launched: per pool and type, how many.

    With the device plugin time-slicing `nvidia.com/gpu` (`sharing`: its resource and replicas),
    Karpenter still counts physical GPUs (aws/karpenter-provider-aws#3376): where the same pods
    would need fewer nodes once each GPU is shared, each pod provisioned from that pool says so.

    The pods kube-scheduler placed on the groups' nodes (`shapes` gives their labels) count in the
    topology domains Karpenter spreads over (countDomains, topology.go @v1.14.1 L361-L455).

    Identical claims are counted, not walked (_Claim.count): the plan is the one claim-by-claim
    building gives, and a huge replica count costs a few passes."""
    if not pools:
        return []
    cat = k8s_scheduler.given(cat)
    resource, replicas = (sharing or {}).get("resource"), (sharing or {}).get("replicas", 1)
    if resource and (sharing or {}).get("failRequestsGreaterThanOne"):
        # The device plugin's config is the cluster's: the kubelet of every node Karpenter launches
        # refuses a request of more than one shared GPU too.
        pools = [_single_unit(p, resource) for p in pools]
    results = {id(r.pod): r for r in placed if r.status == PENDING and r.pod.replicas is not None and r.pending > 0}
    refusals = _claims_refusals(pools, cat)
    for r in [r for r in results.values() if r.pod.claims]:
        if all(v.mandatory for v in refusals):
            # Every pool's provisioner refuses pods with claims: they stay Pending, for their claims.
            r.message = "; ".join([r.message, *(v.message for v in refusals)])
            r.claims_refused = True
        else:
            r.notes.append(karpenter_gaps.claims_note(cat, [v.message for v in refusals if not v.mandatory]))
        del results[id(r.pod)]
    wanted = [(r.pod, r.pending) for r in results.values()]
    before = {id(pod): n for pod, n in wanted}
    filled = karpenter_topology.filled(placed, shapes)
    claims, outcomes = _give_out(wanted, pools, daemons, cat, filled)
    # Recorded once every template is given out: a later one narrows the types of the claims it joins.
    for pod, mine, left, refusals in outcomes:
        _record(results[id(pod)], mine, left, refusals)
        results[id(pod)].notes.extend(_unknown_labels(pod, mine))
        touched = [p for p in pools if p.name in refusals or any(c.pool is p for c in mine)]
        results[id(pod)].notes.extend(karpenter_gaps.notes(pod, touched, results[id(pod)].provisioned, pools, shapes, cat))
        missing = sorted({r for claim in mine for r in _unadvertised(pod, claim, daemons, cat)})
        if missing:
            result = results[id(pod)]
            result.status, result.pending = PENDING, before[id(pod)]
            result.message = "; ".join(
                m
                for m in (
                    result.message,
                    (
                        f"Karpenter launches nodes for it, but no device plugin of the plan runs on them to advertise {', '.join(missing)}: "
                        "its pods stay Pending there"
                    ),
                )
                if m
            )
    if resource and replicas > 1:
        shared, _ = _give_out(wanted, [_shared_view(p, resource, replicas) for p in pools], daemons, cat, filled)
        fewer = _nodes_by_pool(shared)
        for pool, nodes in _nodes_by_pool(claims).items():
            if fewer.get(pool, 0) < nodes:
                for result in results.values():
                    if any(p["nodePool"] == pool for p in result.provisioned):
                        result.notes.append(
                            f"Karpenter counts physical GPUs (aws/karpenter-provider-aws#3376): NodePool {pool} launches {nodes} nodes where "
                            f"{fewer.get(pool, 0)} hold these pods once the device plugin shares each GPU {replicas} ways; a NodeOverlay giving "
                            f"its types' {resource} capacity corrects what Karpenter sees"
                        )
    return [
        {"nodePool": pool, "instanceType": type_, "nodes": sum(c.count for c in alike), "chosen": chosen}
        for (pool, type_), (alike, chosen) in _by_type(claims).items()
    ]


def _by_type(claims: Sequence[_Claim]) -> dict[tuple[str, str], tuple[list[_Claim], str]]:
    """The claims per pool and type launched, with the rule that named the type (the claim of the
    most types' rule)."""
    found: dict[tuple[str, str], tuple[list[_Claim], str, int]] = {}
    for claim in claims:
        launched, rule = _launch(claim)
        key = (claim.pool.name, launched.shape.instance_type)
        alike, chosen, widest = found.setdefault(key, ([], rule, len(claim.options)))
        alike.append(claim)
        if len(claim.options) > widest:
            found[key] = (alike, rule, len(claim.options))
    return {key: (alike, chosen) for key, (alike, chosen, _) in found.items()}


def _unknown_labels(pod: PodTemplate, claims: Sequence[_Claim]) -> list[str]:
    """A note for each pool the pod was provisioned from whose nodes it selects by a label gpufleet
    cannot derive: the node is assumed to carry a value the pod allows, so the verdict is advisory."""
    notes = []
    for pool in {c.pool.name: c.pool for c in claims}.values():
        keys = sorted(_pod_requirements(pod, pool).keys() & pool.unknown_keys)
        if keys:
            notes.append(
                f"it selects {', '.join(keys)}, which Karpenter reads from the provider's bandwidth table or the node class's subnets, "
                f"not from EC2's record: whether NodePool {pool.name}'s nodes carry a value it allows is not judged"
            )
    return notes


def _record(result: Placement, claims: list[_Claim], wanted: int, refusals: dict[str, str]) -> None:
    result.provisioned = [
        {
            "nodePool": pool,
            "instanceType": type_,
            "nodes": sum(c.count for c in alike),
            "placed": sum(n * c.count for c in alike for pod, n in c.assigned if pod is result.pod),
            "candidates": max(len(c.options) for c in alike),
            "chosen": chosen,
        }
        for (pool, type_), (alike, chosen) in _by_type(claims).items()
    ]
    result.pending = wanted
    if wanted == 0:
        result.status, result.message = PROVISIONED, ""
    else:
        said = "; ".join(f"NodePool {pool}: {why}" for pool, why in refusals.items())
        result.message = "; ".join(m for m in (result.message, f"Karpenter launches no node for {wanted}: {said}") if m)


def _limits(pool: Pool) -> str:
    return ", ".join(f"{k} {show(k, v)}" for k, v in sorted(pool.limits.items()))
