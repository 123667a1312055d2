"""src/gpufleet/rules/k8s.py: Kubernetes' own validation of label and taint keys and values
(apimachinery's IsQualifiedName and IsValidLabelValue), the kubelet's label namespaces, requests
equal to limits, and one GPU driver per node, at their bounds. The bounds are read from the curated
facts (which cite the Kubernetes sources), not typed here."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import k8s as k8s_rules

FACTS = catalog.load().facts
K8S = FACTS.kubernetes
NAME_MAX, PREFIX_MAX, VALUE_MAX = K8S.qualified_name.name_max, K8S.qualified_name.prefix_max, K8S.label_value_max


def _prefix(length: int) -> str:
    """A DNS subdomain of `length` characters (labels of at most 63)."""
    parts, left = [], length
    while left > 0:
        take = min(63, left)
        parts.append("a" * take)
        left -= take + 1
    return ".".join(parts)[:length].rstrip(".")


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("gpu", None),
        ("n" * NAME_MAX, None),
        ("n" * (NAME_MAX + 1), "the name part must be at most"),
        ("-gpu", "the name part must be at most"),
        ("example.com/gpu", None),
        (_prefix(PREFIX_MAX) + "/gpu", None),
        (_prefix(PREFIX_MAX + 1) + "/gpu", "the prefix must be a DNS subdomain"),
        ("Example.com/gpu", "the prefix must be a DNS subdomain"),
        ("a/b/c", "has more than one '/'"),
        ("", "it must be a non-empty string"),
        (7, "it must be a non-empty string"),
    ],
)
def test_qualified_names(key, words):
    reason = k8s_rules.qualified_name_problem(key, K8S)
    assert (reason is None) if words is None else (words in reason)


@pytest.mark.parametrize(
    ("value", "words"),
    [("", None), ("v" * VALUE_MAX, None), ("v" * (VALUE_MAX + 1), "is not a label value: at most"), ("-v", "is not a label value"), (3, "it must be a string")],
)
def test_label_values(value, words):
    reason = k8s_rules.label_value_problem(value, K8S)
    assert (reason is None) if words is None else (words in reason)


@pytest.mark.parametrize(
    ("key", "refused"),
    [
        ("kubernetes.io/role", True),
        ("node-role.kubernetes.io/gpu", True),  # a subdomain of a restricted namespace
        ("example.k8s.io/x", True),
        ("kubernetes.io/arch", False),  # the kubelet's own well-known keys
        ("node.kubernetes.io/lifecycle", False),  # an allowed namespace
        ("team.node.kubernetes.io/x", False),  # a subdomain of an allowed one
        ("notkubernetes.io/x", False),  # not a subdomain: only the suffix matches
        ("example.com/x", False),
        ("gpu", False),
    ],
)
def test_the_kubelets_label_namespaces(key, refused):
    reason = k8s_rules.kubelet_label_problem(key, K8S)
    assert (reason is not None) is refused
    if refused:
        assert "which the kubelet may not set on its Node" in reason and reason.startswith(f"{key!r} is in the {key.split('/')[0]} namespace")


def test_node_label_problems_name_every_field():
    labels = {"ok": "yes", "bad key!": "v", "team": "-bad", "kubernetes.io/role": "gpu"}
    taints = [{"key": "gpu", "effect": "NoSchedule"}, {"key": "x/y/z", "value": "bad value", "effect": "NoSchedule"}, {"key": "k", "value": None}]
    found = [(where, value) for where, value, _ in k8s_rules.node_label_problems(labels, taints, K8S)]
    assert found == [
        (("labels", "bad key!"), "bad key!"),
        (("labels", "team"), "-bad"),
        (("labels", "kubernetes.io/role"), "kubernetes.io/role"),
        (("taints", 1, "key"), "x/y/z"),
        (("taints", 1, "value"), "bad value"),
    ]


def test_requests_equal_limits_reads_the_wires_doubles():
    eks = FACTS.eks
    gpu = eks.accelerator_resources.nvidia
    assert k8s_rules.requests_equal_limits("c", {"requests": {gpu: 1}, "limits": {gpu: 1.0}}, eks) == []
    assert k8s_rules.requests_equal_limits("c", {"requests": {gpu: 1.5}, "limits": {gpu: 1.0}}, eks) == [f"container 'c': {gpu} request 1.5 != limit 1 (no overcommit)"]
    assert k8s_rules.requests_equal_limits("c", {"requests": {"cpu": 1}, "limits": {"cpu": 2}}, eks) == []  # not an extended resource
    # cpu sorts before the extended resource and is passed over, not the end of the check.
    both = k8s_rules.requests_equal_limits("c", {"requests": {"cpu": 1, gpu: 1}, "limits": {"cpu": 2, gpu: 2}}, eks)
    assert both == [f"container 'c': {gpu} request 1 != limit 2 (no overcommit)"]


@pytest.mark.parametrize(
    ("image_driver", "operator", "words"),
    [("the AMI", True, "two drivers"), (None, False, "leaves the nodes without a GPU driver"), ("the AMI", False, None), (None, True, None)],
)
def test_one_driver_per_node(image_driver, operator, words):
    reason = k8s_rules.one_driver_problem(image_driver, "setting", operator)
    assert (reason is None) if words is None else (words in reason)


@pytest.mark.parametrize(
    "expression, refused",
    [
        ({"key": "k", "operator": "In", "values": ["v"]}, False),
        ({"key": "k", "operator": "NotIn", "values": ["v"]}, False),
        ({"key": "k", "operator": "Exists"}, False),
        ({"key": "k", "operator": "DoesNotExist"}, False),
        ({"key": "k", "operator": "Gt", "values": ["3"]}, False),
        ({"key": "k", "operator": "Lt", "values": ["-3"]}, False),
        ({"key": "k", "operator": "In", "values": []}, True),
        ({"key": "k", "operator": "NotIn", "values": ["bad value!"]}, True),
        ({"key": "k", "operator": "DoesNotExist", "values": ["v"]}, True),
        ({"key": "k", "operator": "Gt", "values": ["3", "4"]}, True),
        ({"key": "k", "operator": "Lt", "values": [str(2**63)]}, True),
        ({"key": "k", "operator": "Near", "values": ["v"]}, True),
        ({"key": "k", "operator": "Not", "values": ["v"]}, True),  # a part of NotIn is no operator
        ({"key": "-k", "operator": "Exists"}, True),
        ({"key": "k", "operator": "In", "values": "v"}, True),
    ],
)
def test_a_node_selector_requirement_parses_as_labels_new_requirement_parses_it(expression, refused):
    assert (k8s_rules.requirement_problem(expression, FACTS.kubernetes) is not None) is refused
