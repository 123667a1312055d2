"""kube-scheduler's inter-pod filters over counted nodes: PodTopologySpread (its DoNotSchedule
constraints) and InterPodAffinity (the pod's required affinity and anti-affinity, and the anti-
affinity of the pods already placed), in its words. Read at kubernetes/kubernetes v1.35.0,
pkg/scheduler/framework/plugins/: podtopologyspread/filtering.go (calPreFilterState, minMatchNum,
Filter) and common.go (filterTopologySpreadConstraints, matchNodeInclusionPolicies,
nodeLabelsMatchSpreadConstraints, countPodsMatchSelector); interpodaffinity/filtering.go
(getExistingAntiAffinityCounts, getIncomingAffinityAntiAffinityCounts, satisfyPodAffinity,
satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity, Filter).

Nodes come as k8s_scheduler's states: `count` identical nodes, each holding `tally[owner]` pods of
each template. A domain of kubernetes.io/hostname is one node (a state is `count` domains alike);
of any other key, the nodes whose label has one value. Counts are per state and per domain, never
per node or per pod. What the plan cannot tell (a label it does not give, a selector over pods or
namespaces whose labels it does not know) never filters: `notes` names it, and the verdict is
advisory. Preferred terms and ScheduleAnyway constraints are scores, not filters: not modelled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from gpufleet.catalog.catalog import Catalog
from gpufleet.simulate.k8s_filters import affinity_matches, expression_matches, untolerated_taint
from gpufleet.simulate.k8s_shapes import LabelSelector, NodeShape, PodTemplate, PodTerm, Spread

# InterPodAffinity's reasons (interpodaffinity/filtering.go, the ErrReason constants).
AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
# PodTopologySpread's (podtopologyspread/plugin.go, ErrReasonConstraintsNotMatch and ErrReasonNodeLabelNotMatch).
SPREAD = "node(s) didn't match pod topology spread constraints"
SPREAD_LABEL = f"{SPREAD} (missing required label)"

UNKNOWN = "\0unknown"  # a label every node has, whose value the plan does not give
HOST = "\0host"  # kubernetes.io/hostname: each node its own domain
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")  # metav1.LabelSelectorOperator


class Placed(Protocol):
    """A state of nodes as k8s_scheduler keeps them."""

    @property
    def shape(self) -> NodeShape: ...
    @property
    def count(self) -> int: ...
    @property
    def tally(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class Cluster:
    """The nodes as placed so far, the templates their tallies name, and the hostname label's key."""

    nodes: Sequence[Placed]
    templates: Mapping[str, PodTemplate]
    hostname: str
    cat: Catalog


def namespace_of(owner: str) -> str:
    """The namespace of a template's pods, from its owner ('Deployment kube-system/coredns')."""
    parts = owner.split(" ", 2)
    return parts[1].split("/", 1)[0] if len(parts) > 1 and "/" in parts[1] else "default"


def everything(selector: LabelSelector) -> bool:
    return not selector.nothing and not selector.match_labels and not selector.expressions


def selector_matches(selector: LabelSelector, labels: Mapping[str, str] | None) -> bool | None:
    """None where the pod's labels are not known."""
    if selector.nothing:
        return False
    if labels is None:
        return None if not everything(selector) else True
    if any(labels.get(k) != v for k, v in selector.match_labels.items()):
        return False
    return all(e.get("operator") in OPERATORS and expression_matches(e, labels) for e in selector.expressions)


def term_matches(term: PodTerm, pod: PodTemplate) -> bool | None:
    """fwk.AffinityTerm.Matches: the pod is in one of the term's namespaces and its selector matches."""
    if not (term.all_namespaces or namespace_of(pod.owner) in term.namespaces):
        return False
    return selector_matches(term.selector, pod.labels)


def domain(node: Placed, key: str, cluster: Cluster) -> str | None:
    """The node's value of the topology key: HOST for the hostname, UNKNOWN where every node has
    the label but the plan does not give its value, None where the node lacks it."""
    if key == cluster.hostname:
        return HOST
    if key in node.shape.labels:
        return str(node.shape.labels[key])
    return UNKNOWN if key in node.shape.uncertain_labels else None


def _per_node(node: Placed, cluster: Cluster, match: Callable[[PodTemplate], bool | None]) -> int:
    """Pods on one node of the state that `match` (a pod it cannot judge is not counted: `notes`)."""
    return sum(n for owner, n in node.tally.items() if match(cluster.templates[owner]))


