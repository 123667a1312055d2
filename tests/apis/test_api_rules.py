"""What AWS and Kubernetes refuse beyond the API shapes, door by door: the spec rejects a stack with
exit 2 naming the field; the pack flags a plan written by hand."""

from __future__ import annotations

import json

import pytest

from gpufleet.catalog import catalog
from tests.policy_helpers import findings, one_finding, resource
from tests.conftest import run_cli
from tests.ecs.test_spec_errors import _errors

QUOTAS = catalog.load().facts.quotas
LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"


def _ecs(c) -> dict:
    return c["gpufleet:ecs"]


# --- the spec door ------------------------------------------------------------------------------


def test_a_task_without_an_essential_container(stack_variant):
    def edit(c):
        for container in _ecs(c)["workloads"][1]["containers"]:
            container["essential"] = False

    err = _errors(stack_variant(edit))
    assert "gpufleet:ecs.workloads[1].containers[0].essential = false: no container is essential" in err
    assert "[rule: ecs-essential-container]" in err


def test_more_capacity_providers_than_ecs_allows(stack_variant):
    limit = QUOTAS["ecsCapacityProvidersPerCluster"].value

    def edit(c):
        base = _ecs(c)["capacityProviders"][0]
        _ecs(c)["capacityProviders"] = [{**base, "name": f"cp{i}"} for i in range(limit + 1)]
        _ecs(c)["workloads"] = []

    err = _errors(stack_variant(edit))
    assert f"{limit + 1} capacity providers in one ECS cluster; AWS allows {limit}, a quota that cannot be raised" in err
    assert "[rule: aws-service-quotas]" in err


def test_exactly_as_many_capacity_providers_as_ecs_allows(stack_variant):
    """The quota is a count AWS accepts: the 20th provider is fine, the 21st is not (above)."""
    limit = QUOTAS["ecsCapacityProvidersPerCluster"].value

    def edit(c):
        base = _ecs(c)["capacityProviders"][0]
        _ecs(c)["capacityProviders"] = [{**base, "name": f"cp{i}"} for i in range(limit)]
        _ecs(c)["workloads"] = []

    code, out, err = run_cli("preview", "--config-file", str(stack_variant(edit)), "--no-policy", "--json")
    assert code == 0, err
    assert len([r for r in json.loads(out)["resources"] if r["type"] == "aws:ecs/capacityProvider:CapacityProvider"]) == limit


def test_more_container_instances_than_a_cluster_takes(stack_variant):
    limit = QUOTAS["ecsContainerInstancesPerCluster"].value
    err = _errors(stack_variant(lambda c: _ecs(c)["capacityProviders"][0].__setitem__("maxSize", limit)))
    assert f"{limit + 2} container instances one ECS cluster may reach" in err and "[rule: aws-service-quotas]" in err


def test_more_containers_than_a_task_definition_takes(stack_variant):
    limit = QUOTAS["ecsContainersPerTaskDefinition"].value

    def edit(c):
        base = {"image": "public.ecr.aws/example/sidecar:1", "memory": 64}
        _ecs(c)["workloads"][0]["containers"] += [{**base, "name": f"side{i}"} for i in range(limit)]

    err = _errors(stack_variant(edit))
    assert f"gpufleet:ecs.workloads[0].containers = '{limit + 1} containers': {limit + 1} containers in one task definition" in err


@pytest.mark.parametrize(
    "labels, taints, field, words",
    [
        ({"node-role.kubernetes.io/gpu": "true"}, None, "labels.node-role.kubernetes.io/gpu", "which the kubelet may not set on its Node"),
        ({"team": "ml platform"}, None, "labels.team = 'ml platform'", "is not a label value"),
        ({"a/b/c": "x"}, None, "labels.a/b/c", "has more than one '/'"),
        (
            {},
            [{"key": "Example.COM/gpu", "effect": "NoSchedule"}],
            "taints[0].key = 'Example.COM/gpu'",
            "the prefix must be a DNS subdomain",
        ),
        ({}, [{"key": "gpu", "value": "-x", "effect": "NoSchedule"}], "taints[0].value = '-x'", "is not a label value"),
    ],
)
def test_node_labels_and_taints_kubernetes_refuses(stack_variant, labels, taints, field, words):
    def edit(c):
        group = c["gpufleet:eks"]["nodeGroups"][0]
        group["labels"] = labels
        if taints is not None:
            group["taints"] = taints

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert f"gpufleet:eks.nodeGroups[0].{field}" in err and words in err and "[rule: k8s-node-labels]" in err


