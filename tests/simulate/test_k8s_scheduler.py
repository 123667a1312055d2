"""kube-scheduler's filters as the placement simulator applies them: one case per cause of Pending,
each of which passes when the rule is dropped, plus the scheduler's own wording."""

from __future__ import annotations

import pytest

from gpufleet.apis.quantity import QuantityError, quantity
from gpufleet.catalog import catalog
from gpufleet.simulate import k8s_scheduler as ks
from gpufleet.simulate.k8s_shapes import NodeShape, PodTemplate
from gpufleet.simulate.k8s_workloads import pod_template

GIB = 2**30
CAT = catalog.load()


def simulate(shapes, pods):
    return ks.simulate(shapes, pods, CAT)


def node(group="gpu", nodes=2, *, taints=(), labels=None, max_nodes=None, min_nodes=None, **allocatable) -> NodeShape:
    base = {"cpu": 8000, "memory": 32 * GIB, "pods": 30}
    base.update({k.replace("_", "-") if k.startswith("hugepages") else k: v for k, v in allocatable.items()})
    return NodeShape(
        group=group,
        instance_type="test.large",
        labels=labels if labels is not None else {"kubernetes.io/os": "linux"},
        taints=tuple(taints),
        allocatable=base,
        nodes=nodes,
        min_nodes=nodes if min_nodes is None else min_nodes,
        max_nodes=nodes if max_nodes is None else max_nodes,
    )


def pod(replicas=1, *, tolerations=(), selector=None, terms=None, **requests) -> PodTemplate:
    return PodTemplate(
        owner="Deployment default/app",
        replicas=replicas,
        node_selector=selector or {},
        affinity_terms=terms,
        tolerations=tuple(tolerations),
        requests={k: quantity(k, v) for k, v in requests.items()},
    )


GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
TOLERATE_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    "text, resource, expected",
    [("100m", "cpu", 100), ("2", "cpu", 2000), ("1.5", "cpu", 1500), ("70Mi", "memory", 70 * 2**20), ("1Gi", "memory", GIB),
     ("1e3", "memory", 1000), ("5120Mi", "hugepages-2Mi", 5120 * 2**20), (8, "nvidia.com/gpu", 8), (8.0, "nvidia.com/gpu", 8), ("1k", "pods", 1000)],
)
def test_quantities_in_the_schedulers_units(text, resource, expected):
    assert quantity(resource, text) == expected


@pytest.mark.parametrize("bad", ["", "12x", "Mi", True, "1.2.3"])
def test_a_malformed_quantity_is_an_error(bad):
    with pytest.raises(QuantityError):
        quantity("memory", bad)


def test_untolerated_taint_is_pending_in_the_schedulers_words():
    [placed] = simulate([node(taints=[GPU_TAINT])], [pod(2)])
    assert placed.status == ks.PENDING and placed.pending == 2
    assert placed.message == "0/2 nodes are available: 2 node(s) had untolerated taint(s)."
    [placed] = simulate([node(taints=[GPU_TAINT])], [pod(2, tolerations=[TOLERATE_GPU])])
    assert placed.status == ks.SCHEDULED and placed.placed == {"gpu": 2}


def test_a_toleration_for_another_effect_does_not_match():
    no_execute = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}
    assert simulate([node(taints=[GPU_TAINT])], [pod(tolerations=[no_execute])])[0].status == ks.PENDING
    any_effect = {"key": "nvidia.com/gpu", "operator": "Exists"}
    assert simulate([node(taints=[GPU_TAINT])], [pod(tolerations=[any_effect])])[0].status == ks.SCHEDULED


def test_equal_tolerations_compare_values_and_an_empty_key_exists_matches_all():
    tainted = node(taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
    wrong = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    right = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}  # Equal by default
    assert simulate([tainted], [pod(tolerations=[wrong])])[0].message.endswith("untolerated taint(s).")
    assert simulate([tainted], [pod(tolerations=[right])])[0].status == ks.SCHEDULED
    assert simulate([tainted], [pod(tolerations=[{"operator": "Exists"}])])[0].status == ks.SCHEDULED