# --- PodTopologySpread --------------------------------------------------------------------------


def _eligible(pod: PodTemplate, node: Placed, c: Spread, cluster: Cluster) -> bool:
    """calPreFilterState's nodes: every constraint's key present (every node has its hostname),
    and the inclusion policies: nodeAffinityPolicy Honor (the default) takes only the nodes the
    pod's node affinity admits, nodeTaintsPolicy Ignore (the default) tainted nodes too."""
    if any(domain(node, s.topology_key, cluster) is None for s in pod.spread):
        return False
    if c.honor_affinity and not affinity_matches(pod, node.shape.labels, cluster.cat):
        return False
    return not (c.honor_taints and untolerated_taint(pod, node.shape, cluster.cat) is not None)


@dataclass(frozen=True)
class _Counts:
    """One constraint's counts: per state (pods per node), per domain value, and the global minimum."""

    eligible: list[bool]
    per_node: list[int]
    by_value: dict[str, int]
    minimum: int


def _spread_counts(pod: PodTemplate, c: Spread, cluster: Cluster) -> _Counts | None:
    """None where a domain of the key is not known for an eligible node (the constraint is not
    judged: `notes`). countPodsMatchSelector counts the pod's own namespace only, and an empty
    selector counts no pod."""
    ns = namespace_of(pod.owner)
    hostname = c.topology_key == cluster.hostname
    eligible, per_node, by_value = [], [], Counter[str]()
    for node in cluster.nodes:
        ok = _eligible(pod, node, c, cluster)
        value = domain(node, c.topology_key, cluster)
        if ok and value == UNKNOWN:
            return None
        n = (
            0
            if everything(c.selector)
            else _per_node(node, cluster, lambda t: namespace_of(t.owner) == ns and selector_matches(c.selector, t.labels))
        )
        eligible.append(ok)
        per_node.append(n)
        if ok and value is not None and value != HOST:
            by_value[value] += n * node.count
    if hostname:
        domains = sum(node.count for node, ok in zip(cluster.nodes, eligible, strict=True) if ok)
        counts = [n for n, ok in zip(per_node, eligible, strict=True) if ok]
    else:
        domains, counts = len(by_value), list(by_value.values())
    # minMatchNum: fewer eligible domains than minDomains make the global minimum 0.
    minimum = 0 if domains < c.min_domains or not counts else min(counts)
    return _Counts(eligible, per_node, dict(by_value), minimum)


def _judged_spread(pod: PodTemplate) -> list[Spread]:
    return [c for c in pod.spread if not c.unknown and selector_matches(c.selector, pod.labels) is not None]


def spread_reason(pod: PodTemplate, i: int, cluster: Cluster) -> str | None:
    """PodTopologySpread's Filter on the nodes of state `i`: for each constraint, the node has the
    key, and matching pods in its domain + 1 if the pod matches itself - the global minimum stays
    within maxSkew."""
    node = cluster.nodes[i]
    for c in _judged_spread(pod):
        value = domain(node, c.topology_key, cluster)
        if value is None:
            return SPREAD_LABEL
        counts = _spread_counts(pod, c, cluster)
        if counts is None or value == UNKNOWN:
            continue
        if value == HOST:
            matched = counts.per_node[i] if counts.eligible[i] else 0
        else:
            matched = counts.by_value.get(value, 0)
        if matched + int(bool(selector_matches(c.selector, pod.labels))) - counts.minimum > c.max_skew:
            return SPREAD
    return None


# --- InterPodAffinity ---------------------------------------------------------------------------


def _known(terms: Sequence[PodTerm]) -> list[PodTerm]:
    return [t for t in terms if not t.unknown]


def _pairs(
    cluster: Cluster, terms: Sequence[PodTerm], match: Callable[[PodTemplate], bool | None]
) -> tuple[list[int], dict[tuple[str, str], int]]:
    """Pods per node of each state that `match`, and per (key, value) of the terms' keys, as
    topologyToMatchedTermCount (a hostname pair stands for the state's own nodes, counted apart)."""
    per_node = [_per_node(node, cluster, match) for node in cluster.nodes]
    pairs: Counter[tuple[str, str]] = Counter()
    for node, n in zip(cluster.nodes, per_node, strict=True):
        for t in terms:
            value = domain(node, t.topology_key, cluster)
            if n and value not in (None, UNKNOWN, HOST):
                pairs[(t.topology_key, str(value))] += n * node.count
            elif n and value == HOST:
                pairs[(t.topology_key, HOST)] += n * node.count
    return per_node, dict(pairs)


