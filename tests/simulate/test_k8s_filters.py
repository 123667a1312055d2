"""src/gpufleet/simulate/k8s_filters.py: kube-scheduler's filters at their edges, in the scheduler's
own words (TaintToleration, NodeAffinity, NodeResourcesFit, the kubelet's admission, FitError)."""

from __future__ import annotations

from collections import Counter

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import k8s as k8s_rules
from gpufleet.simulate import k8s_filters as kf
from gpufleet.simulate.k8s_shapes import NodeShape, PodTemplate


CAT = catalog.load()
EKS = CAT.facts.eks


def node(**kw) -> NodeShape:
    base = dict(group="g", instance_type="t", labels={}, taints=(), allocatable={"cpu": 4000, "pods": 10}, nodes=1, max_nodes=1, min_nodes=1)
    base.update(kw)
    return NodeShape(**base)


def pod(**kw) -> PodTemplate:
    base = dict(owner="Deployment default/app", replicas=1)
    base.update(kw)
    return PodTemplate(**base)


def test_a_taint_keeps_its_value_only_when_it_has_one():
    assert k8s_rules.taint({"key": "k", "effect": "NO_SCHEDULE"}, EKS) == {"key": "k", "effect": "NoSchedule"}
    assert k8s_rules.taint({"key": "k", "value": "", "effect": "NO_EXECUTE"}, EKS) == {"key": "k", "effect": "NoExecute"}
    assert k8s_rules.taint({"key": "k", "value": "v", "effect": "NoSchedule"}, EKS) == {"key": "k", "value": "v", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("toleration", "matches"),
    [
        ({"key": "gpu", "operator": "Exists"}, True),
        ({"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}, True),
        ({"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, False),  # another effect
        ({"key": "other", "operator": "Exists"}, False),
        ({"operator": "Exists"}, True),  # an empty key with Exists tolerates every taint
        ({"operator": "Equal", "value": "yes"}, False),  # an empty key needs Exists
        ({"key": "gpu", "value": "yes"}, True),  # Equal is the default operator
        ({"key": "gpu", "operator": "Equal", "value": "no"}, False),
        ({"key": "gpu", "operator": "Sometimes", "value": "yes"}, False),
    ],
)
def test_toleration_matching(toleration, matches):
    assert k8s_rules.toleration_matches(toleration, {"key": "gpu", "value": "yes", "effect": "NO_SCHEDULE"}, EKS) is matches


def test_only_noschedule_and_noexecute_taints_keep_pods_off_and_every_taint_is_looked_at():
    soft = {"key": "soft", "effect": "PreferNoSchedule"}
    hard = {"key": "hard", "value": "x", "effect": "NoExecute"}
    assert kf.untolerated_taint(pod(), node(taints=(soft,)), CAT) is None
    assert kf.untolerated_taint(pod(), node(taints=(soft, hard)), CAT) == hard
    tolerant = pod(tolerations=({"key": "hard", "operator": "Exists"},))
    assert kf.untolerated_taint(tolerant, node(taints=(hard, {"key": "next", "effect": "NoSchedule"})), CAT)["key"] == "next"
    assert kf.filter_reasons(pod(), node(taints=(hard,), kubernetes_version="1.33"), {"pods": 1}, CAT) == ["node(s) had untolerated taint {hard: x}"]


@pytest.mark.parametrize(
    "version, words",
    [
        ("1.33", "node(s) had untolerated taint {gpu: }"),
        ("v1.33.5", "node(s) had untolerated taint {gpu: }"),
        ("1.34", "node(s) had untolerated taint(s)"),  # 1.34.2 took the change; a control plane runs its minor's latest patch
        ("1.35", "node(s) had untolerated taint(s)"),
        (None, "node(s) had untolerated taint(s)"),  # a cluster the plan gives no version of is taken as current
    ],
)
def test_the_untolerated_taint_message_is_the_clusters_own_versions(version, words):
    taint = {"key": "gpu", "effect": "NoSchedule"}
    assert kf.filter_reasons(pod(), node(taints=(taint,), kubernetes_version=version), {"pods": 1}, CAT) == [words]


@pytest.mark.parametrize(
    ("expression", "matches"),
    [
        ({"key": "n", "operator": "Gt", "values": ["3"]}, True),
        ({"key": "n", "operator": "Gt", "values": ["4"]}, False),  # not greater than itself
        ({"key": "n", "operator": "Lt", "values": ["5"]}, True),
        ({"key": "n", "operator": "Lt", "values": ["4"]}, False),
        ({"key": "n", "operator": "Gt", "values": ["3", "2"]}, False),  # Gt takes one value
        ({"key": "missing", "operator": "Gt", "values": ["3"]}, False),
        ({"key": "name", "operator": "Gt", "values": ["3"]}, False),  # not a number
        ({"key": "n", "operator": "In", "values": ["4"]}, True),
        ({"key": "n", "operator": "In", "values": [4]}, False),  # values are strings: a number is no label value
        ({"key": "n", "operator": "In", "values": []}, False),  # In needs a value
        ({"key": "n", "operator": "Exists", "values": ["4"]}, False),  # Exists takes none
        ({"key": "n", "operator": "Gt", "values": ["3.5"]}, False),  # Gt needs an integer
        ({"key": "bad key!", "operator": "Exists"}, False),  # not a qualified name
        ({"key": "missing", "operator": "NotIn", "values": ["-bad-"]}, False),  # the term does not parse: even NotIn
        ({"key": "n", "operator": "NotIn", "values": ["4"]}, False),
        ({"key": "missing", "operator": "NotIn", "values": ["4"]}, True),
        ({"key": "n", "operator": "Exists"}, True),
        ({"key": "n", "operator": "DoesNotExist"}, False),
        ({"key": "n", "operator": "Near", "values": ["4"]}, False),
    ],
)
def test_node_affinity_expressions(expression, matches):
    labels = {"n": "4", "name": "gpu"}
    assert kf.affinity_matches(pod(affinity_terms=({"matchExpressions": [expression]},)), labels, CAT) is matches


def test_a_term_with_an_invalid_value_matches_no_node_in_kube_schedulers_words():
    """kube-scheduler's node_affinity_test.go, "Pod with an invalid value in Affinity term won't be
    scheduled onto the node": NotIn an invalid label value, against a node labelled foo=bar."""
    term = {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["invalid value: ___@#$%^"]}]}
    shape = node(labels={"foo": "bar"})
    assert kf.filter_reasons(pod(affinity_terms=(term,)), shape, {"pods": 1}, CAT) == ["node(s) didn't match Pod's node affinity/selector"]
    valid = {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["baz"]}]}
    assert kf.filter_reasons(pod(affinity_terms=(valid,)), shape, {"pods": 1}, CAT) == []
    # Another, valid term of the same pod still matches: terms are ORed, the invalid one alone is dropped.
    assert kf.affinity_matches(pod(affinity_terms=(term, valid)), {"foo": "bar"}, CAT)


