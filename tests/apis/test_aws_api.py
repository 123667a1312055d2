"""src/gpufleet/apis/aws.py: how a plan resource's inputs become the API request (names,
values known only after apply, the provider's own conversions) and what the botocore model refuses
in it, worded as the pack's aws-api-model findings and the spec's errors quote it. The bounds,
enums and patterns are read from botocore's model, not typed here."""

from __future__ import annotations

import threading
import time

import pytest
from botocore import loaders

from gpufleet.apis import aws as aws_api
from gpufleet.catalog import tokens
from gpufleet.apis.aws import UNKNOWN, field_problem, member_shape, to_request


def _request(kind: str, inputs: dict, strict: bool = True):
    return to_request(kind, inputs, strict)


def _task(**inputs):
    return _request(tokens.ECS_TASK_DEFINITION, {"family": "f", "containerDefinitions": "[]", **inputs})


def test_values_known_after_apply_become_stand_ins_in_the_formats_aws_expects():
    group = _request(tokens.EKS_NODE_GROUP, {
        "clusterName": "c", "nodeGroupName": "g", "nodeRoleArn": UNKNOWN, "subnetIds": UNKNOWN, "labels": UNKNOWN,
        "scalingConfig": {"minSize": 0, "maxSize": UNKNOWN, "desiredSize": 0},
    })
    assert group.problems == []
    assert group.params["nodeRole"] == "arn:aws:iam::123456789012:role/placeholder"
    assert (group.params["subnets"], group.params["labels"], group.params["scalingConfig"]["maxSize"]) == ([], {}, 1)
    provider = _request(tokens.ECS_CAPACITY_PROVIDER, {"name": "cp", "autoScalingGroupProvider": {"autoScalingGroupArn": UNKNOWN}})
    assert provider.params["autoScalingGroupProvider"]["autoScalingGroupArn"].startswith("arn:aws:autoscaling:")
    template = _request(tokens.LAUNCH_TEMPLATE, {"networkInterfaces": [{"deviceIndex": 0, "securityGroups": [UNKNOWN], "description": UNKNOWN}]})
    [interface] = template.params["LaunchTemplateData"]["NetworkInterfaces"]
    assert (interface["Groups"], interface["Description"]) == (["sg-0123456789abcdef0"], "placeholder")
    assert template.problems == []


def test_the_engines_wire_values_are_read_as_the_provider_reads_them():
    """Booleans arrive as strings, integers as doubles; the provider's own inputs have no member."""
    template = _request(tokens.LAUNCH_TEMPLATE, {
        "instanceType": "g5.xlarge", "region": "us-east-1",
        "networkInterfaces": [{"deviceIndex": 0.0, "associatePublicIpAddress": "false", "deleteOnTermination": "true"}],
    })
    assert template.problems == []
    assert template.params["LaunchTemplateData"] == {
        "InstanceType": "g5.xlarge",
        "NetworkInterfaces": [{"DeviceIndex": 0, "AssociatePublicIpAddress": False, "DeleteOnTermination": True}],
    }
    [problem] = _request(tokens.LAUNCH_TEMPLATE, {"ebsOptimized": "yes"}).problems
    assert "Invalid type for parameter LaunchTemplateData.EbsOptimized, value: yes" in problem


def test_a_tag_map_becomes_the_apis_key_value_list():
    assert _task(tags={"team": "ml"}).params["tags"] == [{"key": "team", "value": "ml"}]


