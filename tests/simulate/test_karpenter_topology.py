"""Karpenter's topology over the NodeClaims it builds (simulate/karpenter_topology.py) and a NodePool
requirement's minValues: each rule turns a plan's outcome, the nodes Karpenter launches or its
reason for launching none, from what it would be without the rule."""

from __future__ import annotations

from collections import Counter

from gpufleet.catalog import catalog
from gpufleet.plans import karpenter as plan_karpenter
from gpufleet.plans.index import Index, from_plan
from gpufleet.rules.karpenter_requirement import IN, requirement
from gpufleet.rules.karpenter_requirements import Requirements
from gpufleet.simulate import karpenter, karpenter_topology
from gpufleet.simulate.k8s_shapes import LabelSelector, NodeShape, Placement, PodTemplate, PodTerm, Spread
from tests.simulate.test_karpenter_provisioning import _deployment, _placed, _pool, _types

ZONE, HOSTNAME, CAPACITY = "topology.kubernetes.io/zone", "kubernetes.io/hostname", "karpenter.sh/capacity-type"
REGION = {
    "urn": "urn:pulumi:s::p::pulumi:providers:aws::default",
    "type": "pulumi:providers:aws",
    "name": "default",
    "inputs": {"region": "us-west-2"},
}
SMALL = {"cpu": "100m", "memory": "128Mi"}
TYPES = _types(["m5.large"])


def _spread(key: str, skew: int = 1) -> dict:
    return {
        "topologySpreadConstraints": [
            {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}
        ]
    }


def _anti(key: str) -> dict:
    term = {"topologyKey": key, "labelSelector": {"matchLabels": {"app": "web"}}}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


def _web(replicas: int, rules: dict | None = None) -> dict:
    deployment = _deployment("web", replicas, SMALL)
    deployment["inputs"]["spec"]["template"]["spec"].update(rules or {})
    return deployment


def _launch(*requirements: dict, web: dict) -> tuple[int, dict]:
    placed = _placed(REGION, _pool("default", [TYPES, *requirements]), web)
    pod = next(p for p in placed["pods"] if p["pod"].endswith("/web"))
    return sum(n["nodes"] for n in placed.get("provisioned", [])), pod


def test_without_topology_small_replicas_share_one_node():
    nodes, pod = _launch(web=_web(4))
    assert (nodes, pod["status"]) == (1, "provisioned")


def test_a_hostname_spread_of_max_skew_1_launches_a_node_per_replica():
    nodes, pod = _launch(web=_web(4, _spread(HOSTNAME)))
    assert (nodes, pod["status"]) == (4, "provisioned")


def test_a_hostname_spread_of_max_skew_2_puts_two_on_each():
    nodes, _ = _launch(web=_web(4, _spread(HOSTNAME, 2)))
    assert nodes == 2


def test_hostname_anti_affinity_puts_one_replica_on_each_node_claim():
    nodes, pod = _launch(web=_web(3, _anti(HOSTNAME)))
    assert (nodes, pod["status"]) == (3, "provisioned")


def test_a_zone_spread_places_the_replicas_across_the_pool_s_zones():
    zones = {"key": ZONE, "operator": "In", "values": ["us-west-2a", "us-west-2b"]}
    nodes, pod = _launch(zones, web=_web(4, _spread(ZONE)))
    assert (nodes, pod["status"]) == (2, "provisioned")


def test_zone_anti_affinity_leaves_pending_what_the_zones_cannot_hold():
    zones = {"key": ZONE, "operator": "In", "values": ["us-west-2a", "us-west-2b"]}
    nodes, pod = _launch(zones, web=_web(3, _anti(ZONE)))
    assert (nodes, pod["pending"]) == (2, 1)
    assert "unsatisfiable topology constraint for pod anti-affinity, key=topology.kubernetes.io/zone" in pod["message"]


def test_a_capacity_type_spread_launches_each_capacity_type():
    both = {"key": CAPACITY, "operator": "In", "values": ["spot", "on-demand"]}
    nodes, pod = _launch(both, web=_web(2, _spread(CAPACITY)))
    assert (nodes, pod["status"]) == (2, "provisioned")