def test_allowed_kubelet_namespaces_pass(stack_variant):
    from tests.conftest import preview_plan

    path = stack_variant(
        lambda c: c["gpufleet:eks"]["nodeGroups"][0].__setitem__(
            "labels", {"node.kubernetes.io/lifecycle": "spot", "example.com/team": "ml"}
        ),
        "eks-g5-timeslice",
    )
    assert preview_plan("--config-file", str(path), "--no-policy")


def test_an_ack_taint_kubernetes_refuses(stack_variant):
    def edit(c):
        c["gpufleet:ack"]["nodePools"][0]["taint"] = {"key": "gpu share", "effect": "NoSchedule"}

    err = _errors(stack_variant(edit, "ack-shared-gpu"))
    assert "gpufleet:ack.nodePools[0].taint.key = 'gpu share'" in err and "[rule: k8s-node-labels]" in err


def test_integers_past_32_bits(stack_variant):
    err = _errors(stack_variant(lambda c: _ecs(c)["workloads"][0]["service"].__setitem__("desiredCount", 10**30)))
    assert "gpufleet:ecs.workloads[0].service.desiredCount = 1000000000000000000000000000000" in err and "[rule: int32]" in err


# --- the pack door ------------------------------------------------------------------------------


def _task(name: str, essential: list[bool | None]) -> dict:
    """None: the container leaves `essential` out (ECS takes it as true)."""
    containers = [
        {"name": f"c{i}", "image": "x:1", "memory": 64, **({} if e is None else {"essential": e})} for i, e in enumerate(essential)
    ]
    return resource("aws:ecs/taskDefinition:TaskDefinition", name, {"family": name, "containerDefinitions": json.dumps(containers)})


def test_pack_essential_container_and_launch_type(judge):
    strategies = [{"capacityProvider": "gpu", "weight": 1}]
    result = judge(
        [
            _task("none", [False, False]),
            _task("one", [False, True]),
            _task("unsaid", [False, None]),
            resource("aws:ecs/service:Service", "both", {"launchType": "EC2", "capacityProviderStrategies": strategies}),
            resource("aws:ecs/service:Service", "strategy", {"capacityProviderStrategies": strategies}),
        ]
    )
    assert findings(result, "ecs-essential-container", "one") == []
    assert findings(result, "ecs-essential-container", "unsaid") == []
    assert "no container is essential" in one_finding(result, "ecs-essential-container", "none")
    assert findings(result, "ecs-service-launch-type", "strategy") == []
    assert "launchType EC2 and a capacity provider strategy" in one_finding(result, "ecs-service-launch-type", "both")


def test_pack_launch_template_and_node_group_combinations(judge):
    interfaces = [{"deviceIndex": 0, "securityGroups": ["sg-1"]}]
    both = resource(LT, "both", {"networkInterfaces": interfaces, "vpcSecurityGroupIds": ["sg-1"]})
    ok = resource(LT, "ok", {"networkInterfaces": interfaces})
    sized = resource(NG, "sized", {"instanceTypes": ["g5.xlarge"], "diskSize": 100, "launchTemplate": {"id": "lt-1", "version": "1"}})
    result = judge([both, ok, sized])
    assert findings(result, "ec2-launch-template-security-groups", "ok") == []
    assert "put the groups on the interfaces" in findings(result, "ec2-launch-template-security-groups", "both")[0]
    assert "sets diskSize and a launch template" in findings(result, "eks-node-group-launch-template", "sized")[0]