def test_shapes_that_do_not_match_are_named():
    task = _task(volumes="v", placementConstraints={"a": 1}, runtimePlatform=[1])
    assert task.problems[:3] == [
        "RegisterTaskDefinition.volumes: expected a list, got 'v'",
        "RegisterTaskDefinition.placementConstraints: expected a list, got {'a': 1}",
        "RegisterTaskDefinition.runtimePlatform: expected a structure, got [1]",
    ]
    labels = _task(containerDefinitions='[{"name": "x", "image": "i", "dockerLabels": [1]}]').problems
    assert labels[0] == "RegisterTaskDefinition.containerDefinitions[0].dockerLabels: expected a map, got [1]"
    # ECS's environment is a list of name/value pairs: a mapping is not a tag map (no key member).
    environment = _task(containerDefinitions='[{"name": "x", "image": "i", "environment": {"A": "1"}}]').problems
    assert environment[0] == "RegisterTaskDefinition.containerDefinitions[0].environment: expected a list, got {'A': '1'}"
    assert _task(containerDefinitions="not json").problems == ["containerDefinitions: not JSON (Expecting value: line 1 column 1 (char 0))"]
    assert _task(containerDefinitions=UNKNOWN).problems == []


def test_a_long_value_is_shortened_in_the_message():
    long = "x" * 80
    [problem, *_] = _task(volumes=long).problems
    assert problem == f"RegisterTaskDefinition.volumes: expected a list, got {repr(long)[:57]}..."
    assert _task(volumes="y" * 58).problems[0].endswith(repr("y" * 58))  # 60 characters of repr: whole
    assert _task(volumes="y" * 59).problems[0].endswith("...")  # 61: shortened


def test_unknown_members_are_refused_for_our_plans_and_left_to_the_provider_for_others():
    assert _task(bogus=1).problems[0] == "RegisterTaskDefinition.bogus: no such member in RegisterTaskDefinitionRequest"
    assert _request(tokens.ECS_TASK_DEFINITION, {"family": "f", "containerDefinitions": "[]", "bogus": 1}, strict=False).problems == []


def test_enums_come_from_the_model():
    modes = member_shape("ecs", "RegisterTaskDefinitionRequest", "networkMode").enum
    assert "bridged" not in modes
    assert _task(networkMode="bridged").problems == [f"RegisterTaskDefinition.networkMode = 'bridged': not one of {', '.join(modes)}"]
    assert _task(networkMode=modes[0]).problems == []


def test_lengths_and_patterns_come_from_the_model():
    bounds = member_shape("eks", "CreateNodegroupRequest", "labels", "key").metadata
    assert field_problem("k" * bounds["max"], "eks", "CreateNodegroupRequest", "labels", "key") is None
    assert field_problem("k" * bounds["min"], "eks", "CreateNodegroupRequest", "labels", "key") is None
    assert field_problem("k" * (bounds["max"] + 1), "eks", "CreateNodegroupRequest", "labels", "key") == (
        f"at most {bounds['max']} characters (eks API, CreateNodegroupRequest.labels key)"
    )
    assert bounds["min"] == 1 and field_problem("", "eks", "CreateNodegroupRequest", "labels", "key") == (
        "at least 1 character (eks API, CreateNodegroupRequest.labels key)"
    )
    pattern = member_shape("eks", "CreateClusterRequest", "name").metadata["pattern"]
    assert field_problem("-ml", "eks", "CreateClusterRequest", "name") == f"must match {pattern} (eks API, CreateClusterRequest.name)"
    assert field_problem("ml-1", "eks", "CreateClusterRequest", "name") is None


def test_a_request_leaves_min_to_botocores_validator():
    """A string below its min is reported once, in botocore's words, not twice."""
    problems = _request(tokens.EKS_CLUSTER, {"name": "", "roleArn": "arn:aws:iam::123456789012:role/r", "vpcConfig": {}}).problems
    assert not any("at least 1 character" in p for p in problems)
    assert any("Invalid length for parameter name" in p for p in problems)