def test_prefer_no_schedule_does_not_filter():
    soft = node(taints=[{"key": "spot", "effect": "PreferNoSchedule"}])
    assert simulate([soft], [pod()])[0].status == ks.SCHEDULED


def test_missing_label_is_pending():
    [placed] = simulate([node(labels={"workload": "training"})], [pod(selector={"workload": "inference"})])
    assert placed.message == "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    assert simulate([node(labels={"workload": "inference"})], [pod(selector={"workload": "inference"})])[0].status == ks.SCHEDULED


@pytest.mark.parametrize(
    "operator, values, labels, matches",
    [
        ("In", ["a", "b"], {"k": "b"}, True),
        ("In", ["a"], {}, False),
        ("NotIn", ["a"], {"k": "b"}, True),
        ("NotIn", ["a"], {}, True),
        ("NotIn", ["a"], {"k": "a"}, False),
        ("Exists", [], {"k": ""}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("Gt", ["4"], {"k": "5"}, True),
        ("Gt", ["5"], {"k": "5"}, False),
        ("Lt", ["5"], {"k": "4"}, True),
    ],
)
def test_required_node_affinity_operators(operator, values, labels, matches):
    terms = ({"matchExpressions": [{"key": "k", "operator": operator, "values": values}]},)
    status = simulate([node(labels=labels)], [pod(terms=terms)])[0].status
    assert status == (ks.SCHEDULED if matches else ks.PENDING)


def test_affinity_terms_are_ored_and_expressions_anded():
    terms = (
        {"matchExpressions": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "c", "operator": "Exists"}]},
    )
    assert simulate([node(labels={"a": "1"})], [pod(terms=terms)])[0].status == ks.PENDING
    assert simulate([node(labels={"a": "1", "b": "1"})], [pod(terms=terms)])[0].status == ks.SCHEDULED
    assert simulate([node(labels={"c": "1"})], [pod(terms=terms)])[0].status == ks.SCHEDULED


@pytest.mark.parametrize(
    "resource, have, ask",
    [
        ("cpu", 8000, "8500m"),
        ("memory", 32 * GIB, "33Gi"),
        ("nvidia.com/gpu", 8, 9),
        ("vpc.amazonaws.com/efa", 32, 33),
        ("hugepages-2Mi", 5128 * 2 * 2**20, "10258Mi"),
        ("aws.amazon.com/neuron", 16, 17),
    ],
)
def test_a_request_larger_than_allocatable_is_insufficient(resource, have, ask):
    shape = node(**{resource: have})
    fits = simulate([shape], [pod(**{resource: have if resource != "cpu" else "8"})])[0]
    assert fits.status == ks.SCHEDULED and fits.per_node == {"gpu": 1}
    [placed] = simulate([shape], [pod(**{resource: ask})])
    assert placed.status == ks.PENDING and placed.message == f"0/2 nodes are available: 2 Insufficient {resource}."


def test_every_short_resource_is_counted_and_reasons_are_sorted():
    [placed] = simulate([node(), node("other", 1, taints=[GPU_TAINT])], [pod(cpu="9", memory="40Gi")])
    assert placed.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu, 2 Insufficient memory."
    )


def test_replicas_fill_nodes_and_the_rest_stay_pending():
    [placed] = simulate([node(nodes=2)], [pod(5, cpu="3")])  # 2 per node
    assert placed.per_node == {"gpu": 2} and placed.placed == {"gpu": 4} and placed.pending == 1
    assert placed.message == "0/2 nodes are available: 2 Insufficient cpu."


def test_the_pod_count_binds():
    [placed] = simulate([node(nodes=1, pods=3)], [pod(4)])
    assert placed.placed == {"gpu": 3} and placed.message == "0/1 nodes are available: 1 Too many pods."


def test_a_group_that_may_grow_is_placeable_after_scale_up():
    [placed] = simulate([node(nodes=0, min_nodes=0, max_nodes=3)], [pod(2, cpu="5")])
    assert placed.status == ks.AFTER_SCALE_UP and placed.scaled_up == {"gpu": 2} and placed.pending == 0
    [placed] = simulate([node(nodes=0, min_nodes=0, max_nodes=1)], [pod(2, cpu="5")])
    assert placed.status == ks.PENDING and placed.pending == 1 and placed.scaled_up == {"gpu": 1}