def test_pack_capacity_blocks(judge):
    good_lt = resource(
        LT,
        "good-lt",
        {
            "instanceType": "p5.48xlarge",
            "instanceMarketOptions": {"marketType": "capacity-block"},
            "capacityReservationSpecification": {"capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}},
        },
    )
    bad_lt = resource(LT, "bad-lt", {})
    good = resource(NG, "good", {"capacityType": "CAPACITY_BLOCK"}, launchTemplate=[good_lt])
    bad = resource(NG, "bad", {"capacityType": "CAPACITY_BLOCK", "instanceTypes": ["p5.48xlarge"]}, launchTemplate=[bad_lt])
    result = judge([good_lt, bad_lt, good, bad])
    assert findings(result, "eks-capacity-block", "good") == []
    messages = findings(result, "eks-capacity-block", "bad")
    assert len(messages) == 4 and "names instanceTypes" in messages[0]


def test_pack_quotas(judge):
    limit = QUOTAS["ecsCapacityProvidersPerCluster"].value
    association = resource(
        "aws:ecs/clusterCapacityProviders:ClusterCapacityProviders", "cps", {"capacityProviders": [f"cp{i}" for i in range(limit + 1)]}
    )
    big_group = resource(NG, "big", {"clusterName": "c", "scalingConfig": {"minSize": 0, "desiredSize": 1, "maxSize": 451}})
    many = [resource(NG, f"g{i}", {"clusterName": "many", "scalingConfig": {"maxSize": 1}}) for i in range(31)]
    result = judge([association, big_group, *many])
    [message] = findings(result, "aws-service-quotas", "cps")
    assert f"{limit + 1} capacity providers in one ECS cluster" in message
    adjustable = [f for f in result.findings if f.policy == "aws-service-quotas-adjustable"]
    assert {f.level for f in adjustable} == {"advisory"}
    assert any("451 nodes one managed node group may reach" in f.message for f in adjustable)
    assert any("31 managed node groups in one EKS cluster" in f.message for f in adjustable)


def test_pack_node_labels(judge):
    bad = resource(
        NG, "bad", {"labels": {"kubernetes.io/role": "gpu"}, "taints": [{"key": "gpu", "value": "a b", "effect": "NO_SCHEDULE"}]}
    )
    good = resource(NG, "good", {"labels": {"example.com/role": "gpu", "node.kubernetes.io/lifecycle": "spot"}})
    pool = resource("alicloud:cs/nodePool:NodePool", "pool", {"labels": [{"key": "k8s.io/x", "value": "y"}]})
    result = judge([bad, good, pool])
    assert findings(result, "k8s-node-labels", "good") == []
    messages = findings(result, "k8s-node-labels", "bad")
    assert len(messages) == 2 and "labels.kubernetes.io/role" in messages[0] and "taints.0.value" in messages[1]
    assert "the k8s.io namespace" in findings(result, "k8s-node-labels", "pool")[0]


# --- the API's own model, from botocore --------------------------------------------------------


def test_the_spec_takes_eks_label_lengths_from_the_api_model(stack_variant):
    def edit(c):
        c["gpufleet:eks"]["nodeGroups"][0]["labels"] = {"team": ""}  # Kubernetes takes it; CreateNodegroup does not

    err = _errors(stack_variant(edit, "eks-g5-timeslice"))
    assert (
        "gpufleet:eks.nodeGroups[0].labels.team = '': label value: at least 1 character (eks API, CreateNodegroupRequest.labels value)"
        in err
    )
    assert "[rule: aws-api-model]" in err


def test_the_pack_walks_the_api_model(judge):
    from gpufleet.apis.aws import UNKNOWN

    good = resource(LT, "good", {"name": "good-template", "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1.0}})
    typo = resource(LT, "typo", {"name": "typo-template", "metadataOptions": {"httpTokens": "requird"}})
    labelled = resource(
        NG, "labelled", {"clusterName": "c", "nodeGroupName": "g", "nodeRoleArn": UNKNOWN, "subnetIds": [UNKNOWN], "labels": {"team": ""}}
    )
    cluster = resource("aws:eks/cluster:Cluster", "named", {"name": "x" * 101, "roleArn": UNKNOWN, "vpcConfig": {"subnetIds": [UNKNOWN]}})
    # A list or a map known only after apply stands in as an empty one of its kind.
    later = resource(
        NG, "later", {"clusterName": "c", "nodeGroupName": "g2", "nodeRoleArn": UNKNOWN, "subnetIds": UNKNOWN, "labels": UNKNOWN}
    )
    result = judge([good, typo, labelled, cluster, later])
    assert findings(result, "aws-api-model", "good") == []  # 1.0 is the integer 1 on the wire
    assert findings(result, "aws-api-model", "later") == []
    assert "MetadataOptions.HttpTokens = 'requird': not one of optional, required" in findings(result, "aws-api-model", "typo")[0]
    assert "Invalid length for parameter labels.team" in findings(result, "aws-api-model", "labelled")[0]
    assert (
        "CreateCluster.name = " in findings(result, "aws-api-model", "named")[0]
        and "at most 100 characters" in findings(result, "aws-api-model", "named")[0]
    )
    assert {f.level for f in result.findings if f.policy == "aws-api-model"} == {"mandatory"}


def test_the_pack_leaves_inputs_without_a_member_to_the_provider(judge):
    """Another program's inputs may map to calls other than the create call: not a finding."""
    group = resource(
        NG,
        "g",
        {
            "clusterName": "c",
            "nodeGroupName": "g",
            "nodeRoleArn": "arn:aws:iam::123456789012:role/r",
            "subnetIds": ["subnet-1"],
            "someProviderOnlyInput": True,
        },
    )
    assert findings(judge([group]), "aws-api-model", "g") == []


def test_the_managed_node_group_quota_points_at_the_last_group(judge):
    many = [resource(NG, f"g{i}", {"clusterName": "many", "scalingConfig": {"maxSize": 1}}) for i in range(31)]
    result = judge(many)
    [finding] = [f for f in result.findings if f.policy == "aws-service-quotas-adjustable" and "managed node groups" in f.message]
    assert finding.urn.endswith("::g30")


def test_ack_labels_without_a_key_are_passed_over(judge):
    pool = resource(
        "alicloud:cs/nodePool:NodePool", "pool", {"labels": [{"key": None, "value": "x"}, "not a label", {"key": "k8s.io/x", "value": "y"}]}
    )
    assert "the k8s.io namespace" in one_finding(judge([pool]), "k8s-node-labels", "pool")


def test_pack_quotas_read_sizes_as_the_wires_doubles(judge):
    """The engine sends 451 as 451.0: the quotas count it (slips found the float branch unjudged)."""
    limit = QUOTAS["ecsContainerInstancesPerCluster"].value
    asg = resource("aws:autoscaling/group:Group", "asg", {"minSize": 0.0, "maxSize": float(limit + 1)})
    cp = resource("aws:ecs/capacityProvider:CapacityProvider", "cp", {"name": "cp"}, autoScalingGroupProvider=[asg])
    association = resource(
        "aws:ecs/clusterCapacityProviders:ClusterCapacityProviders", "cps", {"capacityProviders": ["cp"]}, capacityProviders=[cp]
    )
    big_group = resource(NG, "big", {"clusterName": "c", "scalingConfig": {"minSize": 0.0, "desiredSize": 1.0, "maxSize": 451.5}})
    asg["inputs"]["maxSize"] = limit + 1.5  # not integral: the pack hands these on as floats whatever it does with integral ones
    result = judge([asg, cp, association, big_group])
    assert any(f"{limit + 1} container instances one ECS cluster may reach" in m for m in findings(result, "aws-service-quotas", "cps"))
    assert any(
        "451 nodes one managed node group may reach" in f.message for f in result.findings if f.policy == "aws-service-quotas-adjustable"
    )


def test_a_capacity_block_group_with_its_types_and_no_template_is_told_both():
    from gpufleet.apis import aws_rules

    group = {"capacityType": "CAPACITY_BLOCK", "instanceTypes": ["p5.48xlarge"]}
    assert aws_rules.capacity_block_problems(group, None) == [
        "names instanceTypes: a capacity block's type goes in the launch template only",
        "has no launch template: a capacity block needs one that names the type and targets the block",
    ]
