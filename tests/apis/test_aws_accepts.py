"""What AWS would accept: the plan's task definitions, launch templates and capacity providers as
API requests, validated against botocore's service models and sent to moto and read back."""

from __future__ import annotations

import copy

import boto3
import pytest
from moto import mock_aws

from tests.aws_api import CHECKED_TYPES, plan_request
from tests.conftest import shipped_plan


# Each shipped stack: its requests of the checked types (tasks, services, launch templates, Auto
# Scaling groups, capacity providers, IAM roles, the VPC and its 4 subnets, security groups; EKS:
# the cluster, node groups and launch templates, the system node group's included).
# ecs-managed-gpu: 3 task definitions and services, 2 Managed Instances providers with 4 IAM roles.
# ecs-mps: 4 task definitions and 4 services over 2 capacity providers (MPS shares and a G6f fraction).
# ecs-neuron: 6 per-chip task definitions and services (inf2.24xlarge) besides its 2 whole-task ones.
STACKS = {"ecs-gpu": 17, "ecs-mps": 21, "ecs-managed-gpu": 18, "ecs-neuron": 27, "eks-p5-efa": 13, "eks-trn1": 13, "eks-g5-timeslice": 12}


@pytest.fixture(scope="module", params=sorted(STACKS))
def resources(request) -> list[dict]:
    plan = shipped_plan(request.param)
    found = [r for r in plan["resources"] if r["type"] in CHECKED_TYPES]
    assert len(found) == STACKS[request.param]
    return found


@pytest.fixture
def aws(monkeypatch):
    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        yield


def test_every_request_passes_botocore_validation(resources):
    for r in resources:
        request = plan_request(r)
        assert request.problems == [], (r["urn"], request.problems)


@pytest.mark.parametrize(
    "type_token, mutate, expected",
    [
        ("aws:ecs/taskDefinition:TaskDefinition", lambda i: i.__setitem__("containerDefinitions", i["containerDefinitions"].replace('"GPU"', '"Gpu"')), "not one of GPU, InferenceAccelerator, NeuronDevice"),
        ("aws:ecs/taskDefinition:TaskDefinition", lambda i: i.pop("family"), "Missing required parameter"),
        ("aws:ec2/launchTemplate:LaunchTemplate", lambda i: i["metadataOptions"].__setitem__("httpTokens", "requird"), "not one of optional, required"),
        ("aws:ec2/launchTemplate:LaunchTemplate", lambda i: i["blockDeviceMappings"][0]["ebs"].__setitem__("volumeSize", "200"), "Invalid type"),
        ("aws:ecs/capacityProvider:CapacityProvider", lambda i: i["autoScalingGroupProvider"].__setitem__("managedTerminationProtection", "ON"), "not one of ENABLED, DISABLED"),
        ("aws:ecs/capacityProvider:CapacityProvider", lambda i: i["autoScalingGroupProvider"].__setitem__("warmPool", {}), "no such member"),
        ("aws:autoscaling/group:Group", lambda i: i.__setitem__("maxSize", "4"), "Invalid type for parameter MaxSize"),
        ("aws:autoscaling/group:Group", lambda i: i.__setitem__("name", "x" * 256), "at most 255 characters"),
        ("aws:ecs/service:Service", lambda i: i.__setitem__("launchType", "EC3"), "not one of EC2, FARGATE"),
        ("aws:iam/role:Role", lambda i: i.__setitem__("name", "n" * 65), "at most 64 characters"),
        ("aws:ec2/subnet:Subnet", lambda i: i.pop("vpcId"), 'Missing required parameter in input: "VpcId"'),
    ],
)
def test_a_wrong_enum_type_or_missing_field_fails(type_token, mutate, expected):
    broken = copy.deepcopy(next(r for r in shipped_plan("ecs-gpu")["resources"] if r["type"] == type_token))
    mutate(broken["inputs"])
    problems = "\n".join(plan_request(broken).problems)
    assert expected in problems