def test_a_pod_that_repels_its_own_kind_takes_one_node_each():
    """A required pod anti-affinity on kubernetes.io/hostname against the pod's own labels (Karpenter's
    controller): one per node, whatever room is left, the rest Pending in InterPodAffinity's words."""
    [placed] = simulate([node(nodes=2)], [PodTemplate(owner="Deployment kube-system/karpenter", replicas=3, requests={"cpu": 100}, one_per_node=True)])
    assert placed.per_node == {"gpu": 1} and placed.placed == {"gpu": 2} and placed.pending == 1
    assert placed.message == "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."
    [grown] = simulate([node(nodes=1, max_nodes=3)], [PodTemplate(owner="Deployment kube-system/karpenter", replicas=3, requests={"cpu": 100}, one_per_node=True)])
    assert grown.placed == {"gpu": 3} and grown.scaled_up == {"gpu": 2} and grown.pending == 0


def test_no_nodes_at_all():
    assert simulate([], [pod()])[0].message == "no nodes available to schedule pods"


def test_daemonsets_run_on_every_matching_node_and_take_their_requests():
    agent = PodTemplate(owner="DaemonSet kube-system/agent", replicas=None, tolerations=({"operator": "Exists"},), requests={"cpu": 1000})
    shapes = [node(), node("tainted", 3, taints=[GPU_TAINT])]
    daemon, app = simulate(shapes, [agent, pod(tolerations=[TOLERATE_GPU], cpu="7500m")])
    assert daemon.status == ks.DAEMON and daemon.placed == {"gpu": 2, "tainted": 3}
    assert app.status == ks.PENDING and app.message == "0/5 nodes are available: 5 Insufficient cpu."


def test_an_extended_resource_exists_only_where_its_device_plugin_runs():
    plugin = PodTemplate(owner="DaemonSet plugin", replicas=None, node_selector={"gpu": "yes"}, advertises=("nvidia.com/gpu",))
    shapes = [node("labelled", 1, labels={"gpu": "yes"}, **{"nvidia.com/gpu": 4}), node("bare", 1, **{"nvidia.com/gpu": 4})]
    _, app = simulate(shapes, [plugin, pod(2, **{"nvidia.com/gpu": 4})])
    assert app.placed == {"labelled": 1} and app.pending == 1
    assert app.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."


def test_a_plugin_resource_no_daemonset_advertises_is_taken_on_trust():
    shape = NodeShape("gpu", "t", {}, (), {"cpu": 1000, "memory": GIB, "pods": 10, "nvidia.com/gpu": 1}, 1, 1, 1,
                      plugin_resources=frozenset({"nvidia.com/gpu"}))
    [placed] = simulate([shape], [pod(**{"nvidia.com/gpu": 1})])
    assert placed.status == ks.SCHEDULED and placed.unverified
    assert "no device plugin in the plan advertises it" in placed.notes[0]


def test_time_slicing_multiplies_gpus_and_refuses_requests_above_one():
    sliced = NodeShape("g5", "g5.2xlarge", {}, (), {"cpu": 8000, "memory": 8 * GIB, "pods": 30, "nvidia.com/gpu": 4}, 1, 1, 1,
                       single_unit_resources=frozenset({"nvidia.com/gpu"}))
    [one] = simulate([sliced], [pod(4, **{"nvidia.com/gpu": 1})])
    assert one.status == ks.SCHEDULED and one.per_node == {"g5": 4}
    [two] = simulate([sliced], [pod(**{"nvidia.com/gpu": 2})])
    assert two.status == ks.PENDING and "failRequestsGreaterThanOne" in two.message


