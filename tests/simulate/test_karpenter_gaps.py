"""Issue 53 item 5: where the Karpenter simulation does not model a plan, its placement names the gap
on the pod (a note: the verdict is advisory) and, for a pool, in placement.gaps; never a definite
Pending or a silent "provisioned". One small plan per class of gap, as the suites' rows build them."""

from __future__ import annotations

import pytest

from gpufleet.catalog import tokens
from gpufleet.plans import index as plan_index
from gpufleet.plans import placement as plan_placement
from tests.simulate.karpenter_suites.suite import OS, ZONE, deployment, node_class, pods, pool, req, spec

TYPES = ("t3.small", "c5.xlarge")
REGION = {
    "urn": "urn:pulumi:s::p::pulumi:providers:aws::default",
    "type": "pulumi:providers:aws",
    "name": "default",
    "inputs": {"region": "us-west-2"},
}


def placed(*resources: dict):
    """The placement of a plan, and its one pod's (or first Deployment's) entry."""
    found = plan_placement.placement(plan_placement.from_plan({"resources": list(resources)}))
    return found, found.pods[0]


def notes(entry) -> str:
    return " | ".join(entry.notes)


def test_a_plain_pod_is_certain_of_its_pool():
    _, pod = placed(pool(types=TYPES), node_class(), *pods(1, spec({"cpu": "1"})))
    assert pod.status == "provisioned" and pod.notes == []


@pytest.mark.parametrize("resource", ["vpc.amazonaws.com/pod-eni", "amd.com/gpu", "ephemeral-storage"])
def test_a_resource_the_provider_computes_and_gpufleet_does_not_is_named(resource):
    _, pod = placed(pool(types=TYPES), node_class(), *pods(1, spec({resource: "1"}, limits={resource: "1"})))
    assert pod.status == "pending"
    assert f"requests {resource}, which Karpenter's provider computes for each type" in notes(pod)


def test_a_resource_no_provider_gives_stays_a_definite_pending():
    _, pod = placed(pool(types=TYPES), node_class(), *pods(1, spec({"example.com/foo": "1"}, limits={"example.com/foo": "1"})))
    assert pod.status == "pending" and pod.notes == []


def test_a_static_pool_launches_nothing_for_pods_and_its_nodes_are_named():
    found, pod = placed(pool(types=TYPES, name="fixed", replicas=2), node_class(), *pods(1, spec()))
    assert pod.status == "pending" and not pod.provisioned
    assert "a static NodePool (spec.replicas 2)" in pod.message
    assert "NodePool fixed: static (spec.replicas 2): its nodes are not simulated" in notes(pod)
    assert any("'fixed': static" in g for g in found.gaps)


def test_a_dynamic_pool_beside_a_static_one_provisions():
    _, pod = placed(pool(types=TYPES, name="a"), pool(types=TYPES, name="fixed", replicas=1, weight=100), node_class(), *pods(1, spec()))
    assert pod.status == "provisioned" and {p["nodePool"] for p in pod.provisioned} == {"a"}


def test_a_windows_node_class_is_named():
    found, pod = placed(pool(types=TYPES), node_class(amiSelectorTerms=[{"alias": "windows2022@latest"}]), *pods(1, spec()))
    assert "NodePool default: its EC2NodeClass's AMI family windows2022 runs Windows nodes" in notes(pod)
    assert any("windows2022 runs Windows nodes" in g for g in found.gaps)


def test_a_pool_requiring_windows_is_named():
    found, pod = placed(pool(req(OS, "In", "windows"), types=TYPES), node_class(), *pods(1, spec()))
    assert pod.status == "pending" and "its requirements admit Windows nodes only" in notes(pod)


def test_a_pod_selecting_windows_is_named():
    _, pod = placed(pool(types=TYPES), node_class(), *pods(1, spec(selector={OS: "windows"})))
    assert pod.status == "pending" and "it selects kubernetes.io/os windows" in notes(pod)


def test_instance_store_raid0_is_named_where_a_pod_requests_ephemeral_storage():
    raid0 = node_class(instanceStorePolicy="RAID0")
    _, pod = placed(pool(types=TYPES), raid0, *pods(1, spec({"ephemeral-storage": "5000Gi"})))
    assert "instanceStorePolicy RAID0 makes the instance store the node's ephemeral storage" in notes(pod)
    _, plain = placed(pool(types=TYPES), raid0, *pods(1, spec({"cpu": "1"})))
    assert plain.notes == []


def test_a_zone_asked_for_without_the_region_is_named():
    _, pod = placed(pool(types=TYPES), node_class(), *pods(1, spec(required=[req(ZONE, "In", "non-existent-zone")])))
    assert pod.status == "provisioned"
    assert "NodePool default: topology.kubernetes.io/zone In [non-existent-zone] is asked for" in notes(pod)


def test_a_zone_judged_on_the_types_offerings_is_not_named():
    _, pod = placed(REGION, pool(types=("t3.small",)), node_class(), *pods(1, spec(required=[req(ZONE, "In", "us-west-2a")])))
    assert pod.status == "provisioned" and pod.notes == []


def _spread(key: str, **policies: str) -> dict:
    rule = {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "a"}}}
    return {"topologySpreadConstraints": [{**rule, **policies}]}


def test_a_spread_over_a_key_no_pool_defines_is_named():
    _, pod = placed(pool(types=TYPES), node_class(), deployment("a", 2, spec(extra=_spread("unknown"))))
    assert "topology spread over unknown: no NodePool, instance type or node of the plan gives that label a value" in notes(pod)


def test_node_taints_policy_honor_is_named_where_a_pool_is_tainted():
    taint = {"key": "k", "value": "v", "effect": "NoSchedule"}
    tainted = pool(types=TYPES, name="tainted", taints=[taint])
    _, pod = placed(
        REGION, pool(types=TYPES), tainted, node_class(), deployment("a", 2, spec(extra=_spread(ZONE, nodeTaintsPolicy="Honor")))
    )
    assert f"topology spread over {ZONE} with nodeTaintsPolicy Honor" in notes(pod)
    _, untainted = placed(REGION, pool(types=TYPES), node_class(), deployment("a", 2, spec(extra=_spread(ZONE, nodeTaintsPolicy="Honor"))))
    assert "nodeTaintsPolicy" not in notes(untainted)


def test_node_affinity_policy_ignore_is_named():
    _, pod = placed(REGION, pool(types=TYPES), node_class(), deployment("a", 2, spec(extra=_spread(ZONE, nodeAffinityPolicy="Ignore"))))
    assert f"topology spread over {ZONE} with nodeAffinityPolicy Ignore" in notes(pod)


def test_the_packs_resources_keep_the_aws_provider_whose_region_judges_the_zones():
    """`pulumi preview`'s pack hands in only the types the placement reads: without the AWS provider
    the region is unknown there, and every zone a NodePool asks for would be named unjudged in
    preview though `check` judges it (eks-karpenter-gpu's train pool, us-east-1a)."""
    assert plan_index.reads(tokens.AWS_PROVIDER)