@pytest.mark.parametrize("value", [0, 101])
def test_integer_bounds_come_from_the_model(value):
    bounds = member_shape("eks", "NodegroupUpdateConfig", "maxUnavailablePercentage").metadata
    problems = aws_api.scalar_problems(member_shape("eks", "NodegroupUpdateConfig", "maxUnavailablePercentage"), value)
    expected = f"at most {bounds['max']}" if value > bounds["max"] else f"at least {bounds['min']}"
    assert problems == [expected]
    assert aws_api.scalar_problems(member_shape("eks", "NodegroupUpdateConfig", "maxUnavailablePercentage"), bounds["max"]) == []
    assert aws_api.scalar_problems(member_shape("eks", "NodegroupUpdateConfig", "maxUnavailablePercentage"), bounds["min"]) == []
    # A fraction is past the bound too (botocore's type check says the rest).
    assert aws_api.scalar_problems(member_shape("eks", "NodegroupUpdateConfig", "maxUnavailablePercentage"), value + 0.5) == [expected]


def test_an_integer_past_its_max_in_a_request():
    weight = member_shape("ecs", "CapacityProviderStrategyItem", "weight").metadata["max"]
    service = _request(tokens.ECS_SERVICE, {"name": "s", "capacityProviderStrategies": [{"capacityProvider": "cp", "weight": weight + 1}]})
    assert f"CreateService.capacityProviderStrategy[0].weight = {weight + 1}: at most {weight}" in service.problems


def test_a_boolean_is_not_an_integer():
    assert aws_api.scalar_problems(member_shape("eks", "NodegroupUpdateConfig", "maxUnavailablePercentage"), True) == []


def test_a_pattern_python_cannot_compile_is_not_held_against_the_value():
    assert aws_api._pattern(None) is None and aws_api._pattern("") is None
    assert aws_api._pattern("[\\ud800-\\udbff") is None  # a Java UTF-16 range, unbalanced here
    assert aws_api._pattern("^a+$").match("aaa")


def test_the_providers_own_conversions():
    prefix = "p" * 38  # the provider appends a 26-character unique suffix
    group = _request(tokens.EKS_NODE_GROUP, {"clusterName": "c", "nodeGroupNamePrefix": prefix, "nodeRoleArn": "arn:aws:iam::1:role/r", "subnetIds": ["s"]})
    assert group.params["nodegroupName"] == prefix + "0" * 26
    service = _request(tokens.ECS_SERVICE, {"name": "s", "networkConfiguration": {"subnets": ["a"], "assignPublicIp": True}})
    assert service.params["networkConfiguration"] == {"awsvpcConfiguration": {"subnets": ["a"], "assignPublicIp": "ENABLED"}}
    service = _request(tokens.ECS_SERVICE, {"name": "s", "networkConfiguration": {"subnets": ["a"], "assignPublicIp": False}})
    assert service.params["networkConfiguration"]["awsvpcConfiguration"]["assignPublicIp"] == "DISABLED"
    asg = _request(tokens.ASG, {"name": "g", "minSize": 0, "maxSize": 1, "vpcZoneIdentifiers": ["subnet-1", UNKNOWN]})
    assert asg.params["VPCZoneIdentifier"] == "subnet-1,subnet-0123456789abcdef0" and asg.problems == []
    role = _request(tokens.IAM_ROLE, {"namePrefix": "n", "assumeRolePolicy": "{}", "managedPolicyArns": ["x"], "tags": {"a": "b"}})
    assert role.params == {"AssumeRolePolicyDocument": "{}", "RoleName": "n"}
    group = _request(tokens.SECURITY_GROUP, {"vpcId": "v", "ingress": [], "tags": {"a": "b"}})
    assert group.params == {"VpcId": "v", "GroupName": "generated-by-the-provider", "Description": "Managed by Pulumi"}
    with pytest.raises(KeyError):
        _request("aws:s3/bucket:Bucket", {})


def test_container_definitions_given_as_a_list_are_judged_as_given():
    task = _request(tokens.ECS_TASK_DEFINITION, {"family": "f", "containerDefinitions": [{"name": "x", "image": "i", "bogus": 1}]})
    assert task.problems[0] == "RegisterTaskDefinition.containerDefinitions[0].bogus: no such member in ContainerDefinition"