def test_a_wrong_neuron_device_mapping_fails():
    neuron = [r for r in shipped_plan("ecs-neuron")["resources"] if r["type"] == "aws:ecs/taskDefinition:TaskDefinition"]
    broken = copy.deepcopy(neuron[0])
    broken["inputs"]["containerDefinitions"] = broken["inputs"]["containerDefinitions"].replace('"write"', '"rw"')
    assert "not one of read, write, mknod" in "\n".join(plan_request(broken).problems)
    broken = copy.deepcopy(neuron[0])
    broken["inputs"]["containerDefinitions"] = broken["inputs"]["containerDefinitions"].replace('"hostPath"', '"host"')
    problems = "\n".join(plan_request(broken).problems)
    assert "hostPath" in problems and ("Missing required parameter" in problems or "no such member" in problems)


def _params(resources: list[dict], type_token: str) -> list[dict]:
    found = [plan_request(r).params for r in resources if r["type"] == type_token]
    assert found, f"the plan has no {type_token}: the round trip would check nothing"
    return found


def _of_platform(resources: list[dict], token: str):
    """The stack's requests of one type, or a skip: not every stack has every platform."""
    if not any(r["type"] == token for r in resources):
        pytest.skip(f"this stack has no {token}")
    return _params(resources, token)


def test_task_definitions_round_trip_through_moto(resources, aws):
    ecs = boto3.client("ecs")
    for params in _of_platform(resources, "aws:ecs/taskDefinition:TaskDefinition"):
        ecs.register_task_definition(**params)
        got = ecs.describe_task_definition(taskDefinition=params["family"])["taskDefinition"]
        assert got.get("placementConstraints", []) == params.get("placementConstraints", [])
        assert got["requiresCompatibilities"] == params["requiresCompatibilities"]
        assert got["requiresCompatibilities"] in (["EC2"], ["MANAGED_INSTANCES"])
        for key in ("resourceRequirements", "linuxParameters"):
            assert [c.get(key) for c in got["containerDefinitions"]] == [c.get(key) for c in params["containerDefinitions"]]


def test_launch_templates_round_trip_through_moto(resources, aws):
    ec2 = boto3.client("ec2")
    for params in _of_platform(resources, "aws:ec2/launchTemplate:LaunchTemplate"):
        ec2.create_launch_template(**params)
        name = params["LaunchTemplateName"]
        data = ec2.describe_launch_template_versions(LaunchTemplateName=name)["LaunchTemplateVersions"][0]
        version = data["LaunchTemplateData"]
        sent = params["LaunchTemplateData"]
        assert version["MetadataOptions"]["HttpTokens"] == "required"
        assert version["BlockDeviceMappings"][0]["Ebs"]["Encrypted"] is True
        assert version.get("ImageId") == sent.get("ImageId")
        keep = ("DeviceIndex", "NetworkCardIndex", "InterfaceType", "AssociatePublicIpAddress")
        assert [{k: ni.get(k) for k in keep} for ni in version.get("NetworkInterfaces", [])] == [
            {k: ni.get(k) for k in keep} for ni in sent.get("NetworkInterfaces", [])
        ]


def test_capacity_providers_round_trip_through_moto(resources, aws):
    ecs = boto3.client("ecs")
    providers = _of_platform(resources, "aws:ecs/capacityProvider:CapacityProvider")
    # moto models Auto Scaling group providers only; Managed Instances ones pass botocore's walk above.
    providers = [p for p in providers if "autoScalingGroupProvider" in p] or pytest.skip("moto has no Managed Instances providers")
    for params in providers:
        ecs.create_capacity_provider(**params)
        [got] = ecs.describe_capacity_providers(capacityProviders=[params["name"]])["capacityProviders"]
        asg = got["autoScalingGroupProvider"]
        assert asg["managedTerminationProtection"] == "ENABLED"
        assert asg["managedScaling"]["status"] == "ENABLED"


