"""Karpenter's topology over the NodeClaims it builds: a pod's hard topology spread constraints
(DoNotSchedule) and required pod affinity and anti-affinity, and the anti-affinity of the pods
already given a node, as kubernetes-sigs/karpenter v1.14.1 pkg/controllers/provisioning/scheduling
holds them ("topology.go", "topologygroup.go" below are that folder's files at the tag).

A domain is a value of the topology key. For the hostname each NodeClaim is its own, new one:
its global minimum is always 0, since Karpenter can always create another (topologygroup.go
L238-L252, L300-L304), so a claim takes replicas while its own count stays within maxSkew
(`claim_room`). For any other key (zone, capacity type, a pool's custom label) the domains are
the values the pools' requirements and their types' offerings allow (buildDomainGroups,
topology.go L105-L144) and those of the nodes in the plan (countDomains, L361-L390); the pods
kube-scheduler placed on the nodes and those given to the claims so far count in them. Karpenter
gives each replica the least-filled domain its claim allows (nextDomainTopologySpread,
topologygroup.go L224-L298), so the replicas of a template fill the domains from the lowest up,
counted arithmetically (k8s_topology.water_level), and each share is scheduled with its domain
as a requirement (`parts`). Anti-affinity takes only empty domains (L403-L439); affinity only
domains holding a match, or, for the first of a series matching itself, one domain
(nextDomainAffinity, L323-L388). A domain no pool can launch in has no room.

What kube-scheduler's plan cannot tell (a pod's labels, a selector known after apply) counts no
pod, as in k8s_topology, whose notes name it. nodeAffinityPolicy and nodeTaintsPolicy are not
read here: every domain the pod's own requirements admit counts (Karpenter's TopologyNodeFilter
narrows them further); karpenter_gaps names them on the pod, and a rule over a key with no known
domain, which is not judged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from gpufleet.rules.karpenter_requirement import IN, NOT_IN, requirement
from gpufleet.rules.karpenter_requirements import Requirements
from gpufleet.simulate.k8s_shapes import NodeShape, Placement, PodTemplate, PodTerm, Spread
from gpufleet.simulate.k8s_topology import namespace_of, selector_matches, term_matches, water_level

Held = Sequence[tuple[PodTemplate, int]]  # a claim's (or a node group's) pods of each template


class Claimed(Protocol):
    """NodeClaims being built, as the topology reads them: `count` identical ones."""

    @property
    def requirements(self) -> Requirements: ...
    @property
    def assigned(self) -> Held: ...
    @property
    def count(self) -> int: ...


@dataclass(frozen=True)
class Where:
    """Where pods are, as the topology counts them: the nodes kube-scheduler filled (their labels
    and pods) and the claims being built (their requirements and pods)."""

    nodes: Sequence[tuple[Mapping[str, str], Held]]
    claims: Sequence[Claimed]  # read live: a claim's pods count as soon as it takes them
    launchable: Mapping[str, frozenset[str]]  # key -> the domains some pool launches a type in
    registered: Mapping[str, frozenset[str]]  # key -> every domain Karpenter knows (pools' requirements too)
    hostname: str


def domains_of(
    pools_requirements: Iterable[tuple[Requirements, Sequence[Requirements]]], key: str
) -> tuple[frozenset[str], frozenset[str]]:
    """The domains of a key some pool's offered types launch in (the pool's requirement
    intersected with the type's), and those buildDomainGroups registers (L105-L144: those, and a
    pool's own In values)."""
    launchable: set[str] = set()
    registered: set[str] = set()
    for pool, types in pools_requirements:
        for t in types:
            held = pool.get(key).intersection(t.get(key)) if pool.has(key) or t.has(key) else None
            if held is not None and held.operator() == IN:
                launchable |= held.values
        if pool.has(key) and pool.get(key).operator() == IN:
            registered |= pool.get(key).values
    return frozenset(launchable), frozenset(launchable | registered)


