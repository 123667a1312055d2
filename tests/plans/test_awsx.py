"""What awsx's components will create, derived from their inputs and awsx 3.11.0's defaults
(curated libraries.awsx) where its provider does not run: an EC2Service's tasks are placed as the
service it makes, a FargateService's on Fargate, a Vpc's subnets laid out as awsx lays them out.
Each is marked derived, and the verdicts on them are advisory."""

from __future__ import annotations

import json

import pytest

from gpufleet.catalog import catalog
from gpufleet.plans import placement as plan_placement
from tests.plan_edits import golden

AWSX = catalog.load().facts.libraries.awsx


def _placed(resources: list[dict]) -> dict:
    return plan_placement.placement(plan_placement.from_plan({"resources": resources})).as_dict()


def _component(token: str, name: str, inputs: dict, deps: dict | None = None) -> dict:
    return {"urn": f"urn:pulumi:s::p::{token}::{name}", "type": token, "name": name, "inputs": inputs, "propertyDependencies": deps or {}}


def _as_awsx_ec2_service(plan: dict, name: str) -> tuple[list[dict], dict]:
    """The plan with one raw ECS service and its task definition replaced by an awsx EC2Service of the same containers."""
    service = next(r for r in plan["resources"] if r["type"] == "aws:ecs/service:Service" and r["name"] == name)
    [td_urn] = service["propertyDependencies"]["taskDefinition"]
    td = next(r for r in plan["resources"] if r["urn"] == td_urn)
    containers = json.loads(td["inputs"]["containerDefinitions"])
    args = {"containers": {c["name"]: c for c in containers}, "placementConstraints": td["inputs"]["placementConstraints"]}
    inputs = {**{k: v for k, v in service["inputs"].items() if k != "taskDefinition"}, "taskDefinitionArgs": args}
    deps = {k: v for k, v in service["propertyDependencies"].items() if k != "taskDefinition"}
    component = _component("awsx:ecs:EC2Service", name, inputs, deps)
    return [r for r in plan["resources"] if r["urn"] not in (service["urn"], td_urn)] + [component], td


def test_an_ec2_service_s_tasks_are_placed_as_the_service_it_makes():
    plan = golden("ecs-gpu")
    resources, td = _as_awsx_ec2_service(plan, "ml-gpu-llm-serve")
    raw = next(t for t in plan["placement"]["tasks"] if t["urn"] == td["urn"])
    placed = _placed(resources)
    derived = next(t for t in placed["tasks"] if t["urn"].endswith("::awsx:ecs:EC2Service$awsx:ecs:EC2TaskDefinition$aws:ecs/taskDefinition:TaskDefinition::ml-gpu-llm-serve"))
    same = ("capacityProvider", "status", "perInstance", "desiredCount", "instancesNeeded")
    assert {k: derived[k] for k in same} == {k: raw[k] for k in same}
    assert derived["notes"] == [f"derived from awsx EC2Service 'ml-gpu-llm-serve' as awsx {AWSX.version} makes it ({AWSX.services['awsx:ecs:EC2Service'].source})"]
    assert "TaskDefinition 'ml-gpu-llm-serve', Service 'ml-gpu-llm-serve'" in next(g for g in placed["gaps"] if "derived from awsx" in g)


def test_an_ec2_service_too_big_for_its_capacity_provider_is_pending():
    resources, _ = _as_awsx_ec2_service(golden("ecs-gpu"), "ml-gpu-llm-serve")
    component = resources[-1]
    for c in component["inputs"]["taskDefinitionArgs"]["containers"].values():
        c["resourceRequirements"] = [{"type": "GPU", "value": "64"}]
    task = next(t for t in _placed(resources)["tasks"] if "awsx:ecs:EC2Service" in t["urn"])
    assert (task["status"], task["perInstance"]) == ("pending", 0)


def test_a_fargate_service_runs_on_fargate_with_one_task_unless_told():
    """Pulumi's container template (tests/corpus_ts container-aws-typescript): one container of 512 CPU
    units and 128 MiB, which awsx sizes as 512 and 1024 MiB, a size Fargate runs: placed there."""
    args = {"container": {"name": "web", "image": "nginx", "cpu": 512, "memory": 128, "portMappings": [{"containerPort": 80, "targetGroup": "tg"}]}}
    [task] = _placed([_component("awsx:ecs:FargateService", "web", {"taskDefinitionArgs": args})])["tasks"]
    assert task["desiredCount"] == AWSX.services["awsx:ecs:FargateService"].desired_count == 1
    assert (task["status"], task["capacityProvider"], task["instancesNeeded"]) == ("placed", "FARGATE", 1)
    assert task["notes"] == [f"derived from awsx FargateService 'web' as awsx {AWSX.version} makes it ({AWSX.services['awsx:ecs:FargateService'].source})"]
    # A capacity provider strategy makes awsx leave the launch type out: the strategy decides.
    strategy = {"taskDefinitionArgs": args, "capacityProviderStrategies": [{"capacityProvider": "gpu", "weight": 1}], "desiredCount": 3}
    [task] = _placed([_component("awsx:ecs:FargateService", "web", strategy)])["tasks"]
    assert task["desiredCount"] == 3
    assert task["notes"][-1] == "its capacity is not in this plan (a launch type or another program's capacity provider)"