def test_device_bound_shares_must_fit_one_device():
    # Two GPUs of 15 GiB: a 10 GiB share fits each once; the 10 GiB left over (5 + 5) is on two devices.
    shared = NodeShape("pool", "t", {}, (), {"aliyun.com/gpu-mem": 30}, 1, 1, 1,
                       unknown_resources=frozenset({"cpu", "memory", "pods"}), devices=({"aliyun.com/gpu-mem": 15}, {"aliyun.com/gpu-mem": 15}))
    [placed] = simulate([shared], [pod(3, **{"aliyun.com/gpu-mem": 10})])
    assert placed.per_node == {"pool": 2} and placed.placed == {"pool": 2} and placed.pending == 1
    assert "Insufficient aliyun.com/gpu-mem on any one device" in placed.message


def test_tight_memory_is_noted_not_pending():
    shape = NodeShape("n", "t", {}, (), {"cpu": 4000, "memory": 10 * GIB, "pods": 10}, 1, 1, 1, memory_estimate=9 * GIB)
    [placed] = simulate([shape], [pod(memory="9.5Gi")])
    assert placed.status == ks.SCHEDULED and placed.unverified and "memory is tight" in placed.notes[0]
    [roomy] = simulate([shape], [pod(memory="8Gi")])
    assert not roomy.notes


def test_a_plugin_that_runs_on_no_node_of_a_group_it_serves_is_named():
    plugin = PodTemplate(owner="DaemonSet plugin", replicas=None, node_selector={"gpu": "yes"}, advertises=("nvidia.com/gpu",))
    served = node("labelled", 1, labels={"gpu": "yes"}, **{"nvidia.com/gpu": 4})
    missed = node("bare", 2, **{"nvidia.com/gpu": 4})
    empty = node("empty", 0, max_nodes=2, **{"nvidia.com/gpu": 4})  # no node yet: nothing to serve
    cpu_only = node("cpu", 2)
    [result] = simulate([served, missed, empty, cpu_only], [plugin])
    assert [(shape.group, wanted) for shape, wanted in ks.unserved(result, [served, missed, empty, cpu_only])] == [("bare", ["nvidia.com/gpu"])]


def test_a_group_whose_gpus_another_daemonset_serves_is_not_unserved():
    """A device plugin kept off a group where the DRA driver's kubelet plugin serves the GPUs as
    devices instead: nothing is left unserved there (one allocator per GPU)."""
    plugin = PodTemplate(owner="DaemonSet plugin", replicas=None, node_selector={"plugin": "on"}, advertises=("nvidia.com/gpu",))
    dra = PodTemplate(owner="DaemonSet dra", replicas=None, node_selector={"plugin": "off"}, serves_instead=("nvidia.com/gpu",))
    drivers = node("dra", 1, labels={"plugin": "off"}, **{"nvidia.com/gpu": 8})
    result, served = simulate([drivers], [plugin, dra])
    assert ks.unserved(result, [drivers], [result, served]) == []
    assert [shape.group for shape, _ in ks.unserved(result, [drivers], [result])] == ["dra"]


# --- notes, scale-up and bookkeeping at their edges ------------------------------------------------

def test_a_scaled_up_node_counts_its_daemonsets_memory_toward_tight():
    agent = PodTemplate(owner="DaemonSet kube-system/agent", replicas=None, requests={"memory": 2 * GIB})
    shape = NodeShape("n", "t", {}, (), {"cpu": 4000, "memory": 10 * GIB, "pods": 10}, 0, 1, 0, memory_estimate=9 * GIB)
    _, app = simulate([shape], [agent, pod(memory="7.5Gi")])  # 2 + 7.5 > 9: tight on the new node
    assert app.status == ks.AFTER_SCALE_UP and any("memory is tight" in n for n in app.notes)
    _, app = simulate([shape], [agent, pod(memory="7Gi")])  # 2 + 7 == 9: exactly the estimate is not tight
    assert not app.notes


def test_a_pod_without_a_memory_request_adds_no_memory():
    shape = NodeShape("n", "t", {}, (), {"cpu": 4000, "memory": 10 * GIB, "pods": 10}, 1, 1, 1, memory_estimate=9 * GIB)
    _, app = simulate([shape], [pod(cpu="1"), pod(memory="9Gi")])
    assert app.status == ks.SCHEDULED and not app.notes