def test_affinity_terms_are_ored_and_an_empty_term_matches_nothing():
    exists = {"key": "n", "operator": "Exists"}
    missing = {"key": "x", "operator": "Exists"}
    assert kf.affinity_matches(pod(affinity_terms=({"matchExpressions": [missing]}, {"matchExpressions": [exists]})), {"n": "1"}, CAT)
    assert not kf.affinity_matches(pod(affinity_terms=({"matchExpressions": []},)), {"n": "1"}, CAT)
    assert not kf.affinity_matches(pod(node_selector={"n": 1}, affinity_terms=None), {"n": "2"}, CAT)
    assert kf.affinity_matches(pod(node_selector={"n": 1}), {"n": "1"}, CAT)


def test_selected_keys_are_the_selectors_and_every_terms_expressions():
    terms = ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"matchExpressions": [{"key": "b", "operator": "Exists"}]}, {})
    assert kf.selected_keys(pod(node_selector={"s": "1"}, affinity_terms=terms)) == {"s", "a", "b"}


def test_resources_fit_in_kube_schedulers_words():
    shape = node(allocatable={"cpu": 4000, "pods": 10, "nvidia.com/gpu": 1}, unknown_resources=frozenset({"mig"}))
    asking = pod(requests={"cpu": 4000, "nvidia.com/gpu": 1, "mig": 5, "zero": 0})
    assert kf.insufficient(asking, {"cpu": 4000, "pods": 1, "nvidia.com/gpu": 1}, shape) == []  # exactly enough
    assert kf.insufficient(asking, {"cpu": 3999, "pods": 0, "nvidia.com/gpu": 0}, shape) == [
        "Too many pods", "Insufficient cpu", "Insufficient nvidia.com/gpu",
    ]
    unknown_pods = node(unknown_resources=frozenset({"pods"}))
    assert kf.insufficient(pod(), {}, unknown_pods) == []