def _spreads(pod: PodTemplate, spread: Spread) -> Callable[[PodTemplate], bool]:
    """countPodsMatchSelector's pods: the constraint's namespace (the pod's own) and selector."""
    ns = namespace_of(pod.owner)
    return lambda t: namespace_of(t.owner) == ns and bool(selector_matches(spread.selector, t.labels))


def _terms(term: PodTerm) -> Callable[[PodTemplate], bool]:
    return lambda t: bool(term_matches(term, t))


def _on(held: Held, match: Callable[[PodTemplate], bool]) -> int:
    return sum(n for t, n in held if match(t))


def counts(where: Where, key: str, match: Callable[[PodTemplate], bool], anti: bool = False) -> Counter[str]:
    """Matching pods per domain of a key (not the hostname): on the nodes with that label, and on
    the claims whose requirements hold one value of it, or for anti-affinity any value, since a
    pod blocks every domain its claim may still land in (Record, topology.go L197-L220)."""
    found: Counter[str] = Counter()
    for labels, held in where.nodes:
        if key in labels:
            found[str(labels[key])] += _on(held, match)
    for claim in where.claims:
        r = claim.requirements.get(key)
        if r.operator() == IN and (len(r.values) == 1 or anti):
            for value in r.values:
                found[value] += _on(claim.assigned, match) * claim.count
    return found


def _judged(pod: PodTemplate) -> tuple[list[Spread], list[PodTerm], list[PodTerm]]:
    spread = [c for c in pod.spread if not c.unknown and not c.selector.nothing]
    return spread, [t for t in pod.pod_affinity if not t.unknown], [t for t in pod.pod_anti_affinity if not t.unknown]


def claim_room(pod: PodTemplate, held: Held, where: Where) -> int | None:
    """The replicas of the template a claim holding `held` may still take by the hostname rules
    (None: they set no bound): a spread's count on it within maxSkew (L238-L252), no match for an
    anti-affinity term and one replica where it matches itself (L412-L419), a match for an
    affinity term unless none exists yet and it matches itself (L327-L342), and no placed pod
    whose anti-affinity term matches it (inverse anti-affinity, topology.go L330-L356)."""
    spread, affinity, anti = _judged(pod)
    room: list[int] = []
    for c in (c for c in spread if c.topology_key == where.hostname):
        here = _on(held, _spreads(pod, c))
        room.append(c.max_skew - here if selector_matches(c.selector, pod.labels) else (0 if here > c.max_skew else 2**62))
    for t in (t for t in anti if t.topology_key == where.hostname):
        room.append(0 if _on(held, _terms(t)) else 1 if term_matches(t, pod) else 2**62)
    for t in (t for t in affinity if t.topology_key == where.hostname):
        if not _on(held, _terms(t)) and (_anywhere(where, _terms(t)) or not term_matches(t, pod)):
            room.append(0)
    if any(t.topology_key == where.hostname and term_matches(t, pod) for other, n in held if n for t in _judged(other)[2]):
        room.append(0)
    return max(0, min(room)) if room else None


def _anywhere(where: Where, match: Callable[[PodTemplate], bool]) -> bool:
    return any(_on(held, match) for held in _everything(where))


def _everything(where: Where) -> list[Held]:
    return [held for _, held in where.nodes] + [c.assigned for c in where.claims]


Parts = list[tuple[Requirements, int]]  # (the domain as a requirement, replicas)
ANYWHERE = Requirements()  # a pod that requires no domain


def _one(key: str, operator: str, values: Iterable[str]) -> Requirements:
    return Requirements({key: requirement(key, operator, *sorted(values))})


def _domains(key: str, have: Counter[str], where: Where, admitted: Requirements) -> list[str]:
    """The domains of the key the pod's own requirements admit: Karpenter takes the minimum over
    those alone (domainMinCount(podDomains), topologygroup.go L229-L231, L300-L321; podDomains,
    topology.go L229-L232)."""
    return sorted(d for d in where.registered.get(key, frozenset()) | set(have) if admitted.get(key).has(d))