def test_a_number_for_a_string_is_left_to_botocores_type_check():
    key = member_shape("eks", "CreateNodegroupRequest", "labels", "key")
    assert aws_api.scalar_problems(key, 10 ** 6) == []


def test_inputs_after_a_provider_only_or_unmapped_one_are_still_read():
    assert _task(region="us-east-1", bogus=1).problems == ["RegisterTaskDefinition.bogus: no such member in RegisterTaskDefinitionRequest"]
    lenient = _request(tokens.ECS_TASK_DEFINITION, {"family": "f", "containerDefinitions": "[]", "bogus": 1, "networkMode": "bridged"}, strict=False)
    assert [p.split(":")[0] for p in lenient.problems] == ["RegisterTaskDefinition.networkMode = 'bridged'"]


def test_the_models_of_a_process_come_from_one_loader(monkeypatch):
    module = aws_api
    made = []
    real = module.create_loader
    monkeypatch.setattr(module, "create_loader", lambda: made.append(1) or real())
    for cached in (module._loader, module._loaded_model):
        cached.cache_clear()
    try:
        assert module._model("ecs").service_name == "ecs" and module._model("ec2").service_name == "ec2"
        assert len(made) == 1
    finally:
        for cached in (module._loader, module._loaded_model):
            cached.cache_clear()


def test_threads_asking_for_a_model_at_once_load_it_once(monkeypatch):
    """The pack's four servicer threads meet their first task definitions together: each used to
    make its own loader and load the same models (ecs three times in one preview)."""
    module = aws_api
    loads, made = [], []
    everyone = threading.Barrier(4)

    class SlowLoader:
        def __init__(self):
            made.append(self)
            self._real = loaders.create_loader()

        def load_service_model(self, service, kind):
            loads.append(service)
            time.sleep(0.05)  # a model's load is long enough for the other threads to ask too
            return self._real.load_service_model(service, kind)

    monkeypatch.setattr(module, "create_loader", SlowLoader)
    for cached in (module._loader, module._loaded_model):
        cached.cache_clear()
    try:
        models = []

        def ask() -> None:
            everyone.wait()
            models.append(module._model("ecs"))

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert loads == ["ecs"] and len(made) == 1
        assert len({id(m) for m in models}) == 1
    finally:
        for cached in (module._loader, module._loaded_model):
            cached.cache_clear()


def test_every_provider_only_input_and_every_renamed_member_is_read():
    """Slips the new mutation operators found unjudged: each of them dropped, a request changes."""
    template = _request(tokens.LAUNCH_TEMPLATE, {
        "instanceType": "g5.xlarge", "skipDestroy": True, "trackLatest": True, "region": "us-east-1", "updateDefaultVersion": True,
        "tagsAll": {"a": "b"}, "vpcSecurityGroupIds": [UNKNOWN],
    })
    assert template.problems == []
    assert template.params["LaunchTemplateData"]["SecurityGroupIds"] == ["sg-0123456789abcdef0"]
    asg = _request(tokens.ASG, {"name": "g", "minSize": 0, "maxSize": 1, "launchTemplate": {"name": "gpu-lt", "version": "$Latest"}})
    assert asg.problems == [] and asg.params["LaunchTemplate"] == {"LaunchTemplateName": "gpu-lt", "Version": "$Latest"}
    role = _request(tokens.IAM_ROLE, {"name": "r", "assumeRolePolicy": "{}", "inlinePolicies": [{"name": "p", "policy": "{}"}], "managedPolicyArns": ["arn:aws:iam::aws:policy/x"]})
    assert role.problems == [] and role.params == {"AssumeRolePolicyDocument": "{}", "RoleName": "r"}
    group = _request(tokens.SECURITY_GROUP, {"name": "g", "vpcId": "v", "egress": [], "revokeRulesOnDelete": True})
    assert group.problems == [] and group.params == {"VpcId": "v", "GroupName": "g", "Description": "Managed by Pulumi"}