def test_device_bound_requests_fit_one_device():
    devices = ({"gpu-mem": 8}, {"gpu-mem": 16})
    shape = node(allocatable={"cpu": 4000, "pods": 10, "gpu-mem": 24}, devices=devices)
    asking = pod(requests={"gpu-mem": 12, "cpu": 0})
    assert kf.device_bound(asking, shape) == {"gpu-mem": 12}
    assert kf.device_bound(pod(requests={"gpu-mem": 0}), shape) == {}
    assert kf.device_for(asking, shape, devices) == 1
    assert kf.device_for(pod(requests={"gpu-mem": 16}), shape, devices) == 1  # exactly a device's memory
    assert kf.device_for(pod(requests={"gpu-mem": 17}), shape, devices) is None
    assert kf.insufficient(pod(requests={"gpu-mem": 17}), {"pods": 5, "gpu-mem": 24}, shape, devices) == ["Insufficient gpu-mem on any one device"]
    assert kf.fit_count(asking, {"pods": 10, "cpu": 4000}, shape) == 1  # one 12 on the 16 GiB device, none on the 8
    assert kf.fit_count(pod(requests={"gpu-mem": 4}), {"pods": 10}, shape) == 6
    assert kf.fit_count(pod(requests={"gpu-mem": 4}), {"pods": 10}, shape, ({"gpu-mem": 4},)) == 1


def test_fit_count_takes_the_scarcest_resource():
    shape = node(allocatable={"cpu": 4000, "pods": 10, "nvidia.com/gpu": 4}, unknown_resources=frozenset({"mig"}))
    assert kf.fit_count(pod(requests={"cpu": 1000, "nvidia.com/gpu": 1}), {"cpu": 4000, "pods": 10, "nvidia.com/gpu": 3}, shape) == 3
    assert kf.fit_count(pod(requests={"cpu": 1500}), {"cpu": 4000, "pods": 10}, shape) == 2
    assert kf.fit_count(pod(requests={"cpu": 1000, "mig": 9}), {"cpu": 4000, "pods": 2}, shape) == 2  # pods bound it
    assert kf.fit_count(pod(requests={"cpu": 1000}), {"cpu": 4000, "pods": -1}, shape) == 0  # never negative
    no_pods = node(unknown_resources=frozenset({"pods"}))
    assert kf.fit_count(pod(requests={"cpu": 0}), {}, no_pods) is None  # nothing bounds it: not known


def test_a_time_sliced_gpu_admits_one_at_a_time():
    shape = node(allocatable={"pods": 10, "nvidia.com/gpu": 8}, single_unit_resources=frozenset({"nvidia.com/gpu"}))
    assert kf.filter_reasons(pod(requests={"nvidia.com/gpu": 1}), shape, {"pods": 10, "nvidia.com/gpu": 8}, CAT) == []
    [reason] = kf.filter_reasons(pod(requests={"nvidia.com/gpu": 2}), shape, {"pods": 10, "nvidia.com/gpu": 8}, CAT)
    assert reason == (
        "node(s) time-slice nvidia.com/gpu with failRequestsGreaterThanOne: the kubelet rejects a request of 2 (UnexpectedAdmissionError)"
    )