def test_a_zero_request_of_a_plugin_resource_needs_no_plugin():
    shape = NodeShape("gpu", "t", {}, (), {"cpu": 1000, "memory": GIB, "pods": 10, "nvidia.com/gpu": 1}, 1, 1, 1,
                      plugin_resources=frozenset({"nvidia.com/gpu"}))
    [placed] = simulate([shape], [pod(cpu="1", **{"nvidia.com/gpu": 0})])
    assert placed.notes == []


def test_only_the_uncertain_labels_a_pod_selects_are_noted():
    zone = "topology.kubernetes.io/zone"
    shape = NodeShape("gpu", "t", {zone: "a", "team": "ml"}, (), {"cpu": 1000, "memory": GIB, "pods": 10}, 1, 1, 1,
                      uncertain_labels=frozenset({zone}))
    [placed] = simulate([shape], [pod(selector={zone: "a", "team": "ml"})])
    assert placed.notes == [f"node group gpu: {zone} differs between its nodes or is unknown"]
    [placed] = simulate([shape], [pod(selector={"team": "ml"})])
    assert placed.notes == []


def test_assumptions_are_noted_for_replicas_that_reserve_cpu_or_memory_where_they_land():
    assumed = NodeShape("br", "t", {}, (), {"cpu": 4000, "memory": GIB, "pods": 10}, 1, 1, 1, assumptions=("reservations assumed",))
    other = NodeShape("al", "t", {"x": "y"}, (), {"cpu": 4000, "memory": GIB, "pods": 10}, 1, 1, 1, assumptions=("never here",))
    [placed] = simulate([assumed, other], [pod(cpu="1")])
    assert placed.notes == ["reservations assumed"]  # placed on an existing node of br only
    [placed] = simulate([assumed, other], [pod(memory="1Mi")])
    assert placed.notes == ["reservations assumed"]
    [gpus_only] = simulate([assumed], [pod(**{"nvidia.com/gpu": 0})])
    assert gpus_only.notes == []
    daemon = PodTemplate(owner="DaemonSet d", replicas=None, requests={"cpu": 100})
    [placed] = simulate([assumed], [daemon])
    assert placed.notes == []
    grown = NodeShape("br", "t", {}, (), {"cpu": 4000, "memory": GIB, "pods": 10}, 0, 1, 0, assumptions=("reservations assumed",))
    [placed] = simulate([grown], [pod(cpu="1")])
    assert placed.scaled_up == {"br": 1} and placed.notes == ["reservations assumed"]


def test_unserved_is_about_device_plugin_daemonsets_only():
    served = node("bare", 1, **{"nvidia.com/gpu": 4})
    [deployment] = simulate([served], [PodTemplate(owner="Deployment x", replicas=1, node_selector={"no": "match"}, advertises=("nvidia.com/gpu",))])
    assert ks.unserved(deployment, [served]) == []
    [quiet] = simulate([served], [PodTemplate(owner="DaemonSet y", replicas=None, node_selector={"no": "match"})])
    assert ks.unserved(quiet, [served]) == []


def test_scale_up_tries_every_group_in_order():
    full = node("full", 1, max_nodes=1)
    tainted = node("tainted", 0, min_nodes=0, max_nodes=2, taints=[GPU_TAINT])
    open_ = node("open", 0, min_nodes=0, max_nodes=2)
    [placed] = simulate([full, tainted, open_], [pod(3, cpu="5")])
    assert placed.placed == {"full": 1, "open": 2} and placed.scaled_up == {"open": 2} and placed.pending == 0


def test_a_resource_no_landed_plugin_advertises_is_none():
    plugin = PodTemplate(owner="DaemonSet plugin", replicas=None, node_selector={"gpu": "yes"}, advertises=("nvidia.com/gpu",))
    [_, app] = simulate([node("bare", 1, **{"nvidia.com/gpu": 4})], [plugin, pod(**{"nvidia.com/gpu": 1})])
    assert app.status == ks.PENDING and app.per_node == {} and app.message == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def test_tight_is_a_byte_past_the_estimate():
    shape = NodeShape("n", "t", {}, (), {"cpu": 4000, "memory": 10 * GIB, "pods": 10}, 1, 1, 1, memory_estimate=9 * GIB)
    _, app = simulate([shape], [pod(cpu="1"), pod(memory=str(9 * GIB + 1))])
    assert any("memory is tight" in n for n in app.notes)