def test_eks_cluster_and_node_groups_round_trip_through_moto(resources, aws):
    eks = boto3.client("eks")
    [cluster] = _of_platform(resources, "aws:eks/cluster:Cluster")
    eks.create_cluster(**cluster)
    for params in _params(resources, "aws:eks/nodeGroup:NodeGroup"):
        eks.create_nodegroup(**params)
        got = eks.describe_nodegroup(clusterName=params["clusterName"], nodegroupName=params["nodegroupName"])["nodegroup"]
        assert got["amiType"] == params["amiType"] and got["capacityType"] == params["capacityType"]
        assert got.get("taints", []) == params.get("taints", []) and all(t["effect"] in ("NO_SCHEDULE", "NO_EXECUTE", "PREFER_NO_SCHEDULE") for t in got.get("taints", []))


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ('"maxComputePercent": 50', '"maxComputePercent": 101', "at most 100"),
        ('"memory": 22000', '"memory": 0', "valid min value: 1"),
        ('"nvidiaMps"', '"nvidiaMPS"', "no such member in SharingStrategy"),
    ],
)
def test_a_wrong_mps_share_fails(old, new, expected):
    chat = next(r for r in shipped_plan("ecs-mps")["resources"] if r["type"] == "aws:ecs/taskDefinition:TaskDefinition" and r["name"].endswith("-chat"))
    broken = copy.deepcopy(chat)
    assert old in broken["inputs"]["containerDefinitions"]
    broken["inputs"]["containerDefinitions"] = broken["inputs"]["containerDefinitions"].replace(old, new)
    assert expected in "\n".join(plan_request(broken).problems)


def test_managed_instances_requests_carry_what_the_feature_needs():
    """The Managed Instances provider names its cluster, passes a role named ecsInstanceRole*, and its
    tasks and services use awsvpc; a broken instance requirement fails botocore's walk."""
    resources = shipped_plan("ecs-managed-gpu")["resources"]
    [gpu] = [plan_request(r).params for r in resources if r["type"] == "aws:ecs/capacityProvider:CapacityProvider" and r["name"].endswith("-gpu")]
    template = gpu["managedInstancesProvider"]["instanceLaunchTemplate"]
    assert gpu["cluster"] == "ml-managed" and template["capacityOptionType"] == "SPOT"
    assert template["instanceRequirements"]["acceleratorNames"] == ["l4", "a10g"] and "min" in template["instanceRequirements"]["vCpuCount"]
    profiles = [r for r in resources if r["type"] == "aws:iam/instanceProfile:InstanceProfile"]
    assert profiles and all(r["inputs"]["name"].startswith("ecsInstanceRole") for r in profiles)
    tasks = [plan_request(r).params for r in resources if r["type"] == "aws:ecs/taskDefinition:TaskDefinition"]
    assert {t["networkMode"] for t in tasks} == {"awsvpc"} and all(t["requiresCompatibilities"] == ["MANAGED_INSTANCES"] for t in tasks)
    neuron = next(t for t in tasks if t["family"] == "neuron-serve")
    assert neuron["containerDefinitions"][0]["resourceRequirements"] == [{"type": "NeuronDevice", "value": "ALL"}]
    services = [plan_request(r).params for r in resources if r["type"] == "aws:ecs/service:Service"]
    assert all(s["networkConfiguration"]["awsvpcConfiguration"]["assignPublicIp"] == "DISABLED" for s in services)
    broken = copy.deepcopy(next(r for r in resources if r["type"] == "aws:ecs/capacityProvider:CapacityProvider"))
    broken["inputs"]["managedInstancesProvider"]["instanceLaunchTemplate"]["instanceRequirements"]["acceleratorNames"] = ["l4x"]
    assert "not one of" in "\n".join(plan_request(broken).problems)