def _template(rules: dict) -> PodTemplate:
    return PodTemplate("Deployment default/web", 2, requests={"cpu": 100}, labels={"app": "web"}, **rules)


def _where(nodes) -> karpenter_topology.Where:
    zones = frozenset({"us-west-2a", "us-west-2b"})
    return karpenter_topology.Where(nodes, [], {ZONE: zones}, {ZONE: zones}, HOSTNAME)


def _zones(parts) -> Counter[str]:
    return Counter({next(iter(r.get(ZONE).values)): n for r, n in parts})


def test_pods_kube_scheduler_placed_count_in_the_zones():
    web = _template({"spread": (Spread(1, ZONE, LabelSelector({"app": "web"})),)})
    placed = [({ZONE: "us-west-2a"}, [(web, 2)])]
    assert _zones(karpenter_topology.parts(web, 2, _where(placed))[0]) == {"us-west-2b": 2}
    assert _zones(karpenter_topology.parts(web, 2, _where([]))[0]) == {"us-west-2a": 1, "us-west-2b": 1}


def test_a_placed_pod_s_zone_anti_affinity_keeps_the_pod_out_of_its_zone():
    guard = PodTemplate(
        "Deployment default/guard",
        1,
        labels={"app": "guard"},
        pod_anti_affinity=(PodTerm(LabelSelector({"app": "web"}), ZONE, frozenset({"default"})),),
    )
    web = _template({})
    parts, _ = karpenter_topology.parts(web, 2, _where([({ZONE: "us-west-2a"}, [(guard, 1)])]))
    assert [(r.get(ZONE).complement, sorted(r.get(ZONE).values), n) for r, n in parts] == [(True, ["us-west-2a"], 2)]


def test_min_values_counts_the_distinct_values_of_the_types_left():
    held = Requirements({"t": requirement("t", IN, "a", "b", "c", min_values=3)})
    types = [Requirements({"t": requirement("t", IN, v)}) for v in ("a", "b")]
    assert held.unmet_min_values(types) == {"t": 2}
    assert held.unmet_min_values([*types, Requirements({"t": requirement("t", IN, "c")})]) == {}


def test_a_pool_whose_types_cover_fewer_values_than_min_values_launches_nothing():
    named = ["m5.large", "m5.xlarge", "no-such.large"]
    strict = {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": named, "minValues": 3}
    placed = _placed(REGION, _pool("default", [strict]), _deployment("web", 1, SMALL))
    pod = next(p for p in placed["pods"] if p["pod"].endswith("/web"))
    assert pod["status"] == "pending"
    assert "minValues requirement is not met for label(s) node.kubernetes.io/instance-type (2 of minValues 3)" in pod["message"]
    loose = {**strict, "minValues": 2}
    placed = _placed(REGION, _pool("default", [loose]), _deployment("web", 1, SMALL))
    assert next(p for p in placed["pods"] if p["pod"].endswith("/web"))["status"] == "provisioned"


def test_replicas_kube_scheduler_placed_on_a_group_s_nodes_count_in_its_zone():
    """Two replicas already on a node group in us-west-2a: the two left Pending go to us-west-2b,
    one NodeClaim there, where without them they would split over both zones."""
    cat = catalog.load()
    zones = {"key": ZONE, "operator": "In", "values": ["us-west-2a", "us-west-2b"]}
    pools, _ = plan_karpenter.pools(Index(from_plan({"resources": [REGION, _pool("default", [TYPES, zones])]})), cat)
    web = _template({"spread": (Spread(1, ZONE, LabelSelector({"app": "web"})),)})
    web = PodTemplate(web.owner, 4, requests=web.requests, labels=web.labels, spread=web.spread)
    group = NodeShape("ng", "m5.large", {ZONE: "us-west-2a"}, (), {"cpu": 2000, "pods": 29}, 1, 1, 1)
    on_group = Placement(web, "pending", placed={"ng": 2}, pending=2)
    launched = karpenter.provision([on_group], pools, [], cat=cat, shapes=[group])
    assert sum(n["nodes"] for n in launched) == 1 and on_group.status == "provisioned"
    alone = Placement(web, "pending", pending=2)
    assert sum(n["nodes"] for n in karpenter.provision([alone], pools, [], cat=cat, shapes=[group])) == 2