def test_a_zero_request_leaves_none_of_a_resource_the_node_lacks():
    shape = node("cpu", 1)
    _, app = simulate([shape], [pod(cpu="1", **{"nvidia.com/gpu": 0}), pod(**{"nvidia.com/gpu": 1})])
    assert app.status == ks.PENDING and app.message == "0/1 nodes are available: 1 Insufficient nvidia.com/gpu."


def test_the_nodes_a_pod_waits_for_read_in_words():
    from gpufleet.simulate.k8s_scheduler import new_nodes

    assert new_nodes({"g5": 1, "p5": 2}) == "1 new node of g5, 2 new nodes of p5"
    assert new_nodes({}) == ""


# --- counts: identical nodes and replicas are simulated as counts -----------------------------------


def test_a_billion_nodes_and_two_billion_replicas_are_counted_not_walked():
    import tracemalloc

    tracemalloc.start()
    [placed] = simulate([node("big", nodes=10**9, max_nodes=10**9, pods=4)], [pod(replicas=2**31, cpu="1")])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert placed.placed == {"big": 2**31} and placed.pending == 0 and placed.status == "scheduled"
    assert peak < 5 * 2**20, peak  # a few node states, whatever the counts


def test_replicas_past_every_node_are_pending_with_the_nodes_counted():
    [placed] = simulate([node("a", nodes=10**6, pods=2), node("b", nodes=3, cpu=500)], [pod(replicas=5 * 10**6, cpu="1")])
    assert placed.placed == {"a": 2 * 10**6} and placed.pending == 3 * 10**6
    assert placed.message == "0/1000003 nodes are available: 1000000 Too many pods, 3 Insufficient cpu."


def test_scale_up_adds_as_many_nodes_as_the_replicas_need_up_to_max_size():
    [placed] = simulate([node("a", nodes=1, max_nodes=10**6, pods=3)], [pod(replicas=10, cpu="1")])
    assert placed.placed == {"a": 10} and placed.scaled_up == {"a": 3} and placed.status == "after-scale-up"
    [capped] = simulate([node("a", nodes=1, max_nodes=2, pods=3)], [pod(replicas=10, cpu="1")])
    assert capped.placed == {"a": 6} and capped.scaled_up == {"a": 1} and capped.pending == 4


def _one_by_one(shapes, template):
    """The reference: replica by replica, first fit over every node, new nodes of the first group
    that may grow (the scheduler's rule stated without counts)."""
    from collections import Counter

    nodes = [dict(s.allocatable, group=s.group) for s in shapes for _ in range(s.nodes)]
    grown, placed, pending = Counter(), Counter(), 0
    need = {k: v for k, v in template.requests.items()} | {"pods": 1}

    def fits(n):
        return all(n.get(k, 0) >= v for k, v in need.items())

    for _ in range(template.replicas):
        n = next((n for n in nodes if fits(n)), None)
        if n is None:
            shape = next((s for s in shapes if s.nodes + grown[s.group] < s.max_nodes and fits(dict(s.allocatable))), None)
            if shape is not None:
                grown[shape.group] += 1
                n = dict(shape.allocatable, group=shape.group)
                nodes.append(n)
        if n is None:
            pending += 1
            continue
        for k, v in need.items():
            n[k] -= v
        placed[n["group"]] += 1
    return dict(placed), dict(grown), pending


@pytest.mark.parametrize("seed", range(40))
def test_counts_agree_with_placing_replica_by_replica(seed):
    import random

    rnd = random.Random(seed)
    shapes = [
        node(f"g{i}", nodes=rnd.randint(0, 4), max_nodes=None, pods=rnd.randint(1, 6), cpu=rnd.choice([1000, 2500, 4000]))
        for i in range(rnd.randint(1, 3))
    ]
    shapes = [NodeShape(**{**s.__dict__, "max_nodes": s.nodes + rnd.randint(0, 3)}) for s in shapes]
    template = pod(replicas=rnd.randint(1, 40), cpu=rnd.choice(["500m", "1", "2"]))
    [result] = simulate(shapes, [template])
    assert (result.placed, result.scaled_up, result.pending) == _one_by_one(shapes, template)