def _in_domain(i: int, key: str, cluster: Cluster, per_node: list[int], pairs: Mapping[tuple[str, str], int]) -> int | None:
    """Matching pods in the domain of state i's nodes for the key; None where it is not known."""
    value = domain(cluster.nodes[i], key, cluster)
    if value == UNKNOWN or value is None:
        return None
    return per_node[i] if value == HOST else pairs.get((key, value), 0)


def affinity_reason(pod: PodTemplate, i: int, cluster: Cluster) -> str | None:
    """InterPodAffinity's Filter on the nodes of state `i`, its three checks in its order."""
    node = cluster.nodes[i]
    terms = _known(pod.pod_affinity)
    if terms:
        per_node, pairs = _pairs(cluster, terms, lambda t: _all_match(terms, t))
        exist = True
        for t in terms:
            value = domain(node, t.topology_key, cluster)
            if value is None:
                return AFFINITY  # every topology label must exist on the node
            found = _in_domain(i, t.topology_key, cluster, per_node, pairs)
            if found is not None and found <= 0:
                exist = False
        # The first of a series of pods with affinity to themselves goes anywhere the labels exist.
        if not exist and not (not pairs and _all_match(terms, pod)):
            return AFFINITY
    anti = _known(pod.pod_anti_affinity)
    for t in anti:
        per_node, pairs = _pairs(cluster, [t], partial(term_matches, t))
        if (_in_domain(i, t.topology_key, cluster, per_node, pairs) or 0) > 0:
            return ANTI_AFFINITY
    if _repelled(pod, i, cluster):
        return EXISTING_ANTI_AFFINITY
    return None


def _all_match(terms: Sequence[PodTerm], pod: PodTemplate) -> bool:
    """podMatchesAllAffinityTerms: false for no terms, and where the plan cannot tell."""
    return bool(terms) and all(term_matches(t, pod) for t in terms)


def _repelled(pod: PodTemplate, i: int, cluster: Cluster) -> bool:
    """satisfyExistingPodsAntiAffinity, negated: a placed pod's anti-affinity term matches the pod,
    and the node shares that term's domain with it."""
    node = cluster.nodes[i]
    for j, other in enumerate(cluster.nodes):
        for owner in other.tally:
            for t in _known(cluster.templates[owner].pod_anti_affinity):
                if not other.tally[owner] or not term_matches(t, pod):
                    continue
                mine, theirs = domain(node, t.topology_key, cluster), domain(other, t.topology_key, cluster)
                if theirs == HOST and i == j or theirs not in (None, UNKNOWN, HOST) and mine == theirs:
                    return True
    return False


def reasons(pod: PodTemplate, i: int, cluster: Cluster) -> list[str]:
    """The plugins in kube-scheduler's default order (PodTopologySpread, then InterPodAffinity)."""
    reason = spread_reason(pod, i, cluster) or affinity_reason(pod, i, cluster)
    return [reason] if reason else []


def involved(pod: PodTemplate, cluster: Cluster) -> bool:
    """Whether the inter-pod filters can refuse the pod anywhere: its own rules, or a placed pod's
    anti-affinity term that matches it."""
    if pod.spread or pod.pod_affinity or any(not t.selector.nothing for t in pod.pod_anti_affinity):
        return True
    return any(term_matches(t, pod) for t in _placed_anti(cluster))


def _placed_anti(cluster: Cluster) -> list[PodTerm]:
    owners = {owner for node in cluster.nodes for owner, n in node.tally.items() if n}
    return [t for owner in owners for t in _known(cluster.templates[owner].pod_anti_affinity)]


