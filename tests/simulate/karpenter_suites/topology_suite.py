"""kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/topology_test.go @6e7eab7a
(tests/fixtures/karpenter/scheduling_topology_test.go.txt): each `It` that a plan can hold, as a row
run through gpufleet's simulator; the rest left out by reason (left_out.yaml, the census).

Stand-ins: suite.py (the fake default types). The fake offers each type in test-zone-1..3 only
(fake/instancetype.go @6e7eab7a L113-L157): the rows name the region (us-west-2, whose four zones
the stand-ins are offered in) and the suite's NodePool keeps the three zones the fakes stand for.
Upstream's `UnschedulablePods(options, n)` (n identical pods sharing labels) is a Deployment of n
replicas here, one verdict for all. What a row compares: scheduled or not (PARTIAL: some replicas
Pending) and the node count. ExpectSkew's domain counts are not in gpufleet's output; a row reads
them as the node count where each domain takes its own NodeClaim (SKEW in the note). The fakes
have no reserved offering: the rows' EC2NodeClass selects no capacity reservation, so neither do
the stand-ins (karpenter_pools reads reserved capacity only where a node class selects it)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace

from tests.simulate.karpenter_suites.suite import (
    ANY,
    ARCH,
    ARM,
    CAPACITY,
    HOSTNAME,
    LABEL_NOT_CHECKED,
    OFFER,
    PARTIAL,
    REGION,
    SMALL,
    ZONE,
    ZONES,
    Row,
    deployment,
    node_class,
    pods,
    req,
    spec,
)
from tests.simulate.karpenter_suites.suite import pool as _pool

FIXTURE = "scheduling_topology_test.go.txt"

ZONES_123 = ("test-zone-1", "test-zone-2", "test-zone-3")
LABELS = {"test": "test"}  # the suite's `labels` (L39)
S2 = {"security": "s2"}
SKEW = "its ExpectSkew read as the node count (one NodeClaim per domain)"
SAME_NODE = "its assertion that two pods share (or do not share) a node is not checked (not in gpufleet's output)"


def pool(*requirements: dict, zones: Sequence[str] = ZONES_123, **kw) -> dict:
    """A NodePool over the stand-ins, kept to the zones the fakes are offered in."""
    return _pool(req(ZONE, "In", *zones), *requirements, types=OFFER, **kw)


# The suite's NodePool (L41-L55): capacity type Exists.
NODE_POOL = pool(req(CAPACITY, "Exists"))


def case(line: int, *workloads: dict, expect: Sequence[str | None], pools: Sequence[dict] = (NODE_POOL,), **kw) -> Row:
    return Row(line, pools=tuple(pools), pods=workloads, expect=tuple(expect), extra=(REGION, node_class()), **kw)


def spread(key: str, skew: int = 1, selector: Mapping[str, str] | None = LABELS, **fields) -> dict:
    """A topologySpreadConstraint (DoNotSchedule unless `fields` says otherwise)."""
    found: dict = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", **fields}
    if selector is not None:
        found["labelSelector"] = {"matchLabels": dict(selector)}
    return found


def term(labels: Mapping[str, str], key: str, **fields) -> dict:
    return {"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": key, **fields}


def pod_spec(
    pod: dict | None = None,
    *,
    spreads: Sequence[dict] = (),
    affinity: Sequence[dict] = (),
    anti: Sequence[dict] = (),
    preferred: Sequence[dict] = (),
    anti_preferred: Sequence[dict] = (),
) -> dict:
    """`pod` (a suite.spec) with spread constraints and pod (anti-)affinity terms (preferred ones weight 50)."""
    found = copy.deepcopy(pod) if pod is not None else spec()
    if spreads:
        found["topologySpreadConstraints"] = list(spreads)
    for kind, required, weighted in (("podAffinity", affinity, preferred), ("podAntiAffinity", anti, anti_preferred)):
        rules: dict = {}
        if required:
            rules["requiredDuringSchedulingIgnoredDuringExecution"] = list(required)
        if weighted:
            rules["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": 50, "podAffinityTerm": t} for t in weighted]
        if rules:
            found.setdefault("affinity", {})[kind] = rules
    return found


def group(name: str, count: int, pod: dict, labels: Mapping[str, str] | None = LABELS, namespace: str = "default") -> dict:
    """`count` identical pods with `labels` (None: labels of their own, which no term selects)."""
    found = deployment(name, count, pod, labels)
    found["inputs"]["metadata"]["namespace"] = namespace
    return found


SPREAD_ZONE = pod_spec(spreads=[spread(ZONE)])
SPREAD_HOST = pod_spec(spreads=[spread(HOSTNAME)])
CPU_2 = spec({"cpu": "2"})
NOT_OFFERED = (
    "offerings/capacity type: Karpenter counts only the capacity types its types are offered in (the fake's spot and "
    "on-demand, topology.go L105-L144); gpufleet leaves the pool's `Exists` open to reserved too"
)


def zonal(line: int, *pools: dict, nodes: int) -> Row:
    """Four pods spread over the zones (L108-L231)."""
    return case(line, group("a", 4, SPREAD_ZONE), pools=pools, expect=(ANY,), nodes=nodes, note=SKEW)


ZONE_1 = ZONES["test-zone-1"]
MATCH_ALL = case(445, *pods(1, spec()), expect=(ANY,), nodes=1, note=SKEW)
# The spread selects none of the pods, so it bounds none of them (L465-L471).
INTERDEPENDENT = case(457, group("a", 5, SPREAD_HOST, labels=None), expect=(ANY,), nodes=1)

TOPOLOGY = [
    case(
        58,
        group("a", 1, pod_spec(spreads=[spread("unknown")])),
        *pods(1, spec()),
        expect=(None, ANY),
        gap=(
            "topology key no pool or type defines: gpufleet does not judge the rule (it cannot tell such a key from one whose "
            "domains lie outside the plan); Karpenter finds no domain and refuses the pod (nextDomainTopologySpread, "
            "topologygroup.go @6e7eab7a L229-L298)"
        ),
    ),
    case(92, group("a", 2, pod_spec(spreads=[spread(ZONE, selector=None)])), expect=(ANY,), nodes=1, note=SKEW),
    # Zonal
    zonal(108, NODE_POOL, nodes=3),
    case(
        121,
        group(
            "a", 4, pod_spec(spreads=[{**spread(ZONE, selector=None), "labelSelector": {"matchExpressions": [req("test", "In", "test")]}}])
        ),
        expect=(ANY,),
        nodes=3,
        note=SKEW,
    ),
    zonal(142, pool(), nodes=3),
    zonal(157, pool(zones=ZONES_123[:2]), nodes=2),
    zonal(173, pool(req(CAPACITY, "Exists"), labels={ZONE: ZONE_1}), nodes=1),
    zonal(188, pool(zones=ZONES_123[:2], labels={ZONE: ZONE_1}), nodes=1),
    zonal(204, pool(zones=ZONES_123[:2], labels={ZONE: ZONE_1}), pool(name="b", labels={ZONE: ZONES["test-zone-2"]}), nodes=2),
    MATCH_ALL,
    INTERDEPENDENT,
    case(
        482,
        group("a", 3, pod_spec(spreads=[spread(ZONE, minDomains=3)])),
        pools=(pool(zones=ZONES_123[:2]),),
        expect=(PARTIAL,),
        nodes=2,
        note=SKEW,
    ),
    case(502, group("a", 11, pod_spec(spreads=[spread(ZONE, minDomains=3)])), pools=(pool(),), expect=(ANY,), nodes=3, note=SKEW),
    case(522, group("a", 11, pod_spec(spreads=[spread(ZONE, minDomains=2)])), pools=(pool(),), expect=(ANY,), nodes=3, note=SKEW),
    # Hostname
    case(545, group("a", 4, SPREAD_HOST), expect=(ANY,), nodes=4),
    case(558, group("a", 4, pod_spec(spreads=[spread(HOSTNAME, 4)])), expect=(ANY,), nodes=1),
    case(
        571,
        *(group(app, 2, pod_spec(spreads=[spread(HOSTNAME, selector={"app": app})]), {"app": app}) for app in ("app1", "app2")),
        expect=(ANY, ANY),
        nodes=2,
    ),
    case(
        607,
        *(
            group(app, 2, pod_spec(spec(required=[req(ARCH, "In", arch)]), spreads=[spread(HOSTNAME, selector={"app": app})]), {"app": app})
            for app, arch in (("app1", "amd64"), ("app2", "arm64"))
        ),
        expect=(ANY, ANY),
        nodes=4,
    ),
    # CapacityType
    case(653, group("a", 4, pod_spec(spreads=[spread(CAPACITY)])), expect=(ANY,), nodes=2, note=SKEW),
    case(
        666,
        group("a", 4, pod_spec(spreads=[spread(CAPACITY)])),
        pools=(pool(req(CAPACITY, "In", "spot", "on-demand")),),
        expect=(ANY,),
        nodes=2,
        note=SKEW,
    ),
    # L780 and L792 repeat L445 and L457 in the capacity-type context.
    replace(MATCH_ALL, line=780, note=f"as L445. {SKEW}"),
    replace(INTERDEPENDENT, line=792, note="as L457"),
    # Combined Hostname and Zonal Topology: five domains of a pool label, over two pools.
    case(
        981,
        group("a", 20, pod_spec(spreads=[spread("capacity.spread.4-1")])),
        pools=(
            pool(req(CAPACITY, "In", "spot"), req("capacity.spread.4-1", "In", "2", "3", "4", "5"), name="spot"),
            pool(req(CAPACITY, "In", "on-demand"), req("capacity.spread.4-1", "In", "1"), name="on-demand"),
        ),
        expect=(ANY,),
        nodes=5,
        note=SKEW + "; the capacity-type skew (4, 16) is not checked",
    ),
    # Pool b's zone is a domain its limit of 0 CPU launches nothing in: two pods, the rest Pending.
    case(
        1049,
        group("a", 10, pod_spec(spreads=[spread(ZONE), spread(HOSTNAME, whenUnsatisfiable="ScheduleAnyway")])),
        pools=(pool(zones=ZONES_123[:2]), pool(zones=ZONES_123[2:], name="b", limits={"cpu": "0"})),
        expect=(PARTIAL,),
        nodes=2,
        note=SKEW,
    ),
    # MatchLabelKeys
    case(
        1139,
        *(
            group(f"a{v}", 2, pod_spec(spreads=[spread(HOSTNAME, matchLabelKeys=["test-label"])]), {**LABELS, "test-label": f"value-{v}"})
            for v in "ab"
        ),
        expect=(ANY, ANY),
        nodes=2,
        note=SKEW,
    ),
    case(1168, group("a", 4, pod_spec(spreads=[spread(HOSTNAME, matchLabelKeys=["test-label"])])), expect=(ANY,), nodes=4),
]

TAINT = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
FAKE_LABEL = "fake-label"


def _discovered(policy: str) -> dict:
    return pod_spec(spreads=[spread(FAKE_LABEL, nodeTaintsPolicy=policy)])


# NodeTaintsPolicy, domains discovered from the pools: foo untainted, bar tainted (L1336-L1447).
DISCOVERED = (
    pool(req(CAPACITY, "Exists"), req(FAKE_LABEL, "In", "foo")),
    pool(req(CAPACITY, "Exists"), req(FAKE_LABEL, "In", "bar"), name="tainted", taints=[TAINT]),
)

TAINTS_POLICY = [
    case(1336, group("a", 2, _discovered("Ignore")), pools=DISCOVERED, expect=(PARTIAL,), nodes=1, note=SKEW),
    case(
        1392,
        group("a", 2, _discovered("Honor")),
        pools=DISCOVERED,
        expect=(ANY,),
        nodes=1,
        note=SKEW,
        gap=(
            "nodeTaintsPolicy: Honor is not read, so the tainted pool's domain (bar) counts for pods that do not tolerate it "
            "(TopologyNodeFilter.Matches, topologynodefilter.go @6e7eab7a L68-L79)"
        ),
    ),
    case(
        1448,
        *(
            group(
                f"d{i}",
                (i + 1) * 2,
                pod_spec(
                    spec(tolerations=[{"key": "taint-key", "value": f"nodepool-{i}", "effect": "NoSchedule"}]),
                    spreads=[spread(FAKE_LABEL, nodeTaintsPolicy="Honor")],
                ),
            )
            for i in range(2)
        ),
        pools=tuple(
            pool(
                req(CAPACITY, "Exists"),
                req(FAKE_LABEL, "In", *domains),
                name=f"np{i}",
                taints=[{"key": "taint-key", "value": f"nodepool-{i}", "effect": "NoSchedule"}],
            )
            for i, domains in enumerate((("foo", "bar"), ("foo", "baz")))
        ),
        expect=(ANY, ANY),
        note="its skew (3, 2, 1) is not checked: the node count depends on which pool takes domain foo",
    ),
]

NODE_AFFINITY = [
    case(
        1740,
        group("a", 5, pod_spec(spec(selector={ZONE: "test-zone-1"}), spreads=[spread(ZONE)])),
        group("b", 10, pod_spec(spec(selector={ZONE: "test-zone-2"}), spreads=[spread(ZONE)])),
        expect=(ANY, ANY),
        nodes=2,
        note=SKEW,
    ),
    case(
        1766,
        group("a", 10, pod_spec(spec(required=[req(ZONE, "In", *ZONES_123[:2])]), spreads=[spread(ZONE)])),
        expect=(ANY,),
        nodes=2,
        note=SKEW,
    ),
    case(
        1832,
        group("a", 6, pod_spec(spec(preferred=[(1, [req(ZONE, "In", *ZONES_123[:2])])]), spreads=[spread(ZONE)])),
        expect=(ANY,),
        nodes=3,
        note=SKEW,
    ),
    case(
        1857,
        *(
            group(n, 5, pod_spec(spec(selector={CAPACITY: ct}), spreads=[spread(CAPACITY, whenUnsatisfiable="ScheduleAnyway")]))
            for n, ct in (("a", "spot"), ("b", "on-demand"))
        ),
        expect=(ANY, ANY),
        nodes=2,
        note=SKEW,
    ),
]

SPREAD_10 = group("spread", 10, SPREAD_HOST)

AFFINITY = [
    case(1926, *pods(1, spec(extra={"affinity": {"podAffinity": {}, "podAntiAffinity": {}}})), expect=(ANY,)),
    case(
        1936,
        SPREAD_10,
        group("aff1", 1, spec(), S2),
        group("aff2", 1, pod_spec(affinity=[term(S2, HOSTNAME)]), None),
        expect=(ANY, ANY, ANY),
        note=SAME_NODE,
    ),
    case(
        1970,
        group("aff1", 1, pod_spec(spec({"cpu": "2"}, selector={ARCH: "arm64"}), spreads=[spread(HOSTNAME, selector=S2)]), S2),
        group("aff2", 1, pod_spec(spec({"cpu": "1"}), spreads=[spread(HOSTNAME, selector=S2)], affinity=[term(S2, ARCH)]), S2),
        expect=(ARM, ARM),
        nodes=2,
    ),
    case(2013, group("a", 3, pod_spec(affinity=[term(S2, HOSTNAME)]), S2), expect=(ANY,), nodes=1),
    case(2123, group("a", 3, pod_spec(affinity=[term(S2, ZONE)]), S2), expect=(ANY,), nodes=1),
    case(
        2147,
        group("a", 3, pod_spec(spec(required=[req(ZONE, "In", "test-zone-3")]), affinity=[term(S2, ZONE)]), S2),
        expect=(ANY,),
        nodes=1,
        note=LABEL_NOT_CHECKED,
    ),
    case(
        2178,
        *(
            group(
                f"z{z}",
                1,
                pod_spec(spec(required=[req(ZONE, "In", f"test-zone-{z}")]), affinity=[term({"security": "s1"}, ZONE)]),
                {"security": "s1"},
            )
            for z in (2, 3)
        ),
        expect=(ANY, ANY),
        nodes=2,
        note=LABEL_NOT_CHECKED,
    ),
    case(2231, SPREAD_10, group("aff2", 1, pod_spec(preferred=[term(S2, HOSTNAME)]), None), expect=(ANY, ANY)),
    case(
        2264,
        group("spread", 3, SPREAD_ZONE),
        group("aff", 10, pod_spec(anti_preferred=[term(LABELS, ZONE)]), None),
        expect=(ANY, ANY),
    ),
    # One of its ten rounds: each later round runs beside the nodes the earlier ones launched.
    case(
        2297,
        group("aff2", 1, pod_spec(anti=[term(S2, HOSTNAME)]), None),
        group("aff1", 1, spec(), S2),
        expect=(ANY, ANY),
        nodes=2,
    ),
    case(
        2319,
        *(group(f"z{z}", 1, spec({"cpu": "2"}, selector={ZONE: f"test-zone-{z}"}), S2) for z in (1, 2, 3)),
        group("aff", 1, pod_spec(anti=[term(S2, ZONE)]), None),
        expect=(ANY, ANY, ANY, None),
    ),
    case(2358, group("pod", 1, CPU_2, S2), group("aff", 1, pod_spec(anti=[term(S2, ZONE)]), None), expect=(ANY, None)),
    # Upstream asserts only that the arches differ: the amd64 type that holds the pod cheapest.
    case(
        2380,
        group("aff1", 1, pod_spec(spec({"cpu": "2"}, selector={ARCH: "arm64"}), spreads=[spread(HOSTNAME, selector=S2)]), S2),
        group("aff2", 1, pod_spec(spec({"cpu": "1"}), spreads=[spread(HOSTNAME, selector=S2)], anti=[term(S2, ARCH)]), S2),
        expect=(ARM, SMALL),
    ),
    case(
        2423,
        *(
            group(f"z{z}", 1, pod_spec(spec({"cpu": "2"}, selector={ZONE: f"test-zone-{z}"}), anti_preferred=[term(S2, ZONE)]), None)
            for z in (1, 2, 3)
        ),
        group("aff", 1, spec(), S2),
        expect=(ANY,) * 4,
    ),
    case(
        2463,
        *(
            group(f"z{z}", 1, pod_spec(spec({"cpu": "2"}, selector={ZONE: f"test-zone-{z}"}), anti=[term(S2, ZONE)]), None)
            for z in (1, 2, 3)
        ),
        group("aff", 1, spec(), S2),
        expect=(ANY, ANY, ANY, None),
    ),
    case(
        2630,
        group("spread", 3, pod_spec(spreads=[spread(HOSTNAME)], preferred=[term(S2, HOSTNAME)])),
        group("aff1", 1, spec(), S2),
        expect=(ANY, ANY),
        note="its skew (1, 1, 1) is not checked: the target pod may share a node or not",
    ),
    case(2710, group("aff", 10, pod_spec(affinity=[term(S2, ZONE)]), None), expect=(None,)),
    case(
        2760,
        group("aff", 10, pod_spec(affinity=[term(S2, ZONE)]), None),
        group("aff1", 1, spec(required=[req(ZONE, "In", "test-zone-1")]), S2),
        expect=(ANY, ANY),
        note="its skew (11 in one zone) is not checked",
    ),
    # One of its fifty identical rounds (each cleaned up before the next).
    case(
        2789,
        group("db", 1, spec(), {"type": "db", "spread": "spread"}),
        group("web", 1, pod_spec(affinity=[term({"type": "db", "spread": "spread"}, HOSTNAME)]), {"type": "web", "spread": "spread"}),
        group("cache", 1, pod_spec(affinity=[term({"type": "web", "spread": "spread"}, HOSTNAME)]), {"type": "cache", "spread": "spread"}),
        group("ui", 1, pod_spec(affinity=[term({"type": "cache", "spread": "spread"}, HOSTNAME)]), {"type": "ui", "spread": "spread"}),
        expect=(ANY,) * 4,
    ),
    case(
        2824,
        group("db", 1, pod_spec(affinity=[term({"type": "web", "spread": "spread"}, HOSTNAME)]), {"type": "db", "spread": "spread"}),
        expect=(None,),
    ),
    case(
        2840,
        SPREAD_10,
        group("aff1", 1, spec(), S2, namespace="other-ns-no-match"),
        group("aff2", 1, pod_spec(affinity=[term(S2, HOSTNAME)]), None),
        expect=(ANY, ANY, None),
    ),
    case(
        2878,
        SPREAD_10,
        group("aff1", 1, spec(), S2, namespace="other-ns-list"),
        group("aff2", 1, pod_spec(affinity=[term(S2, HOSTNAME, namespaces=["other-ns-list"])]), None),
        expect=(ANY, ANY, ANY),
        note=SAME_NODE,
    ),
    case(
        2917,
        SPREAD_10,
        group("aff1", 1, spec(), S2, namespace="empty-ns-selector"),
        group("aff2", 1, pod_spec(affinity=[term(S2, HOSTNAME, namespaceSelector={"matchLabels": {}})]), None),
        expect=(ANY, ANY, ANY),
        note=SAME_NODE,
    ),
]

NO_SCHEDULE = {"effect": "NoSchedule"}

TAINTS = [
    case(
        2981,
        *pods(1, spec(tolerations=[{**NO_SCHEDULE, "operator": "Exists"}])),
        pools=(pool(req(CAPACITY, "Exists"), taints=[{"key": "test", "value": "bar", **NO_SCHEDULE}]),),
        expect=(ANY,),
        note="its assertion on the node's taints is not checked (not in gpufleet's output)",
    ),
    # Its two rounds as one: the second round's pods tolerate no node of the first either.
    case(
        2991,
        *(
            p
            for i, toleration in enumerate(
                (
                    {"key": "test-key", "operator": "Exists", **NO_SCHEDULE},
                    {"key": "test-key", "value": "test-value", "operator": "Equal", **NO_SCHEDULE},
                    None,
                    {"key": "invalid", "operator": "Exists"},
                    {"key": "test-key", "operator": "Equal", **NO_SCHEDULE},
                )
            )
            for p in pods(1, spec(tolerations=[toleration] if toleration else []), prefix=f"p{i}-")
        ),
        pools=(pool(req(CAPACITY, "Exists"), taints=[{"key": "test-key", "value": "test-value", **NO_SCHEDULE}]),),
        expect=(ANY, ANY, None, None, None),
    ),
    case(
        3018,
        *pods(1, spec()),
        pools=(
            pool(
                req(CAPACITY, "Exists"), template={"startupTaints": [{"key": "ignore-me", "value": "nothing-to-see-here", **NO_SCHEDULE}]}
            ),
        ),
        expect=(ANY,),
    ),
    case(
        3026,
        *pods(1, spec(tolerations=[{"key": "test-key", "operator": "Exists", "effect": "NoExecute"}])),
        expect=(ANY,),
        note="its assertion on the node's taints is not checked (not in gpufleet's output)",
    ),
]

ROWS = [*TOPOLOGY, *TAINTS_POLICY, *NODE_AFFINITY, *AFFINITY, *TAINTS]