def test_the_first_failing_filter_speaks():
    tainted = node(taints=({"key": "k", "effect": "NoSchedule"},), labels={"a": "1"})
    assert kf.filter_reasons(pod(node_selector={"a": "2"}), tainted, {"pods": 0}, CAT) == ["node(s) had untolerated taint(s)"]
    assert kf.filter_reasons(pod(node_selector={"a": "2"}), node(labels={"a": "1"}), {"pods": 0}, CAT) == ["node(s) didn't match Pod's node affinity/selector"]
    assert kf.filter_reasons(pod(), node(), {"pods": 0}, CAT) == ["Too many pods"]


def test_fit_errors_message():
    assert kf.unavailable_message(0, Counter()) == "no nodes available to schedule pods"
    message = kf.unavailable_message(3, Counter({"Insufficient cpu": 2, "Too many pods": 1}))
    assert message == "0/3 nodes are available: 1 Too many pods, 2 Insufficient cpu."


def test_what_a_node_does_not_list_it_does_not_have():
    """A resource absent from the free amounts (or from a device) counts as none of it."""
    shape = node(allocatable={"cpu": 4000, "pods": 10})
    assert kf.insufficient(pod(requests={"nvidia.com/gpu": 1}), {"pods": 5}, shape) == ["Insufficient nvidia.com/gpu"]
    assert kf.insufficient(pod(), {}, shape) == ["Too many pods"]
    assert kf.fit_count(pod(requests={"nvidia.com/gpu": 1}), {"pods": 5}, shape) == 0
    assert kf.fit_count(pod(requests={"cpu": 0}), {"cpu": 4000}, shape) == 0  # no pod count: no room
    devices = ({"other": 5}, {"gpu-mem": 8})
    with_devices = node(allocatable={"pods": 10, "gpu-mem": 8}, devices=devices)
    assert kf.device_for(pod(requests={"gpu-mem": 1}), with_devices, devices) == 1
    assert kf.fit_count(pod(requests={"gpu-mem": 4}), {"pods": 10}, with_devices) == 2
    assert kf.fit_count(pod(requests={"gpu-mem": 1}), {"pods": 10}, with_devices) == 8  # none on the device without gpu-mem


def test_a_request_of_one_device_unit_is_device_bound():
    shape = node(allocatable={"pods": 10, "gpu-mem": 8}, devices=({"gpu-mem": 8},))
    assert kf.device_bound(pod(requests={"gpu-mem": 1}), shape) == {"gpu-mem": 1}


def test_a_request_of_zero_is_never_short_even_on_an_overcommitted_node():
    assert kf.insufficient(pod(requests={"cpu": 0}), {"pods": 1, "cpu": -1}, node()) == []


def test_a_term_with_one_requirement_that_does_not_parse_matches_no_node_though_the_rest_match():
    term = {"matchExpressions": [{"key": "n", "operator": "In", "values": ["4"]}, {"key": "x", "operator": "NotIn", "values": ["-bad-"]}]}
    assert not kf.affinity_matches(pod(affinity_terms=(term,)), {"n": "4"}, CAT)


def test_device_bound_requests_fit_one_device_that_holds_all_of_them():
    """Two device-bound resources: a device must hold both (device_for), and a device holds as many
    pods as its scarcer resource allows (fit_count)."""
    devices = ({"a": 4, "b": 1}, {"a": 1, "b": 4})
    shape = node(allocatable={"cpu": 4000, "pods": 10, "a": 5, "b": 5}, devices=devices)
    both = pod(requests={"a": 1, "b": 1})
    assert kf.fit_count(both, shape.allocatable, shape, devices) == 2
    assert kf.device_for(pod(requests={"a": 2, "b": 1}), shape, devices) == 0
    assert kf.device_for(pod(requests={"a": 1, "b": 2}), shape, devices) == 1