def _level_out(spread: Spread, have: Counter[str], where: Where, wanted: int, admitted: Requirements) -> Parts:
    """Replicas of a self-selecting spread, the least-filled domain first: the level the domains
    reach (a domain no pool launches in has no room; fewer domains than minDomains keep the
    minimum at 0, L317-L319), those below it one more each until all are given."""
    key = spread.topology_key
    domains = _domains(key, have, where, admitted)
    unbounded = wanted + max(have.values(), default=0) + 1
    rooms = {d: unbounded if d in where.launchable.get(key, frozenset()) else 0 for d in domains}
    classes = [(1, have[d], rooms[d]) for d in domains]
    floor = 0 if len(domains) < spread.min_domains else min((have[d] + rooms[d] for d in domains), default=0)
    level, below, placed = water_level(classes, wanted, floor + spread.max_skew)
    extra = placed - below
    parts: Parts = []
    for d in domains:
        share = min(max(level - 1 - have[d], 0), rooms[d])
        if extra and have[d] + share == level - 1 and share < rooms[d]:
            share, extra = share + 1, extra - 1
        if share:
            parts.append((_one(key, IN, [d]), share))
    return parts


def _allowed_spread(spread: Spread, have: Counter[str], where: Where, admitted: Requirements) -> Requirements:
    """A spread that does not select the pod: the domains already within maxSkew (L274-L291)."""
    domains = _domains(spread.topology_key, have, where, admitted)
    low = 0 if len(domains) < spread.min_domains else min((have[d] for d in domains), default=0)
    return _one(spread.topology_key, IN, [d for d in domains if have[d] - low <= spread.max_skew])


def parts(pod: PodTemplate, wanted: int, where: Where, admitted: Requirements = ANYWHERE) -> tuple[Parts, str]:
    """The replicas by domain requirement for the rules over keys other than the hostname, and
    Karpenter's reason for those left without one (topologyError, topology.go L145-L158);
    `admitted`: the pod's own requirements (its podDomains)."""
    spread, affinity, anti = _judged(pod)
    narrowed = Requirements()
    shares: Parts | None = None
    for c in (c for c in spread if c.topology_key != where.hostname):
        have = counts(where, c.topology_key, _spreads(pod, c))
        if not _known(c.topology_key, have, where):
            continue
        if shares is None and selector_matches(c.selector, pod.labels):
            shares = _level_out(c, have, where, wanted, admitted)
        else:
            narrowed = narrowed.merged(_allowed_spread(c, have, where, admitted))
    for t in (t for t in anti if t.topology_key != where.hostname):
        have = counts(where, t.topology_key, _terms(t), anti=True)
        taken = [d for d, n in have.items() if n]
        if not _known(t.topology_key, have, where):
            continue
        if shares is None and term_matches(t, pod):
            free = sorted(where.launchable.get(t.topology_key, frozenset()) - set(taken))
            shares = [(_one(t.topology_key, IN, [d]), 1) for d in free[:wanted]]
        elif taken:
            narrowed = narrowed.merged(_one(t.topology_key, NOT_IN, taken))
    for t in (t for t in affinity if t.topology_key != where.hostname):
        matched = counts(where, t.topology_key, _terms(t))
        if not _known(t.topology_key, matched, where):
            continue
        # nextDomainAffinity (topologygroup.go L323-L388): a domain holding a match the pod admits,
        # else, where the pod matches itself, the first domain it admits.
        admits = admitted.get(t.topology_key).has
        occupied = [d for d, n in matched.items() if n and admits(d)]
        launchable = sorted(where.launchable.get(t.topology_key, frozenset()))
        first = [d for d in launchable if admits(d)][:1] if term_matches(t, pod) else []
        narrowed = narrowed.merged(_one(t.topology_key, IN, occupied or first))
    for other, key in _repelling(pod, where):
        narrowed = narrowed.merged(_one(key, NOT_IN, other))
    found = [(narrowed.merged(r), n) for r, n in (shares if shares is not None else [(Requirements(), wanted)])]
    # A domain requirement left with no value (In nothing, or In a domain another rule excludes) places none.
    found = [(r, n) for r, n in found if all(x.complement or x.values for x in r.by_key.values())]
    given = sum(n for _, n in found)
    return found, "" if given >= wanted else unsatisfiable(pod, where)