def test_containers_are_written_as_awsx_writes_them():
    from gpufleet.plans import awsx
    from gpufleet.plans.index import Index

    args = {"containers": {"b": {"name": "ignored", "image": "x", "portMappings": [{"containerPort": 8080, "targetGroup": "tg"}]}, "a": {"name": "a", "image": "y"}}, "networkMode": "bridge"}
    index = Index(plan_placement.from_plan({"resources": [_component("awsx:ecs:EC2TaskDefinition", "t", args), _component("awsx:ecs:FargateTaskDefinition", "f", args)]}))
    made = {r.name: r for r in awsx.ecs_resources(index, AWSX)}
    ec2, fargate = made["t"], made["f"]
    assert [c["name"] for c in ec2.props["containerDefinitions"]] == ["a", "b"]  # sorted, named by the map's key
    assert ec2.props["containerDefinitions"][1]["portMappings"] == [{"containerPort": 8080, "hostPort": 8080}]
    # EC2 takes the program's network mode; Fargate's is forced after it.
    assert (ec2.props["networkMode"], fargate.props["networkMode"]) == ("bridge", "awsvpc")
    assert (ec2.props["requiresCompatibilities"], fargate.props["requiresCompatibilities"]) == (["EC2"], ["FARGATE"])


def test_a_component_whose_children_are_in_the_plan_is_read_through_them():
    """Under `pulumi preview` awsx's provider builds the children: nothing is derived twice."""
    service = _component("awsx:ecs:FargateService", "web", {"taskDefinitionArgs": {"container": {"name": "web", "image": "nginx"}}})
    child = {"urn": "urn:pulumi:s::p::awsx:ecs:FargateService$aws:ecs/service:Service::web", "type": "aws:ecs/service:Service", "name": "web", "inputs": {"launchType": "FARGATE"}}
    assert _placed([service, child])["tasks"] == []
    vpc = _component("awsx:ec2:Vpc", "net", {})
    subnet = {"urn": "urn:pulumi:s::p::awsx:ec2:Vpc$aws:ec2/vpc:Vpc$aws:ec2/subnet:Subnet::net-private-1", "type": "aws:ec2/subnet:Subnet", "name": "net-private-1", "inputs": {}}
    assert "networks" not in _placed([vpc, subnet])


def test_a_vpc_s_subnets_as_awsx_lays_them_out():
    """awsx's own test table: subnetDistributorLegacy.test.ts L273-L325, 10.0.0.0/16 over three zones."""
    [network] = _placed([_component("awsx:ec2:Vpc", "net", {"availabilityZoneNames": ["us-east-1a", "us-east-1b", "us-east-1c"]})])["networks"]
    assert [(s["subnet"], s["type"], s["zone"], s["cidrBlock"]) for s in network["subnets"]] == [
        ("net-private-1", "Private", "us-east-1a", "10.0.0.0/19"), ("net-public-1", "Public", "us-east-1a", "10.0.32.0/20"),
        ("net-private-2", "Private", "us-east-1b", "10.0.64.0/19"), ("net-public-2", "Public", "us-east-1b", "10.0.96.0/20"),
        ("net-private-3", "Private", "us-east-1c", "10.0.128.0/19"), ("net-public-3", "Public", "us-east-1c", "10.0.160.0/20"),
    ]
    assert network["natGateways"] == "OnePerAz" and network["derived"].startswith(f"as awsx {AWSX.version} makes it")
    # Zones awsx picks at run time are named by position, never invented.
    [network] = _placed([_component("awsx:ec2:Vpc", "net", {"numberOfAvailabilityZones": 2, "cidrBlock": "10.1.0.0/16"})])["networks"]
    assert [s["cidrBlock"] for s in network["subnets"]] == ["10.1.0.0/18", "10.1.64.0/19", "10.1.128.0/18", "10.1.192.0/19"]
    assert network["zones"] == ["the region's zone 1 (by name)", "the region's zone 2 (by name)"]


