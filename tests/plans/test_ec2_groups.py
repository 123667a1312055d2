"""EC2 capacity outside any cluster API: an instance, and an Auto Scaling group no ECS capacity
provider draws on (its types from a mixed policy's overrides, its launch template or its launch
configuration). The group reader reads each once; the cost block prices it or names it unpriced."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog import prices as price_catalog
from gpufleet.plans.groups import accelerated_groups, priced_groups
from gpufleet.plans.index import from_plan
from gpufleet.rules import cost as cost_rules
from tests.plan_edits import plan_cost

STACK = "urn:pulumi:dev::prog::"
PROVIDER = f"{STACK}pulumi:providers:aws::default"


def res(type_: str, name: str, inputs: dict, deps: dict | None = None) -> dict:
    r = {"urn": f"{STACK}{type_}::{name}", "type": type_, "name": name, "inputs": inputs, "provider": f"{PROVIDER}::id-1"}
    if deps:
        r["propertyDependencies"] = {k: [f"{STACK}{t}::{n}"] for k, (t, n) in deps.items()}
    return r


AWS = {"urn": PROVIDER, "type": tokens.AWS_PROVIDER, "name": "default", "inputs": {"region": "us-east-1"}}


def cost_of(*resources: dict) -> dict:
    return plan_cost([AWS, *resources])


def groups_of(*resources: dict, priced: bool = False) -> dict:
    read = priced_groups if priced else accelerated_groups
    return {g.name: g for g in read(from_plan({"resources": [AWS, *resources]}), catalog.load()).values()}


def price(instance_type: str, purchase: str = "ON_DEMAND") -> float | None:
    return cost_rules.instance_price(price_catalog.load(), "aws", "us-east-1", instance_type, purchase).dollars


def test_a_gpu_instance_is_a_group_priced_by_its_provider_region():
    assert price("g5.xlarge") is not None  # the snapshot holds it: the test reads its figure, never types it
    block = cost_of(res(tokens.EC2_INSTANCE, "gpu-box", {"instanceType": "g5.xlarge", "tags": {"Name": "trainer"}}))
    [group] = block["groups"]
    assert (group["group"], group["platform"], group["instanceType"], group["region"]) == ("trainer", "ec2", "g5.xlarge", "us-east-1")
    assert group["instances"] == {"min": 1, "desired": 1, "max": 1}
    assert group["hourly"]["desired"] == pytest.approx(price("g5.xlarge"))
    assert group["acceleratorsPerInstance"] == 1 and block["complete"]


def test_a_gpu_instance_of_a_type_the_snapshot_lacks_is_named_unpriced_with_the_reason():
    # eu-west-1: no licensed source prices AWS outside us-east-1 (docs/cost.md's coverage).
    assert cost_rules.instance_price(price_catalog.load(), "aws", "eu-west-1", "g5.2xlarge", "ON_DEMAND").dollars is None
    block = plan_cost([{**AWS, "inputs": {**AWS["inputs"], "region": "eu-west-1"}}, res(tokens.EC2_INSTANCE, "box", {"instanceType": "g5.2xlarge"})])
    [entry] = block["unpriced"]
    assert (entry["group"], entry["instanceType"]) == ("box", "g5.2xlarge") and "g5.2xlarge" in entry["reason"]
    assert not block["complete"] and block["total"]["hourly"]["desired"] is None


def test_an_instance_of_no_accelerator_costs_money_but_is_no_accelerated_group():
    bastion = res(tokens.EC2_INSTANCE, "bastion", {"instanceType": "t3.micro"})
    assert "bastion" not in groups_of(bastion) and groups_of(bastion, priced=True)["bastion"].instance_type == "t3.micro"


def test_an_instance_launched_from_a_template_takes_the_templates_type_and_market():
    template = res(tokens.LAUNCH_TEMPLATE, "lt", {"instanceType": "g5.xlarge", "instanceMarketOptions": {"marketType": "spot"}})
    box = res(tokens.EC2_INSTANCE, "box", {}, {"launchTemplate": (tokens.LAUNCH_TEMPLATE, "lt")})
    group = groups_of(template, box)["box"]
    assert (group.instance_type, group.purchase, group.gpus, group.template_urn) == ("g5.xlarge", "SPOT", 1, template["urn"])


def test_an_auto_scaling_group_of_a_launch_configuration_starts_at_its_minimum():
    """botocore's CreateAutoScalingGroup: without a desired capacity, the group starts at its minimum."""
    config = res(tokens.LAUNCH_CONFIGURATION, "lc", {"instanceType": "g5.xlarge", "spotPrice": "0.5"})
    asg = res(tokens.ASG, "workers", {"minSize": 2, "maxSize": 5}, {"launchConfiguration": (tokens.LAUNCH_CONFIGURATION, "lc")})
    group = groups_of(config, asg)["workers"]
    assert (group.instance_type, group.sizes, group.purchase) == ("g5.xlarge", {"min": 2, "desired": 2, "max": 5}, "SPOT")
    assert group.totals()["gpus"] == 2


def test_a_mixed_policy_names_every_override_and_is_not_priced_as_one_of_them():
    template = res(tokens.LAUNCH_TEMPLATE, "lt", {"instanceType": "g5.xlarge"})
    policy = {
        "launchTemplate": {"overrides": [{"instanceType": "g5.xlarge"}, {"instanceType": "g6.xlarge"}]},
        "instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 0},
    }
    asg = res(
        tokens.ASG,
        "mixed",
        {"minSize": 0, "maxSize": 4, "desiredCapacity": 1, "mixedInstancesPolicy": policy},
        {"mixedInstancesPolicy": (tokens.LAUNCH_TEMPLATE, "lt")},
    )
    assert groups_of(template, asg, priced=True)["mixed"].instance_type == "g5.xlarge, g6.xlarge"
    [entry] = cost_of(template, asg)["unpriced"]
    assert (entry["group"], entry["instanceType"]) == ("mixed", "g5.xlarge, g6.xlarge")


def test_an_auto_scaling_group_an_ecs_capacity_provider_draws_on_is_the_providers_group():
    template = res(tokens.LAUNCH_TEMPLATE, "lt", {"instanceType": "g5.xlarge"})
    asg = res(tokens.ASG, "asg", {"minSize": 1, "maxSize": 1}, {"launchTemplate": (tokens.LAUNCH_TEMPLATE, "lt")})
    provider = res(tokens.ECS_CAPACITY_PROVIDER, "cp", {"name": "gpu"}, {"autoScalingGroupProvider": (tokens.ASG, "asg")})
    groups = groups_of(template, asg, provider)
    assert [(g.platform, g.name, g.instance_type) for g in groups.values()] == [("ecs", "gpu", "g5.xlarge")]
    assert groups["gpu"].sizes == {"min": 1, "desired": 1, "max": 1}