def test_one_of_two_plugins_that_advertise_a_resource_is_enough():
    standalone = PodTemplate(owner="DaemonSet plugin", replicas=None, node_selector={"gpu": "yes"}, advertises=("nvidia.com/gpu",))
    operator = PodTemplate(owner="DaemonSet operator-plugin", replicas=None, node_selector={"operator": "yes"}, advertises=("nvidia.com/gpu",))
    shape = node("labelled", 1, labels={"gpu": "yes"}, **{"nvidia.com/gpu": 4})
    _, _, app = simulate([shape], [standalone, operator, pod(1, **{"nvidia.com/gpu": 4})])
    assert app.placed == {"labelled": 1}


def test_a_plugin_resource_of_any_group_is_taken_on_trust_and_noted():
    cpu = node("cpu", 1)
    gpu = NodeShape("gpu", "t", {}, (), {"cpu": 1000, "memory": GIB, "pods": 10, "nvidia.com/gpu": 1}, 1, 1, 1, plugin_resources=frozenset({"nvidia.com/gpu"}))
    [placed] = simulate([cpu, gpu], [pod(**{"nvidia.com/gpu": 1})])
    assert placed.placed == {"gpu": 1} and any("no device plugin in the plan advertises it" in n for n in placed.notes)


def test_a_later_template_finds_the_room_an_earlier_one_left_on_its_nodes():
    """Nodes an earlier template part-filled and nodes it left untouched both stay for the next one."""
    first, second = pod(replicas=1, cpu="1"), pod(replicas=5, cpu="1")
    _, placed = simulate([node("a", nodes=3, pods=2)], [first, second])
    assert placed.placed == {"a": 5} and placed.pending == 0
    _, placed = simulate([node("a", nodes=3, pods=2)], [pod(replicas=2, cpu="1"), pod(replicas=4, cpu="1")])
    assert placed.placed == {"a": 4} and placed.pending == 0


def _cpu(amount: str, **more) -> dict:
    return {"resources": {"requests": {"cpu": amount}}, **more}


@pytest.mark.parametrize(
    "spec, per_node",
    [
        # A sidecar runs beside the containers: 1 + 2 CPUs a pod (component-helpers PodRequests).
        ({"containers": [_cpu("1")], "initContainers": [_cpu("2", restartPolicy="Always")]}, 2),
        # The RuntimeClass's overhead counts too: 1 + 1.
        ({"containers": [_cpu("1")], "overhead": {"cpu": "1"}}, 4),
        # Pod-level requests replace the containers' sum.
        ({"containers": [_cpu("1")], "resources": {"requests": {"cpu": "4"}}}, 2),
        # A plain init container only has to fit on its own.
        ({"containers": [_cpu("1")], "initContainers": [_cpu("2")]}, 4),
    ],
    ids=["sidecar", "overhead", "pod-level", "init"],
)
def test_a_pod_takes_what_kube_scheduler_counts_for_it(spec, per_node):
    [result] = simulate([node(nodes=1)], [pod_template("Deployment default/app", 1, spec)])
    assert result.per_node == {"gpu": per_node}


def _host_port(port: int) -> dict:
    return {"containers": [{"name": "c", "ports": [{"containerPort": port, "hostPort": port}]}]}


def test_two_pods_asking_for_one_host_port_never_share_a_node():
    [result] = simulate([node(nodes=2)], [pod_template("Deployment default/app", 3, _host_port(8080))])
    assert (result.per_node, result.placed, result.pending) == ({"gpu": 1}, {"gpu": 2}, 1)
    assert result.message == "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."


def test_a_daemonset_s_host_port_is_taken_on_every_node_it_runs_on():
    daemon = pod_template("DaemonSet kube-system/exporter", None, _host_port(9100))
    [_, result] = simulate([node(nodes=2, max_nodes=3)], [daemon, pod_template("Deployment default/app", 1, _host_port(9100))])
    assert (result.status, result.per_node, result.scaled_up) == ("pending", {}, {})
    assert result.message == "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