def _owned_by(owner: str, pod: PodTemplate) -> bool:
    return pod.owner == owner


def _known(key: str, have: Counter[str], where: Where) -> bool:
    """Whether any domain of the key is known: where no pool's types say their zones (the region
    not in the plan) and no node holds the label, the rule is not judged (k8s_topology's notes)."""
    return bool(where.registered.get(key) or have)


def _repelling(pod: PodTemplate, where: Where) -> list[tuple[list[str], str]]:
    """Domains of placed pods whose anti-affinity term (not on the hostname) matches the pod."""
    found = []
    templates = {t.owner: t for held in _everything(where) for t, n in held if n}
    for other in templates.values():
        for t in _judged(other)[2]:
            if t.topology_key != where.hostname and term_matches(t, pod):
                taken = [d for d, n in counts(where, t.topology_key, partial(_owned_by, other.owner), anti=True).items() if n]
                if taken:
                    found.append((taken, t.topology_key))
    return found


UNSATISFIABLE = "unsatisfiable topology constraint for"


def unsatisfiable(pod: PodTemplate, where: Where | None, on_hostname: bool = False) -> str:
    """topologyError's words (topology.go L153-L158; TopologyType.String, topologygroup.go L43-L53),
    the domain counts left out: the pod's first rule over the hostname, or over another key, else
    a placed pod's anti-affinity."""
    spread, affinity, anti = _judged(pod)
    kinds = [("topology spread", c.topology_key) for c in spread] + [("pod affinity", t.topology_key) for t in affinity]
    kinds += [("pod anti-affinity", t.topology_key) for t in anti]
    hostname = where.hostname if where is not None else ""
    kind, key = next(((k, key) for k, key in kinds if (key == hostname) == on_hostname), ("pod anti-affinity", hostname))
    return f"{UNSATISFIABLE} {kind}, key={key}"


def _repelled_by(pod: PodTemplate, others: Iterable[PodTemplate]) -> list[PodTerm]:
    # Most pods have no anti-affinity: they are passed over before anything is judged of them.
    repelling = {id(o): o for o in others if o.pod_anti_affinity}
    return [t for o in repelling.values() for t in _judged(o)[2] if term_matches(t, pod)]


def filled(placed: Sequence[Placement], shapes: Sequence[NodeShape]) -> list[tuple[Mapping[str, str], Held]]:
    """Each node group's labels and the replicas kube-scheduler placed on its nodes."""
    labels = {s.group: s.labels for s in shapes}
    held: dict[str, list[tuple[PodTemplate, int]]] = {}
    for r in placed:
        for group, n in r.placed.items():
            if r.pod.replicas is not None and n and group in labels:
                held.setdefault(group, []).append((r.pod, n))
    return [(labels[g], pods) for g, pods in held.items()]


def involved(pod: PodTemplate, others: Iterable[PodTemplate]) -> bool:
    """Whether Karpenter's topology can bound the template: its own rules, or the anti-affinity
    term of a pod already given a place that matches it."""
    spread, affinity, anti = _judged(pod)
    return bool(spread or affinity or anti or _repelled_by(pod, others))


def keys(pod: PodTemplate, others: Iterable[PodTemplate]) -> list[str]:
    """The topology keys the template's rules, and the placed pods' terms that repel it, count over."""
    spread, affinity, anti = _judged(pod)
    found = [c.topology_key for c in spread] + [t.topology_key for t in (*affinity, *anti, *_repelled_by(pod, others))]
    return sorted(set(found))
