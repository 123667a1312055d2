"""kube-scheduler's PodTopologySpread and InterPodAffinity Filter tests, translated case by case
onto gpufleet's counted nodes (simulate/k8s_topology.py): each upstream node is a state of one
node, each upstream existing pod a template with one replica on it. Sources:
- InterPodAffinity: kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/
  filtering_test.go @072825f9a367e9ca0f73f91830945f1b7f46e0d9, TestRequiredAffinitySingleNode
  (node1 labelled region r1, zone z11; expected status per case).
- PodTopologySpread: pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go
  @e7827879dbc282e7f5103451dc63169e964b6bb7, TestSingleConstraint and TestMultipleConstraints (nodes node-a, node-b in zone1 and node-x,
  node-y in zone2, each labelled node=<name>; expected code per node).
Upstream codes map to messages: Unschedulable to the plugin's reason, UnschedulableAndUnresolvable
for a node without the key to the spread's "(missing required label)" reason."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.simulate import k8s_topology as topo
from gpufleet.simulate.k8s_shapes import NodeShape, PodTemplate
from gpufleet.simulate.k8s_workloads import pod_template

CAT = catalog.load()
TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}  # any NoSchedule taint the pods do not tolerate
HOSTNAME = CAT.facts.eks.well_known_labels.hostname


@dataclass
class State:
    shape: NodeShape
    count: int = 1
    tally: dict[str, int] = field(default_factory=dict)


def shape(name: str, labels: dict, taints: tuple = ()) -> NodeShape:
    return NodeShape(name, "test.large", labels, taints, {"cpu": 8000, "pods": 110}, 1, 1, 1)


def existing(name: str, labels: dict, namespace: str = "default", spec: dict | None = None):
    return pod_template(f"Pod {namespace}/{name}", 1, spec or {}, labels=labels)


def cluster(nodes: dict[str, dict], pods: list[tuple[str, PodTemplate]], tainted: frozenset[str] = frozenset()) -> topo.Cluster:
    states = {n: State(shape(n, labels, (TAINT,) if n in tainted else ())) for n, labels in nodes.items()}
    for where, pod in pods:
        if where in states:  # an upstream pod on a node the snapshot lacks counts nowhere
            states[where].tally[pod.owner] = 1
    return topo.Cluster(list(states.values()), {p.owner: p for _, p in pods}, HOSTNAME, CAT)


def verdicts(pod, c: topo.Cluster) -> dict[str, str]:
    return {s.shape.group: (topo.reasons(pod, i, c) or [""])[0] for i, s in enumerate(c.nodes)}


# --- InterPodAffinity ----------------------------------------------------------------------------


def term(key: str, operator: str, values=None, topology: str = "region", **extra) -> dict:
    expression = {"key": key, "operator": operator, **({"values": values} if values is not None else {})}
    return {"labelSelector": {"matchExpressions": [expression]}, "topologyKey": topology, **extra}


def affine(affinity=(), anti=()) -> dict:
    return {
        "affinity": {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(affinity)},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(anti)},
        }
    }


SCAN = {"service": "securityscan"}
S1 = {"security": "S1"}
NODE1 = {"node1": {"region": "r1", "zone": "z11"}}
SCANNER = ("node1", existing("scanner", SCAN))

# (upstream case name, incoming labels, incoming spec, existing (node, template), expected reason)
AFFINITY_CASES = [
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods", {}, {}, [], ""),
    (
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        S1, affine([term("service", "In", ["securityscan", "value2"])]), [SCANNER], "",
    ),
    (
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        S1, affine([term("service", "NotIn", ["securityscan3", "value3"])]), [SCANNER], "",
    ),
    (
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        S1, affine([term("service", "In", ["securityscan", "value2"], topology="", namespaces=["DiffNameSpace"])]),
        [("node1", existing("other", SCAN, namespace="ns"))], topo.AFFINITY,
    ),
    (
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        SCAN, affine([term("service", "In", ["antivirusscan", "value2"], topology="")]), [SCANNER], topo.AFFINITY,
    ),
    (
        "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        S1,
        affine([
            {"labelSelector": {"matchExpressions": [{"key": "service", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}]}, "topologyKey": "region"},
            {"labelSelector": {"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan"]}, {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}]}, "topologyKey": "region"},
        ]),
        [SCANNER], "",
    ),
    (
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        S1,
        affine([
            {"labelSelector": {"matchExpressions": [{"key": "service", "operator": "Exists"}, {"key": "wrongkey", "operator": "DoesNotExist"}]}, "topologyKey": "region"},
            {"labelSelector": {"matchExpressions": [{"key": "service", "operator": "In", "values": ["securityscan2"]}, {"key": "service", "operator": "NotIn", "values": ["WrongValue"]}]}, "topologyKey": "region"},
        ]),
        [SCANNER], topo.AFFINITY,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        S1, affine([term("service", "In", ["securityscan", "value2"])], [term("service", "In", ["antivirusscan", "value2"], topology="node")]), [SCANNER], "",
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        S1, affine([term("service", "In", ["securityscan", "value2"])], [term("service", "In", ["antivirusscan", "value2"], topology="node")]),
        [("node1", existing("scanner", SCAN, spec=affine(anti=[term("service", "In", ["antivirusscan", "value2"], topology="node")])))], "",
    ),
    (
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        S1, affine([term("service", "In", ["securityscan", "value2"])], [term("service", "In", ["securityscan", "value2"], topology="zone")]), [SCANNER], topo.ANTI_AFFINITY,
    ),
    (
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        SCAN, affine([term("service", "In", ["securityscan", "value2"])], [term("service", "In", ["antivirusscan", "value2"], topology="node")]),
        [("node1", existing("scanner", SCAN, spec=affine(anti=[term("service", "In", ["securityscan", "value2"], topology="zone")])))], topo.EXISTING_ANTI_AFFINITY,
    ),
    (
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        SCAN, affine([term("service", "NotIn", ["securityscan", "value2"])]), [("node2", existing("scanner", SCAN))], topo.AFFINITY,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        SCAN, {}, [("node1", existing("scanner", SCAN, spec=affine(anti=[term("service", "In", ["securityscan", "value2"], topology="zone")])))], topo.EXISTING_ANTI_AFFINITY,
    ),
    (
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        SCAN, {}, [("node1", existing("scanner", SCAN, spec=affine(anti=[term("service", "NotIn", ["securityscan", "value2"], topology="zone")])))], "",
    ),
    (
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
        SCAN, affine(anti=[term("service", "Exists"), term("security", "Exists")]),
        [("node1", existing("secure", S1, spec=affine(anti=[term("security", "Exists", topology="zone")])))], topo.ANTI_AFFINITY,
    ),
    (
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        SCAN, affine(anti=[term("service", "Exists", topology="zone"), term("security", "Exists", topology="zone")]),
        [("node1", existing("secure", S1, spec=affine(anti=[term("security", "Exists", topology="zone")])))], topo.ANTI_AFFINITY,
    ),
    (
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        S1, affine(anti=[term("security", "Exists", topology="zone")]),
        [("node1", existing("scanner", SCAN, spec=affine(anti=[term("service", "Exists", topology="zone"), term("security", "Exists", topology="zone")])))],
        topo.EXISTING_ANTI_AFFINITY,
    ),
    (
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        {"abc": "", "xyz": ""}, affine(anti=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")]),
        [("node1", existing("def", {"def": "", "xyz": ""}, spec=affine(anti=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")])))],
        topo.ANTI_AFFINITY,
    ),
    (
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        {"def": "", "xyz": ""}, affine(anti=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")]),
        [("node1", existing("abc", {"abc": "", "xyz": ""}, spec=affine(anti=[term("abc", "Exists", topology="zone"), term("def", "Exists", topology="zone")])))],
        topo.ANTI_AFFINITY,
    ),
]  # fmt: skip


@pytest.mark.parametrize("name, labels, spec, pods, expected", AFFINITY_CASES, ids=[c[0][:60] for c in AFFINITY_CASES])
def test_upstream_required_affinity_single_node(name, labels, spec, pods, expected):
    pod = pod_template("Pod default/incoming", 1, spec, labels=labels)
    assert verdicts(pod, cluster(NODE1, pods)) == {"node1": expected}


# --- PodTopologySpread ---------------------------------------------------------------------------

FOUR = {n: {"zone": z, "node": n} for n, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-x", "zone2"), ("node-y", "zone2"))}


def spread(*constraints, affinity=None) -> dict:
    """(maxSkew, topologyKey, the label the selector asks to exist or None for no selector[, extra fields])."""
    spec: dict = {"topologySpreadConstraints": []}
    for skew, key, k, *extra in constraints:
        selector = {} if k is None else {"labelSelector": {"matchExpressions": [{"key": k, "operator": "Exists"}]}}
        spec["topologySpreadConstraints"].append(
            {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", **selector, **(extra[0] if extra else {})}
        )
    if affinity:
        spec["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [affinity]}]}}
        }
    return spec


def on(*placed: tuple[str, dict, str]) -> list:
    return [(node, existing(f"p{i}", labels, namespace)) for i, (node, labels, namespace) in enumerate(placed)]


FOO, BAR, FOOBAR = {"foo": ""}, {"bar": ""}, {"foo": "", "bar": ""}
SPREAD_2103 = on(*[(n, FOO, "default") for n in ("node-a", "node-a", "node-b", "node-y", "node-y", "node-y")])
OK, NO, LABEL = "", topo.SPREAD, topo.SPREAD_LABEL
NODES_ABC = {n: {"node": n} for n in ("node-a", "node-b", "node-c")}
POLICY_NODES = {
    "node-a": {"node": "node-a", **FOO},
    "node-b": {"node": "node-b", **FOO},
    "node-x": {"node": "node-x", **FOO},
    "node-y": {"node": "node-y"},
}
SPREAD_110 = on(("node-a", FOO, "default"), ("node-b", FOO, "default"), ("node-y", FOO, "default"))
FOUR_FOO = {n: {**labels, **FOO} for n, labels in FOUR.items()}
INCLUSION_PODS = on(("node-a", FOO, "default"), ("node-b", FOO, "default"), ("node-y", FOO, "default"))
# The cases whose node-y carries upstream's `taints` (a NoSchedule taint the pod does not tolerate).
TAINTED_Y = ("NodeTaintsPolicy", "zone: honor/honor", "zone: honor/ignore, node: honor/ignore")
SPREAD_221 = on(*[(n, FOO, "default") for n in ("node-a", "node-a", "node-b", "node-b", "node-c")])

# (upstream test and case name, nodes, incoming labels, spec, existing, expected per node a, b, x, y)
SPREAD_CASES = [
    ("TestSingleConstraint: no existing pods", FOUR, FOO, spread((1, "zone", "foo")), [], (OK, OK, OK, OK)),
    ("TestSingleConstraint: no existing pods, incoming pod doesn't match itself", FOUR, FOO, spread((1, "zone", "bar")), [], (OK, OK, OK, OK)),
    (
        "TestSingleConstraint: existing pods in a different namespace do not count", FOUR, FOO, spread((1, "zone", "foo")),
        on(("node-a", FOO, "ns1"), ("node-a", FOO, "ns2"), ("node-x", FOO, "default"), ("node-y", FOO, "default")), (OK, OK, NO, NO),
    ),
    (
        "TestSingleConstraint: pods spread across zones as 3/3, all nodes fit", FOUR, FOO, spread((1, "zone", "foo")),
        on(*[(n, FOO, "default") for n in ("node-a", "node-a", "node-b", "node-y", "node-y", "node-y")]), (OK, OK, OK, OK),
    ),
    (
        "TestSingleConstraint: pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        {**FOUR, "node-b": {"zon": "zone1", "node": "node-b"}}, FOO, spread((1, "zone", "foo")),
        on(*[(n, FOO, "default") for n in ("node-a", "node-b", "node-x", "node-y")]), (OK, LABEL, NO, NO),
    ),
    (
        "TestSingleConstraint: pod cannot be scheduled as all nodes don't have label 'rack'",
        {"node-a": FOUR["node-a"], "node-x": FOUR["node-x"]}, FOO, spread((1, "rack", "foo")), [], (LABEL, LABEL),
    ),
    ("TestSingleConstraint: pods spread across nodes as 2/1/0/3, only node-x fits", FOUR, FOO, spread((1, "node", "foo")), SPREAD_2103, (NO, NO, OK, NO)),
    ("TestSingleConstraint: pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit", FOUR, FOO, spread((2, "node", "foo")), SPREAD_2103, (NO, OK, OK, NO)),
    ("TestSingleConstraint: pods spread across nodes as 2/1/0/3, but pod doesn't match itself", FOUR, BAR, spread((1, "node", "foo")), SPREAD_2103, (NO, OK, OK, NO)),
    (
        # Upstream runs no NodeAffinity filter, so node-b and node-x pass there; here too, as the
        # spread filter alone is asked (the scheduler's NodeAffinity refuses them before it).
        "TestSingleConstraint: incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits", FOUR, FOO,
        spread((1, "node", "foo"), affinity={"key": "node", "operator": "In", "values": ["node-a", "node-y"]}), SPREAD_2103, (OK, OK, OK, NO),
    ),
    ("TestSingleConstraint: existing pods do not match null selector", FOUR, FOO, spread((1, "zone", None)), on(("node-x", FOO, "default"), ("node-y", FOO, "default")), (OK, OK, OK, OK)),
    (
        "TestSingleConstraint: incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits", FOUR, FOO,
        spread((1, "zone", "foo"), affinity={"key": "node", "operator": "NotIn", "values": ["node-b"]}),
        on(("node-b", FOO, "default"), ("node-b", FOO, "default"), ("node-y", FOO, "default")), (OK, OK, NO, NO),
    ),
    (
        "TestSingleConstraint: pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
        NODES_ABC, FOO, spread((2, "node", "foo", {"minDomains": 4})), SPREAD_221, (NO, NO, OK),
    ),
    (
        "TestSingleConstraint: pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
        NODES_ABC, FOO, spread((2, "node", "foo", {"minDomains": 2})), SPREAD_221, (OK, OK, OK),
    ),
    (
        "TestSingleConstraint: pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
        FOUR, FOO, spread((2, "zone", "foo", {"minDomains": 3})), on(("node-a", FOO, "default"), ("node-b", FOO, "default"), ("node-y", FOO, "default")),
        (NO, NO, OK, OK),
    ),
    (
        "TestSingleConstraint: pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
        FOUR, FOO, spread((2, "zone", "foo", {"minDomains": 1})), on(("node-a", FOO, "default"), ("node-b", FOO, "default"), ("node-y", FOO, "default")),
        (OK, OK, OK, OK),
    ),
    # Upstream runs neither NodeAffinity nor TaintToleration here: node-y passes where the policy takes it out.
    ("TestSingleConstraint: NodeAffinityPolicy honored with labelSelectors", POLICY_NODES, FOO, {**spread((1, "node", "foo")), "nodeSelector": FOO}, SPREAD_110, (NO, NO, OK, OK)),
    (
        "TestSingleConstraint: NodeAffinityPolicy ignored with labelSelectors", POLICY_NODES, FOO,
        {**spread((1, "node", "foo", {"nodeAffinityPolicy": "Ignore"})), "nodeSelector": FOO}, SPREAD_110, (NO, NO, OK, NO),
    ),
    (
        "TestSingleConstraint: NodeAffinityPolicy honored with nodeAffinity", POLICY_NODES, FOO,
        spread((1, "node", "foo"), affinity={"key": "foo", "operator": "In", "values": [""]}), SPREAD_110, (NO, NO, OK, OK),
    ),
    (
        "TestSingleConstraint: NodeAffinityPolicy ignored with labelSelectors (the second, with nodeAffinity)", POLICY_NODES, FOO,
        spread((1, "node", "foo", {"nodeAffinityPolicy": "Ignore"}), affinity={"key": "foo", "operator": "In", "values": [""]}), SPREAD_110, (NO, NO, OK, NO),
    ),
    ("TestSingleConstraint: NodeTaintsPolicy honored", POLICY_NODES, FOO, spread((1, "node", "foo", {"nodeTaintsPolicy": "Honor"})), SPREAD_110, (NO, NO, OK, OK)),
    ("TestSingleConstraint: NodeTaintsPolicy ignored", POLICY_NODES, FOO, spread((1, "node", "foo")), SPREAD_110, (NO, NO, OK, NO)),
    (
        "TestMultipleConstraints: two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", FOUR, FOO,
        spread((1, "zone", "foo"), (1, "node", "foo")), SPREAD_2103, (NO, NO, OK, NO),
    ),
    (
        "TestMultipleConstraints: two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", FOUR, FOO,
        spread((1, "zone", "foo"), (1, "node", "foo")), on(*[(n, FOO, "default") for n in ("node-a", "node-a", "node-b", "node-y", "node-y", "node-y", "node-y")]),
        (NO, NO, NO, NO),
    ),
    (
        "TestMultipleConstraints: Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]", FOUR, FOOBAR,
        spread((1, "zone", "foo"), (1, "node", "bar")), on(("node-a", FOO, "default"), ("node-y", BAR, "default")), (NO, NO, OK, NO),
    ),
    (
        "TestMultipleConstraints: Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]", FOUR, FOOBAR,
        spread((1, "zone", "foo"), (1, "node", "bar")), on(("node-a", FOO, "default"), ("node-x", BAR, "default"), ("node-y", BAR, "default")), (NO, NO, NO, NO),
    ),
    (
        "TestMultipleConstraints: Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]", FOUR, FOOBAR,
        spread((1, "zone", "foo"), (1, "node", "bar")),
        on(("node-a", FOO, "default"), ("node-a", FOOBAR, "default"), ("node-y", FOO, "default"), ("node-y", FOOBAR, "default"), ("node-y", FOO, "default")),
        (NO, OK, NO, NO),
    ),
    (
        "TestMultipleConstraints: Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint", FOUR, BAR,
        spread((1, "zone", "foo"), (1, "node", "bar")), on(("node-a", FOO, "default"), ("node-x", BAR, "default"), ("node-y", BAR, "default")), (OK, OK, NO, NO),
    ),
    (
        "TestMultipleConstraints: two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        {**FOUR, "node-x": {"zone": "zone2"}}, FOO, spread((1, "zone", "foo"), (1, "node", "foo")),
        on(("node-a", FOO, "default"), ("node-y", FOO, "default")), (NO, OK, LABEL, NO),
    ),
    (
        "TestMultipleConstraints: two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        {**FOUR_FOO, "node-y": FOUR["node-y"]}, FOO, {**spread((1, "zone", "foo"), (1, "node", "foo", {"nodeAffinityPolicy": "Ignore"})), "nodeSelector": FOO},
        INCLUSION_PODS, (NO, NO, OK, NO),
    ),
    (
        "TestMultipleConstraints: two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        {**FOUR_FOO, "node-y": FOUR["node-y"]}, FOO, spread((1, "zone", "foo", {"nodeTaintsPolicy": "Honor"}), (1, "node", "foo")),
        INCLUSION_PODS, (NO, NO, OK, NO),
    ),
    (
        "TestMultipleConstraints: two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        {**FOUR_FOO, "node-b": FOUR["node-b"]}, FOO, {**spread((1, "zone", "foo"), (1, "node", "foo")), "nodeSelector": FOO},
        INCLUSION_PODS, (NO, OK, OK, NO),
    ),
    (
        "TestMultipleConstraints: two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        {**FOUR_FOO, "node-b": FOUR["node-b"]}, FOO,
        {**spread((1, "zone", "foo", {"nodeTaintsPolicy": "Honor"}), (1, "node", "foo", {"nodeAffinityPolicy": "Ignore"})), "nodeSelector": FOO},
        INCLUSION_PODS, (NO, NO, OK, NO),
    ),
]  # fmt: skip


@pytest.mark.parametrize("name, nodes, labels, spec, pods, expected", SPREAD_CASES, ids=[c[0][:70] for c in SPREAD_CASES])
def test_upstream_spread_filter(name, nodes, labels, spec, pods, expected):
    pod = pod_template("Pod default/p", 1, spec, labels=labels)
    c = cluster(nodes, pods, frozenset({"node-y"}) if any(t in name for t in TAINTED_Y) else frozenset())
    assert verdicts(pod, c) == dict(zip(nodes, (e or "" for e in expected), strict=True))


# Upstream cases that do not map onto a plan, and why.
GAPS = {
    "interpodaffinity TestRequiredAffinitySingleNode: PodAffinity fails PreFilter with an invalid affinity label syntax, "
    "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax": (
        "a label value the API server refuses: a plan's pods are objects the API would not admit"
    ),
    "interpodaffinity TestRequiredAffinitySingleNode cases after those two (namespaceSelector ones)": (
        "not read for this translation; namespaces' labels are not in a plan, so a term with a namespaceSelector over "
        "labels is noted, never judged (test_what_the_plan_cannot_tell_is_noted_and_never_filters)"
    ),
    "interpodaffinity TestRequiredAffinityMultipleNodes and the PreFilter-state tests": "not read for this translation",
    "podtopologyspread TestSingleConstraint: terminating Pods should be excluded": "a plan has no terminating pods",
    "podtopologyspread TestPreFilterDisabled and the PreFilter-state / AddPod / RemovePod tests": (
        "the plugin's internal state and preemption's pod removal, which a plan does not exercise"
    ),
}


def test_every_gap_says_why():
    assert all(reason for reason in GAPS.values())


# --- Through the scheduler: replicas counted in bulk ---------------------------------------------

from gpufleet.simulate import k8s_scheduler as ks  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
WEB = {"app": "web"}


def group(name: str, nodes: int, zone: str | None = None, *, pods: int = 30, taints=(), uncertain=frozenset(), max_nodes=None) -> NodeShape:
    labels = {"kubernetes.io/os": "linux", **({ZONE: zone} if zone else {})}
    return NodeShape(
        name, "test.large", labels, tuple(taints), {"cpu": 8000, "pods": pods}, nodes, max_nodes or nodes, nodes, uncertain_labels=uncertain
    )


def web(replicas: int, key: str = ZONE, skew: int = 1, owner: str = "Deployment default/web", labels=WEB, **extra):
    constraint = {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }
    return pod_template(owner, replicas, {"topologySpreadConstraints": [constraint]}, labels=labels)


def spread_web(replicas: int, *constraints: tuple[int, str], owner: str = "Deployment default/web"):
    """A web Deployment with one DoNotSchedule constraint per (maxSkew, topologyKey) over web pods."""
    spec = {
        "topologySpreadConstraints": [
            {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": WEB}}
            for skew, key in constraints
        ]
    }
    return pod_template(owner, replicas, spec, labels=WEB)


def repelling(key: str) -> dict:
    """A pod spec with a required anti-affinity to the web pods on `key`."""
    return affine(anti=[{"topologyKey": key, "labelSelector": {"matchLabels": WEB}}])


def place(shapes, *pods):
    return ks.simulate(shapes, list(pods), CAT)


def test_zone_spread_leaves_pending_what_the_small_zone_cannot_balance():
    [placed] = place([group("a", 1, "z1", pods=2), group("b", 1, "z2")], web(10))
    assert placed.placed == {"a": 2, "b": 3} and placed.pending == 5
    assert placed.message == "0/2 nodes are available: 1 Too many pods, 1 node(s) didn't match pod topology spread constraints."


def test_schedule_anyway_is_a_score_and_never_pending():
    [placed] = place([group("a", 1, "z1", pods=2), group("b", 1, "z2")], web(10, whenUnsatisfiable="ScheduleAnyway"))
    assert placed.pending == 0 and placed.placed == {"a": 2, "b": 8}


def test_hostname_spread_balances_nodes_within_max_skew():
    [placed] = place([group("a", 3, "z1"), group("b", 1, "z2", pods=2)], web(12, key=HOSTNAME))
    # b's one node holds 2, so every other node holds at most 3: 3 + 3 + 3 + 2 = 11.
    assert placed.placed == {"a": 9, "b": 2} and placed.pending == 1


def test_untolerated_tainted_nodes_count_as_empty_domains_unless_taints_are_honored():
    shapes = [group("cpu", 2, "z1"), group("gpu", 1, "z1", taints=[TAINT])]
    [ignored] = place(shapes, web(5, key=HOSTNAME))
    assert ignored.placed == {"cpu": 2} and ignored.pending == 3  # the gpu node stays at 0: nodeTaintsPolicy Ignore
    [honored] = place(shapes, web(5, key=HOSTNAME, nodeTaintsPolicy="Honor"))
    assert honored.placed == {"cpu": 5} and honored.pending == 0


def test_nodes_node_affinity_excludes_count_only_with_policy_ignore():
    def pinned(**extra):
        pod = web(4, **extra)
        return pod.__class__(**{**pod.__dict__, "node_selector": {"kubernetes.io/os": "linux", "pool": "web"}})

    shapes = [
        NodeShape("web", "t", {"pool": "web", "kubernetes.io/os": "linux", ZONE: "z1"}, (), {"pods": 30}, 2, 2, 2),
        NodeShape("db", "t", {"kubernetes.io/os": "linux", ZONE: "z2"}, (), {"pods": 30}, 1, 1, 1),
    ]
    assert place(shapes, pinned())[0].placed == {"web": 4}
    ignored = place(shapes, pinned(nodeAffinityPolicy="Ignore"))[0]
    assert ignored.placed == {"web": 1} and ignored.pending == 3


def test_fewer_domains_than_min_domains_hold_max_skew_each():
    [placed] = place([group("a", 1, "z1"), group("b", 1, "z2")], web(5, minDomains=3))
    assert placed.placed == {"a": 1, "b": 1} and placed.pending == 3
    assert place([group("a", 1, "z1"), group("b", 1, "z2")], web(5, minDomains=2))[0].pending == 0


def test_match_label_keys_count_only_the_pods_of_the_same_revision():
    old = pod_template("Deployment default/web-old", 3, {"nodeSelector": {ZONE: "z1"}}, labels={**WEB, "rev": "1"})
    shapes = [group("a", 1, "z1", pods=10), group("b", 1, "z2", pods=1)]
    # Counting the old revision's 3 pods in z1, the new ones may only go to z2, which holds one.
    counted = place(shapes, old, web(2, labels={**WEB, "rev": "2"}))[1]
    assert counted.placed == {"b": 1} and counted.pending == 1
    apart = place(shapes, old, web(2, labels={**WEB, "rev": "2"}, matchLabelKeys=["rev"]))[1]
    assert apart.placed == {"a": 1, "b": 1} and apart.pending == 0


def test_self_anti_affinity_on_the_zone_holds_one_replica_per_zone():
    anti = repelling(ZONE)
    [placed] = place([group("a", 3, "z1"), group("b", 2, "z2")], pod_template("Deployment default/web", 4, anti, labels=WEB))
    assert placed.placed == {"a": 1, "b": 1} and placed.pending == 2
    assert placed.message == "0/5 nodes are available: 5 node(s) didn't match pod anti-affinity rules."


def test_affinity_to_itself_follows_the_first_replica_into_its_zone():
    together = affine([{"topologyKey": ZONE, "labelSelector": {"matchLabels": WEB}}])
    [placed] = place([group("a", 1, "z1", pods=3), group("b", 2, "z2")], pod_template("Deployment default/web", 5, together, labels=WEB))
    assert placed.placed == {"a": 3} and placed.pending == 2
    assert placed.message == "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't match pod affinity rules."


def test_affinity_to_pods_no_one_runs_is_pending():
    spec = affine([{"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "cache"}}}])
    [placed] = place([group("a", 2, "z1")], pod_template("Deployment default/web", 1, spec, labels=WEB))
    assert placed.pending == 1 and placed.message == "0/2 nodes are available: 2 node(s) didn't match pod affinity rules."


def test_a_placed_pods_anti_affinity_repels_a_later_template():
    shy = repelling(HOSTNAME)
    first = pod_template("Deployment default/db", 1, shy, labels={"app": "db"})
    [_, placed] = place([group("a", 2, "z1")], first, pod_template("Deployment default/web", 3, {}, labels=WEB))
    assert placed.placed == {"a": 3} and placed.pending == 0  # all on the node db does not hold
    [_, crowded] = place([group("a", 1, "z1")], first, pod_template("Deployment default/web", 1, {}, labels=WEB))
    assert crowded.message == "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules."


def test_an_unknown_zone_is_noted_never_pending():
    [placed] = place([group("a", 2, uncertain=frozenset({ZONE}))], web(4))
    assert placed.pending == 0 and any("not in the plan" in n for n in placed.notes)


def test_a_selector_over_pods_of_unknown_labels_is_noted():
    chart = pod_template("Deployment default/chart-pod", 1, {}, labels=None)
    [_, placed] = place([group("a", 1, "z1"), group("b", 1, "z2")], chart, web(2))
    assert placed.pending == 0 and any("Deployment default/chart-pod" in n for n in placed.notes)
    # Spread constraints count the pod's own namespace only: a chart's pods elsewhere are no gap.
    system = pod_template("DaemonSet kube-system/plugin", None, {}, labels=None)
    [_, alone] = place([group("a", 1, "z1"), group("b", 1, "z2")], system, web(2))
    assert alone.notes == []


@pytest.mark.parametrize("key", [ZONE, HOSTNAME])
def test_a_billion_nodes_and_two_billion_replicas_spread_in_bounded_steps(key):
    shapes = [group("a", 10**9, "z1", pods=4), group("b", 10**9, "z2", pods=4)]
    [placed] = place(shapes, web(2**31, key=key))
    assert placed.pending == 0 and sum(placed.placed.values()) == 2**31
    assert abs(placed.placed["a"] - placed.placed["b"]) <= (1 if key == ZONE else 2**31)


def test_several_constraints_rise_a_skew_a_step_and_stay_within_it():
    pod = spread_web(40, (1, ZONE), (1, HOSTNAME))
    [placed] = place([group("a", 2, "z1", pods=10), group("b", 2, "z2", pods=10)], pod)
    assert placed.placed == {"a": 20, "b": 20} and placed.pending == 0


def test_fewer_domains_than_min_domains_make_the_global_minimum_zero_in_the_filter():
    pods = on(("node-a", FOO, "default"), ("node-x", FOO, "default"))
    c = cluster(FOUR, pods)
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": FOO}}
    assert set(verdicts(pod_template("Pod default/p", 1, {"topologySpreadConstraints": [constraint]}, labels=FOO), c).values()) == {""}
    fewer = pod_template("Pod default/p", 1, {"topologySpreadConstraints": [{**constraint, "minDomains": 3}]}, labels=FOO)
    assert set(verdicts(fewer, c).values()) == {topo.SPREAD}


def test_an_empty_selector_counts_no_pod():
    # countPodsMatchSelector returns 0 for an empty selector, while the pod matches itself: 0 + 1 - 0.
    constraint = {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}
    pod = pod_template("Pod default/p", 1, {"topologySpreadConstraints": [constraint]}, labels=FOO)
    assert set(verdicts(pod, cluster(FOUR, SPREAD_2103)).values()) == {""}


def test_an_affinity_term_counts_only_its_namespaces():
    spec = affine([term("service", "In", ["securityscan"], namespaces=["elsewhere"])])
    assert verdicts(pod_template("Pod default/p", 1, spec, labels=S1), cluster(NODE1, [SCANNER])) == {"node1": topo.AFFINITY}
    everywhere = affine([term("service", "In", ["securityscan"], namespaceSelector={})])
    assert verdicts(pod_template("Pod ns/p", 1, everywhere, labels=S1), cluster(NODE1, [SCANNER])) == {"node1": ""}


def test_self_anti_affinity_on_the_hostname_holds_one_replica_per_node():
    [placed] = place([group("a", 2, "z1")], pod_template("Deployment default/web", 3, repelling(HOSTNAME), labels=WEB))
    assert placed.placed == {"a": 2} and placed.pending == 1
    assert placed.message == "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."


def test_zone_and_hostname_constraints_hold_together():
    pod = spread_web(8, (1, ZONE), (1, HOSTNAME))
    [placed] = place([group("a1", 1, "z1"), group("b1", 1, "z2"), group("b2", 1, "z2"), group("b3", 1, "z2")], pod)
    nodes = [placed.placed.get(g, 0) for g in ("a1", "b1", "b2", "b3")]
    assert max(nodes) - min(nodes) <= 1 and abs(nodes[0] - sum(nodes[1:])) <= 1
    assert sum(nodes) == 3 and placed.pending == 5


def test_each_step_keeps_every_node_within_the_hostname_skew():
    pod = spread_web(6, (3, ZONE), (1, HOSTNAME))
    [placed] = place([group("a1", 1, "z1"), group("b1", 1, "z2"), group("b2", 1, "z2")], pod)
    assert placed.placed == {"a1": 2, "b1": 2, "b2": 2}


@pytest.mark.parametrize("seed", range(40))
def test_counts_agree_with_placing_replica_by_replica(seed):
    """One self-matching constraint: however the filter-passing placements go, they end at the
    same total (the lowest full domain's count plus maxSkew caps the rest), so the counted
    placement and one replica at a time over single nodes agree."""
    rng = random.Random(seed)
    key = rng.choice([ZONE, HOSTNAME])
    skew = rng.randint(1, 2)
    groups = [(f"g{i}", rng.randint(1, 3), rng.choice(["z1", "z2", "z3"]), rng.randint(1, 5)) for i in range(rng.randint(2, 4))]
    replicas = rng.randint(1, 24)
    bulk = place([group(name, n, zone, pods=cap) for name, n, zone, cap in groups], spread_web(replicas, (skew, key)))[0]
    singles = [group(f"{name}-{k}", 1, zone, pods=cap) for name, n, zone, cap in groups for k in range(n)]
    one_by_one = [spread_web(1, (skew, key), owner=f"Deployment default/web-{r}") for r in range(replicas)]
    placed = sum(sum(p.placed.values()) for p in place(singles, *one_by_one))
    assert sum(bulk.placed.values()) == placed and bulk.pending == replicas - placed


@pytest.mark.parametrize(
    "spec, said",
    [
        (affine(anti=[term("service", "Exists", namespaceSelector={"matchLabels": {"team": "a"}})]), "namespaceSelector selects namespaces"),
        (affine([{"labelSelector": UNKNOWN, "topologyKey": ZONE}]), "labelSelector is known only after apply"),
        ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": UNKNOWN}]}, "whenUnsatisfiable is known only"),
        ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}}]}, "operator Gt"),
    ],
)  # fmt: skip
def test_what_the_plan_cannot_tell_is_noted_and_never_filters(spec, said):
    [placed] = place([group("a", 1, "z1", pods=1)], pod_template("Deployment default/web", 1, spec, labels=WEB))
    assert placed.pending == 0 and any(said in n for n in placed.notes), placed.notes


def test_match_label_keys_of_a_pod_whose_labels_are_unknown_are_noted():
    [placed] = place([group("a", 1, "z1")], web(1, labels=None, matchLabelKeys=["rev"]))
    assert placed.pending == 0 and any("matchLabelKeys" in n for n in placed.notes)


def test_a_group_that_may_grow_takes_the_replicas_spread_leaves():
    [placed] = place([group("a", 1, "z1", pods=1, max_nodes=3)], web(3, key=HOSTNAME))
    assert placed.status == "after-scale-up" and placed.placed == {"a": 3} and placed.scaled_up == {"a": 2}