def test_what_a_vpc_s_inputs_leave_open_is_a_gap():
    for inputs, gap in (
        ({"subnetSpecs": [{"type": "Private"}]}, "its subnet layout (subnetSpecs, subnetStrategy or an IPAM pool) is not derived"),
        ({"cidrBlock": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}, "cidrBlock '04da6b54-80e4-46f7-96ec-b56ff0331ba9' is not known offline"),
    ):
        placed = _placed([_component("awsx:ec2:Vpc", "net", inputs)])
        assert placed["networks"][0]["subnets"] == [] and any(gap in g for g in placed["gaps"]), inputs


def _derived(*components: dict) -> dict:
    from gpufleet.plans import awsx
    from gpufleet.plans.index import Index

    return {(r.type, r.name): r for r in awsx.ecs_resources(Index(plan_placement.from_plan({"resources": list(components)})), AWSX)}


def test_what_each_derived_resource_holds():
    args = {"container": {"image": "x", "cpu": 256, "portMappings": [{"containerPort": 80, "hostPort": 8080}]}, "cpu": "512", "memory": "1024",
            "placementConstraints": [{"type": "memberOf", "expression": "attribute:ecs.instance-type == g5.xlarge"}]}
    service = _component("awsx:ecs:EC2Service", "svc", {"taskDefinitionArgs": args, "assignPublicIp": True, "continueBeforeSteadyState": True, "desiredCount": 2},
                         {"cluster": ["urn:c"], "taskDefinitionArgs": ["urn:lb"]})
    made = _derived(service)
    td, svc = made[("aws:ecs/taskDefinition:TaskDefinition", "svc")], made[("aws:ecs/service:Service", "svc")]
    assert td.urn == "urn:pulumi:s::p::awsx:ecs:EC2Service$awsx:ecs:EC2TaskDefinition$aws:ecs/taskDefinition:TaskDefinition::svc"
    assert svc.urn == "urn:pulumi:s::p::awsx:ecs:EC2Service$aws:ecs/service:Service::svc"
    # The task's own sizes and constraints pass through; a container with no name is awsx's "container"; a given hostPort stays.
    assert (td.props["cpu"], td.props["memory"], td.props["placementConstraints"]) == ("512", "1024", args["placementConstraints"])
    assert td.props["containerDefinitions"] == [{"image": "x", "cpu": 256, "portMappings": [{"containerPort": 80, "hostPort": 8080}], "name": "container"}]
    # The service keeps the aws.ecs.Service's inputs, not the component's own.
    assert svc.props == {"desiredCount": 2, "launchType": "EC2"}
    assert dict(svc.deps) == {"cluster": ("urn:c",), "taskDefinition": (td.urn,)}


def test_a_service_of_a_task_definition_component_reads_its_derived_task_definition():
    td = _component("awsx:ecs:EC2TaskDefinition", "td", {"container": {"name": "app", "image": "x"}})
    service = _component("awsx:ecs:EC2Service", "svc", {"taskDefinition": "arn"}, {"taskDefinition": [td["urn"]]})
    made = _derived(td, service)
    derived_td = made[("aws:ecs/taskDefinition:TaskDefinition", "td")]
    assert derived_td.urn == "urn:pulumi:s::p::awsx:ecs:EC2TaskDefinition$aws:ecs/taskDefinition:TaskDefinition::td"
    assert derived_td.derived.startswith(f"derived from awsx EC2TaskDefinition 'td' as awsx {AWSX.version} makes it")
    assert made[("aws:ecs/service:Service", "svc")].deps["taskDefinition"] == (derived_td.urn,)
    assert made[("aws:ecs/service:Service", "svc")].props == {"launchType": "EC2"}  # the component's taskDefinition is not the Service's input as given


def test_each_component_is_derived_unless_its_own_children_are_in_the_plan():
    built = _component("awsx:ecs:EC2TaskDefinition", "built", {"container": {"name": "a", "image": "x"}})
    child = {"urn": "urn:pulumi:s::p::awsx:ecs:EC2TaskDefinition$aws:ecs/taskDefinition:TaskDefinition::built", "type": "aws:ecs/taskDefinition:TaskDefinition", "name": "built", "inputs": {}}
    other = _component("awsx:ecs:EC2TaskDefinition", "other", {"container": {"name": "a", "image": "x"}})
    built_svc = _component("awsx:ecs:FargateService", "built-svc", {"taskDefinitionArgs": {"container": {"name": "a", "image": "x"}}})
    svc_child = {"urn": "urn:pulumi:s::p::awsx:ecs:FargateService$aws:ecs/service:Service::built-svc", "type": "aws:ecs/service:Service", "name": "built-svc", "inputs": {}}
    other_svc = _component("awsx:ecs:FargateService", "other-svc", {"taskDefinitionArgs": {"container": {"name": "a", "image": "x"}}})
    names = {name for _, name in _derived(built, child, other, built_svc, svc_child, other_svc)}
    assert names == {"other", "other-svc"}
    vpc, other_vpc = _component("awsx:ec2:Vpc", "built-vpc", {}), _component("awsx:ec2:Vpc", "other-vpc", {})
    subnet = {"urn": "urn:pulumi:s::p::awsx:ec2:Vpc$aws:ec2/vpc:Vpc$aws:ec2/subnet:Subnet::built-vpc-private-1", "type": "aws:ec2/subnet:Subnet", "name": "s", "inputs": {}}
    assert [n["network"] for n in _placed([vpc, subnet, other_vpc])["networks"]] == ["other-vpc"]