def notes(pod: PodTemplate, cluster: Cluster) -> list[str]:
    """What the inter-pod filters could not judge for the pod, each named."""
    found = [
        f"{what}: {t.unknown}"
        for what, terms in (("pod affinity", pod.pod_affinity), ("pod anti-affinity", pod.pod_anti_affinity))
        for t in terms
        if t.unknown
    ]
    found += [f"topology spread over {c.topology_key}: {c.unknown}" for c in pod.spread if c.unknown]
    # A nil selector matches no pod whatever the labels (the Karpenter chart's term, which its
    # template completes, is read as one_per_node instead).
    terms = [t for t in (*pod.pod_affinity, *pod.pod_anti_affinity) if not t.selector.nothing]
    if any(selector_matches(c.selector, pod.labels) is None for c in pod.spread if not c.unknown) or (pod.labels is None and terms):
        found.append("the pod's labels are not in the plan: whether its own selectors match it is not known")
    for c in _judged_spread(pod):
        if _spread_counts(pod, c, cluster) is None:
            found.append(f"topology spread over {c.topology_key}: the value of that label on some nodes is not in the plan; not judged")
    keys = {t.topology_key for t in _known(terms)}
    if any(domain(node, key, cluster) == UNKNOWN for node in cluster.nodes for key in keys):
        found.append(
            f"pod (anti-)affinity over {', '.join(sorted(keys))}: the value of that label on some nodes is not in the plan; not judged there"
        )
    others = _unlabelled(pod, cluster)
    if others:
        found.append(f"the labels of {', '.join(others)} are not in the plan: the pod's selectors may match them")
    if pod.labels is None and _placed_anti(cluster):
        found.append("the pod's labels are not in the plan: placed pods' anti-affinity may repel it")
    return found


def _unlabelled(pod: PodTemplate, cluster: Cluster) -> list[str]:
    """Placed templates whose labels the plan lacks, in a namespace the pod's selectors look in
    (its own for the spread constraints, the terms' for affinity)."""
    spaces = {namespace_of(pod.owner)} if any(not c.selector.nothing for c in pod.spread) else set()
    terms = [t for t in (*pod.pod_affinity, *pod.pod_anti_affinity) if not t.selector.nothing]
    everywhere = any(t.all_namespaces for t in terms)
    spaces |= {n for t in terms for n in t.namespaces}
    owners = {o for node in cluster.nodes for o, n in node.tally.items() if n and cluster.templates[o].labels is None}
    return sorted(o for o in owners if everywhere or namespace_of(o) in spaces)


# --- Bulk: how many replicas each state takes in one step ---------------------------------------


Pieces = list[tuple[int, int]]  # (nodes, pods on each)


def water_level(classes: Sequence[tuple[int, int, int]], wanted: int, ceiling: int) -> tuple[int, int, int]:
    """Water-filling over domains (how many alike, pods they have, room they have): the smallest
    level T <= ceiling the domains filled from the lowest up reach with `wanted` pods (fewer when
    the ceiling holds fewer), how many pods the level below T holds, and how many are placed."""

    def held(level: int) -> int:
        return sum(count * min(max(level - have, 0), room) for count, have, room in classes)

    wanted = min(wanted, held(ceiling))
    low, high = min((have for _, have, _ in classes), default=0), ceiling
    if wanted <= 0:
        return low, 0, 0
    while low < high:
        mid = (low + high) // 2
        if held(mid) >= wanted:
            high = mid
        else:
            low = mid + 1
    return low, held(low - 1), wanted


def split(amount: int, per: int) -> Pieces:
    full, part = divmod(amount, per) if per else (0, 0)
    return [(n, k) for n, k in ((full, per), (1, part)) if n and k]


def _domains(key: str, cluster: Cluster, eligible: Sequence[bool]) -> dict[str, list[int]]:
    """The states of each domain value of a key (not the hostname), among the eligible ones."""
    by: dict[str, list[int]] = {}
    for i, node in enumerate(cluster.nodes):
        value = domain(node, key, cluster)
        if eligible[i] and value not in (None, UNKNOWN, HOST):
            by.setdefault(str(value), []).append(i)
    return by


def _levelled(c: Spread, counts: _Counts, cluster: Cluster, room: Sequence[int], wanted: int) -> list[Pieces]:
    """One self-matching constraint, placed at once. Placements that each pass the Filter reach
    exactly the counts where every domain that grows ends within maxSkew of the final minimum
    (fill the lowest first); filling the lowest domains to the level `water_level` finds reaches the
    most, the domains at the level below it taking one more each until `wanted` are placed."""
    nodes = cluster.nodes
    hostname = c.topology_key == cluster.hostname
    if hostname:
        members = {str(i): [i] for i, ok in enumerate(counts.eligible) if ok}
        have = {k: counts.per_node[idx[0]] for k, idx in members.items()}
        caps = {k: room[idx[0]] for k, idx in members.items()}
        sizes = {k: nodes[idx[0]].count for k, idx in members.items()}
    else:
        members = _domains(c.topology_key, cluster, counts.eligible)
        have = {k: counts.by_value.get(k, 0) for k in members}
        caps = {k: sum(room[i] * nodes[i].count for i in idx) for k, idx in members.items()}
        sizes = dict.fromkeys(members, 1)
    classes = [(sizes[k], have[k], caps[k]) for k in members]
    if sum(sizes.values()) < c.min_domains:
        ceiling = c.max_skew  # the global minimum stays 0
    else:
        ceiling = min((h + r for _, h, r in classes), default=0) + c.max_skew
    level, below, wanted = water_level(classes, wanted, ceiling)
    extra = wanted - below
    pieces: list[Pieces] = [[] for _ in nodes]
    for k, idx in members.items():
        base = min(max(level - 1 - have[k], 0), caps[k])
        bumped = min(extra, sizes[k]) if have[k] + base == level - 1 and base < caps[k] else 0
        extra -= bumped
        if hostname:
            pieces[idx[0]] = [(n, a) for n, a in ((bumped, base + 1), (sizes[k] - bumped, base)) if n and a]
            continue
        share = base + bumped
        for i in idx:
            take = min(share, room[i] * nodes[i].count)
            share -= take
            pieces[i] = split(take, room[i])
    return pieces


def _first_fit(cluster: Cluster, room: Sequence[int], wanted: int, allowances: Sequence[tuple[str, dict[str, int]]]) -> list[Pieces]:
    """States in order, each as full as its room and the domains' allowances (key -> value -> pods)
    let it be; any order of these placements passes the Filter, as no domain passes the minimum
    the step started from plus maxSkew."""
    pieces: list[Pieces] = []
    for i, node in enumerate(cluster.nodes):
        # A node without the key (or whose value the plan lacks) is no domain of it: no limit there.
        values = [(allow, v) for key, allow in allowances if (v := domain(node, key, cluster)) not in (None, UNKNOWN)]
        amount = min(wanted, room[i] * node.count, *(allow.get(str(v), 0) for allow, v in values))
        for allow, v in values:
            allow[str(v)] = allow.get(str(v), 0) - amount
        pieces.append(split(amount, room[i]))
        wanted -= amount
    return pieces


def _counting(pod: PodTemplate, cluster: Cluster) -> tuple[list[tuple[Spread, _Counts]], list[PodTerm]]:
    """The limits the pod's own replicas move: its self-matching spread constraints (an empty
    selector counts no pod) and anti-affinity terms."""
    spread = []
    for c in _judged_spread(pod):
        counts = _spread_counts(pod, c, cluster)
        if counts is not None and not everything(c.selector) and selector_matches(c.selector, pod.labels):
            spread.append((c, counts))
    return spread, [t for t in _known(pod.pod_anti_affinity) if term_matches(t, pod)]


def step(pod: PodTemplate, cluster: Cluster, room: Sequence[int], wanted: int) -> list[Pieces]:
    """Where up to `wanted` replicas go in one step: per state, (nodes, pods on each) pieces.
    `room` is what one node of each state holds (0 where a filter refuses it)."""
    room = list(room)
    terms = _known(pod.pod_affinity)
    if terms and _all_match(terms, pod) and not _pairs(cluster, terms, lambda t: _all_match(terms, t))[1]:
        # The first of a series with affinity to itself: where it lands decides the rest.
        first = next((i for i, r in enumerate(room) if r), None)
        return [[(1, 1)] if i == first else [] for i in range(len(room))]
    spread, anti = _counting(pod, cluster)
    allowances: list[tuple[str, dict[str, int]]] = []
    for t in anti:
        if t.topology_key == cluster.hostname:
            room = [min(r, 1) for r in room]
        else:
            allowances.append((t.topology_key, dict.fromkeys(_domains(t.topology_key, cluster, [True] * len(room)), 1)))
    if len(spread) == 1 and not allowances:
        c, counts = spread[0]
        return _levelled(c, counts, cluster, [r if counts.eligible[i] else 0 for i, r in enumerate(room)], wanted)
    for c, counts in spread:
        if c.topology_key == cluster.hostname:
            room = [min(r, max(0, counts.minimum + c.max_skew - counts.per_node[i])) for i, r in enumerate(room)]
        else:
            values = _domains(c.topology_key, cluster, counts.eligible)
            allowances.append((c.topology_key, {v: max(0, counts.minimum + c.max_skew - counts.by_value.get(v, 0)) for v in values}))
    return _first_fit(cluster, room, wanted, allowances)