@pytest.mark.parametrize("zones, private", [
    (1, ["10.0.0.0/17"]),  # one zone: the whole block is its own
    (2, ["10.0.0.0/18", "10.0.128.0/18"]),
    (3, ["10.0.0.0/19", "10.0.64.0/19", "10.0.128.0/19"]),  # three zones take the blocks of four
    (4, ["10.0.0.0/19", "10.0.64.0/19", "10.0.128.0/19", "10.0.192.0/19"]),
])
def test_a_vpc_s_zone_blocks_by_the_count_of_its_zones(zones, private):
    [network] = _placed([_component("awsx:ec2:Vpc", "net", {"numberOfAvailabilityZones": zones})])["networks"]
    assert [s["cidrBlock"] for s in network["subnets"] if s["type"] == "Private"] == private


def test_a_vpc_s_other_strategies_and_pools_are_gaps():
    [network] = _placed([_component("awsx:ec2:Vpc", "net", {"numberOfAvailabilityZones": 0})])["networks"]
    assert network["subnets"] == []
    for inputs in ({"subnetStrategy": "Auto"}, {"ipv4IpamPoolId": "ipam-pool-1"}):
        placed = _placed([_component("awsx:ec2:Vpc", "net", inputs)])
        assert placed["networks"][0]["subnets"] == [] and any("is not derived" in g for g in placed["gaps"]), inputs
    [network] = _placed([_component("awsx:ec2:Vpc", "net", {"cidrBlock": 7})])["networks"]
    assert network["cidrBlock"] is None and network["subnets"] == []


@pytest.mark.parametrize(
    "containers, size",
    [
        # awsx's own (fargateMemoryAndCpu.test.ts L26-L50): an exact size kept, another rounded up in its table.
        ([{"cpu": 8192, "memory": 20480}], ("8192", "20480")),
        ([{"cpu": 8000, "memory": 21000}], ("8192", "21504")),
        # The containers' sums, a reservation before the hard limit: the smallest memory that covers them, then the vCPU.
        ([{"cpu": 256, "memory": 4096, "memoryReservation": 600}, {"cpu": 256}], ("512", "1024")),
        ([{"cpu": 512, "memory": 128}], ("512", "1024")),
        ([{"cpu": 34 * 1024, "memory": 1024}], None),  # past its largest: awsx throws
        ([{"cpu": "04da6b54-80e4-46f7-96ec-b56ff0331ba9", "memory": 128}], "04da6b54-80e4-46f7-96ec-b56ff0331ba9"),
    ],
)
def test_a_fargate_task_definition_is_sized_as_awsx_sizes_it(containers, size):
    from gpufleet.plans import awsx

    assert awsx.fargate_size(containers, AWSX.fargate_sizes) == size


def test_a_size_awsx_computes_that_fargate_does_not_run_is_pending_advisory():
    """awsx's table takes 8 vCPU in 1 GB steps, AWS's in 4 GB steps: 8000 units and 21000 MiB become
    8192 and 21504, which Fargate refuses. Derived from awsx's defaults, so the verdict is advisory."""
    args = {"container": {"name": "big", "image": "x", "cpu": 8000, "memory": 21000}}
    [task] = _placed([_component("awsx:ecs:FargateService", "big", {"taskDefinitionArgs": args})])["tasks"]
    assert (task["status"], task["capacityProvider"]) == ("pending", "FARGATE")
    assert task["reason"] == "21504 MiB with 8192 CPU units is not one of Fargate's task sizes (8192 takes 16384 to 61440 MiB in steps of 4096)"
    assert task["notes"][0].startswith("derived from awsx FargateService 'big'")
    # The program's own task size is kept as given.
    args["cpu"], args["memory"] = "8192", "24576"
    [task] = _placed([_component("awsx:ecs:FargateService", "big", {"taskDefinitionArgs": args})])["tasks"]
    assert task["status"] == "placed"
