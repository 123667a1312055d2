"""ECS Managed Instances: the types a provider's requirements admit, the spec's rules for providers and
their workloads, NeuronDevice ALL through both doors, and the ecs-managed-gpu stack's plan."""

from __future__ import annotations

import json

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import managed_instances
from gpufleet.catalog.generate.sources import MotoSnapshot
from gpufleet.ecs.args import WorkloadArgs
from gpufleet.ecs.container_definitions import container_definitions
from gpufleet.stack.spec import SpecError, load_spec
from tests.conftest import golden_plan, run_cli
from tests.policy_helpers import findings, resource

CAT = catalog.load()
EC2 = MotoSnapshot().instance_types()


def _fleet(providers: list[dict], workloads: list[dict] | None = None) -> dict:
    return {
        "clusterName": "mi",
        "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0"]},
        "managedInstanceProviders": providers,
        "workloads": workloads or [],
    }


def _rules(fleet: dict) -> dict[str, list]:
    try:
        load_spec({"region": "us-east-1", "ecs": fleet})
    except SpecError as err:
        found: dict[str, list] = {}
        for issue in err.issues:
            found.setdefault(issue.rule, []).append(issue)
        return found
    return {}


def _workload(provider: str, containers: list[dict], **extra) -> dict:
    base = [{"name": f"c{i}", "image": "example:1", "memory": 2048, "cpu": 1024, **c} for i, c in enumerate(containers)]
    return {"name": "job", "capacityProvider": provider, "containers": base, **extra}


L4_ONE = {"name": "gpu", "acceleratorManufacturers": ["nvidia"], "acceleratorNames": ["l4"], "acceleratorCount": {"min": 1, "max": 1}}
INF2 = {"name": "neuron", "instanceTypes": ["inf2.xlarge", "inf2.8xlarge"]}


def test_requirements_admit_the_types_ec2_data_matches():
    admitted = {
        it.name
        for it in managed_instances.candidates(managed_instances.Requirements(("g6.xlarge", "g5.xlarge", "m5.large")), "us-east-1", CAT)
    }
    assert admitted == {"g6.xlarge", "g5.xlarge"}  # m5.large has no accelerator
    req = managed_instances.Requirements(manufacturers=("nvidia",), names=("l4",), accelerator_count=(4, 4))
    for it in managed_instances.candidates(req, "us-east-1", CAT):
        gpus = EC2[it.name]["GpuInfo"]["Gpus"][0]
        assert gpus["Name"] == "L4" and gpus.get("LogicalGpuCount", gpus["Count"]) == 4
    # Each bound is inclusive and binds: one below and one above the type's own figure excludes it.
    it = CAT.get("g6.12xlarge")
    bounded = (
        ("accelerator_count", "accelerators", 4),
        ("vcpus", "vCPUs", it.vcpus),
        ("memory_mib", "MiB of memory", it.memory_mib),
        ("accelerator_memory_mib", "MiB of accelerator memory", 4 * it.gpu.memory_mib),
    )
    for field, what, value in bounded:
        assert managed_instances.mismatch(it, managed_instances.Requirements(**{field: (value, value)})) is None
        assert (
            managed_instances.mismatch(it, managed_instances.Requirements(**{field: (value + 1, None)}))
            == f"has {value} {what}, outside {value + 1}..any"
        )
        assert (
            managed_instances.mismatch(it, managed_instances.Requirements(**{field: (None, value - 1)}))
            == f"has {value} {what}, outside 0..{value - 1}"
        )
    # A Neuron type's accelerator memory is its chips' memory together (inf2.48xlarge: 12 chips).
    inf2 = CAT.get("inf2.48xlarge")
    total = sum(d["Count"] * d["MemoryInfo"]["SizeInMiB"] for d in EC2["inf2.48xlarge"]["NeuronInfo"]["NeuronDevices"])
    assert managed_instances.mismatch(inf2, managed_instances.Requirements(accelerator_memory_mib=(total, total))) is None
    assert managed_instances.mismatch(inf2, managed_instances.Requirements(accelerator_memory_mib=(total + 1, None))) is not None
    assert "amazon-web-services" not in (
        managed_instances.mismatch(CAT.get("inf2.xlarge"), managed_instances.Requirements(manufacturers=("amazon-web-services",))) or ""
    )
    assert managed_instances.mismatch(CAT.get("inf2.xlarge"), managed_instances.Requirements(manufacturers=("nvidia",)))


def test_a_providers_types_are_remembered_per_requirements_and_region():
    """The spec, the components and the summary ask for a provider's types again and again: what is
    remembered for one provider or region is never handed to another."""
    from gpufleet.ecs.args import ManagedInstanceProviderArgs
    from gpufleet.ecs.resolved import managed_candidates

    providers = [ManagedInstanceProviderArgs.model_validate(p) for p in (L4_ONE, {"name": "h100", "acceleratorNames": ["h100"]})]
    seen = set()
    for region in CAT.regions:
        for mp in providers:
            found = managed_candidates(mp, region, CAT)
            assert found == tuple(managed_instances.candidates(mp.requirements(), region, CAT))
            seen.add((mp.name, found))
    assert len({found for _, found in seen}) > 2  # the providers and the regions admit different types


def test_a_clean_managed_fleet_passes():
    workloads = [_workload("gpu", [{"gpus": 1}], service={"desiredCount": 2})]
    assert _rules(_fleet([L4_ONE, INF2], workloads)) == {}


@pytest.mark.parametrize(
    "providers, workloads, rule, field",
    [
        ([{**L4_ONE, "acceleratorCount": {"min": 9}}], [], "ecs-managed-instances-match", ("acceleratorNames",)),
        (
            [{"name": "gpu", "instanceTypes": ["g6.xlarge", "m5.large"], "acceleratorNames": ["a10g"]}],
            [],
            "ecs-managed-instances-match",
            ("instanceTypes",),
        ),
        ([{"name": "gpu", "instanceTypes": ["g9.huge"]}], [], "instance-type-known", ("instanceTypes", 0)),
        ([L4_ONE, {**INF2, "name": "gpu"}], [], "names-unique", ("name",)),
        ([L4_ONE], [_workload("gpu", [{"gpus": 2}])], "ecs-gpus-fit-instance", ("containers", 0, "gpus")),
        ([L4_ONE], [_workload("gpu", [{"memory": 10**6}])], "ecs-memory-fits-instance", ("containers", 0, "memory")),
        ([INF2], [_workload("neuron", [{"neuronDevices": 1}])], "ecs-neuron-device-managed", ("containers", 0, "neuronDevices")),
        (
            [INF2],
            [_workload("neuron", [{"neuronDevices": "all"}, {"neuronDevices": "all"}])],
            "ecs-neuron-device-managed",
            ("containers", 0, "neuronDevices"),
        ),
        ([INF2], [_workload("neuron", [{}], service={"perChip": True})], "ecs-neuron-per-chip", ("service", "perChip")),
    ],
)
def test_managed_rules(providers, workloads, rule, field):
    found = _rules(_fleet(providers, workloads))
    assert rule in found, found
    assert any(issue.field[-len(field) :] == field for issue in found[rule]), found[rule]


def test_a_fleet_needs_some_capacity():
    fleet = _fleet([])
    del fleet["managedInstanceProviders"]
    assert "ecs-capacity" in _rules(fleet)


def test_neuron_device_all_agrees_in_both_doors(judge):
    """The spec renders NeuronDevice ALL on Managed Instances; the pack reads any task definition."""
    cases = {
        "one-all": ([{"neuronDevices": "all"}], ["MANAGED_INSTANCES"], False),
        "two-all": ([{"neuronDevices": "all"}, {"neuronDevices": "all"}], ["MANAGED_INSTANCES"], True),
        "all-on-ec2": ([{"neuronDevices": "all"}], ["EC2"], True),
    }
    resources = []
    for name, (containers, compatibilities, _) in cases.items():
        workload = WorkloadArgs.model_validate(_workload("neuron", containers))
        definitions = container_definitions(workload, CAT, [1] * len(containers), managed=True)
        resources.append(
            resource(
                "aws:ecs/taskDefinition:TaskDefinition",
                name,
                {"family": name, "containerDefinitions": json.dumps(definitions), "requiresCompatibilities": compatibilities},
            )
        )
    result = judge(resources)
    for name, (containers, compatibilities, broken) in cases.items():
        assert bool(findings(result, "ecs-neuron-device-managed", name)) == broken, name
        assert all(f.level == "mandatory" for f in result.findings if f.policy == "ecs-neuron-device-managed")
        if compatibilities == ["MANAGED_INSTANCES"]:
            spec = _rules(_fleet([INF2], [_workload("neuron", containers)]))
            assert ("ecs-neuron-device-managed" in spec) == broken, name


def test_managed_tasks_leave_the_types_to_their_provider(judge):
    container = {
        "name": "c",
        "image": "example:1",
        "memory": 1024,
        "resourceRequirements": [{"type": "GPU", "value": "1"}],
        "environment": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility,compute"}],
    }
    managed = resource(
        "aws:ecs/taskDefinition:TaskDefinition",
        "managed",
        {"family": "m", "containerDefinitions": json.dumps([container]), "requiresCompatibilities": ["MANAGED_INSTANCES"]},
    )
    ec2 = resource(
        "aws:ecs/taskDefinition:TaskDefinition",
        "ec2",
        {"family": "e", "containerDefinitions": json.dumps([container]), "requiresCompatibilities": ["EC2"]},
    )
    result = judge([managed, ec2])
    assert findings(result, "ecs-gpu-task-placement", "managed") == []
    assert findings(result, "ecs-gpu-task-placement", "ec2")


plan, test_ecs_managed_gpu_plan_matches_golden = golden_plan("ecs-managed-gpu")


def test_the_summary_lists_admitted_types_and_where_tasks_land(plan):
    rows = {m["group"]: m for m in plan["summary"]["managedInstances"]}
    assert rows["neuron"]["instanceTypes"] == ["inf2.xlarge", "inf2.8xlarge"]
    assert "g6.xlarge" in rows["gpu"]["instanceTypes"] and all(t.startswith(("g5", "g6", "gr6")) for t in rows["gpu"]["instanceTypes"])
    workloads = {w["name"]: w for w in plan["summary"]["workloads"]}
    assert workloads["neuron-serve"]["tasksPerInstance"] == 1  # NeuronDevice ALL: every chip to one task


def test_ecs_managed_gpu_previews_clean():
    code, out, _ = run_cli("preview", "ecs-managed-gpu")
    assert code == 0 and "no violations" in out and "ECS Managed Instances" in out


def test_provider_names_are_one_namespace():
    fleet = _fleet([L4_ONE])
    fleet["capacityProviders"] = [{"name": "gpu", "instanceType": "g5.xlarge", "minSize": 0, "maxSize": 1, "desiredSize": 0}]
    [issue] = _rules(fleet)["names-unique"]
    assert issue.field[-3:] == ("managedInstanceProviders", 0, "name")


def test_the_instance_role_is_one_the_managed_policy_may_pass(judge, plan):
    resources = plan["resources"]
    assert findings(judge(resources), "ecs-managed-instances-role-name") == []
    renamed = json.loads(json.dumps(resources))
    role = next(r for r in renamed if r["type"] == "aws:iam/role:Role" and r["name"] == "ml-managed-gpu-instance")
    role["inputs"]["name"] = "ml-managed-gpu-instance-7f3a"  # what an autonaming tool would make
    result = judge(renamed)
    [message] = findings(result, "ecs-managed-instances-role-name")
    assert "ml-managed-gpu-instance-7f3a" in message and "ecsInstanceRole*" in message
    assert {f.level for f in result.findings if f.policy == "ecs-managed-instances-role-name"} == {"mandatory"}
    # A custom infrastructure policy may pass any name.
    for r in renamed:
        if r["type"] == "aws:iam/rolePolicyAttachment:RolePolicyAttachment" and "InfrastructureRolePolicyForManagedInstances" in str(
            r["inputs"].get("policyArn")
        ):
            r["inputs"]["policyArn"] = "arn:aws:iam::123456789012:policy/custom-managed-instances"
    assert findings(judge(renamed), "ecs-managed-instances-role-name") == []


@pytest.mark.parametrize(
    "requirements, admits",
    [
        ({"allowedInstanceTypes": ["inf2.xlarge"], "vcpuCount": {"min": 1}, "memoryMib": {"min": 1}}, True),
        ({"allowedInstanceTypes": ["inf2.xlarge"], "vcpuCount": {"min": 64}, "memoryMib": {"min": 1}}, False),
        ({"acceleratorNames": ["l4"], "acceleratorCount": {"min": 8, "max": 8}, "vcpuCount": {"min": 1}, "memoryMib": {"min": 1}}, True),
        ({"acceleratorNames": ["l4"], "acceleratorCount": {"min": 9}, "vcpuCount": {"min": 1}, "memoryMib": {"min": 1}}, False),
    ],
)
def test_requirements_that_admit_nothing_agree_in_both_doors(judge, requirements, admits):
    inputs = {
        "name": "mi-gpu",
        "cluster": "mi",
        "managedInstancesProvider": {
            "infrastructureRoleArn": "arn:aws:iam::123456789012:role/infra",
            "instanceLaunchTemplate": {
                "ec2InstanceProfileArn": "arn:aws:iam::123456789012:instance-profile/ecsInstanceRole-x",
                "networkConfiguration": {"subnets": ["subnet-0123456789abcdef0"]},
                "instanceRequirements": requirements,
            },
        },
    }
    result = judge([resource("aws:ecs/capacityProvider:CapacityProvider", "mi-gpu", inputs)])
    assert (findings(result, "ecs-managed-instances-match") == []) == admits
    assert {f.level for f in result.findings if f.policy == "ecs-managed-instances-match"} <= {"mandatory"}
    spec = {
        "name": "gpu",
        "instanceTypes": requirements.get("allowedInstanceTypes", []),
        "acceleratorNames": requirements.get("acceleratorNames", []),
        "vcpuCount": requirements["vcpuCount"],
        **({"acceleratorCount": requirements["acceleratorCount"]} if "acceleratorCount" in requirements else {}),
    }
    issues = _rules(_fleet([spec])).get("ecs-managed-instances-match", [])
    assert (issues == []) == admits
    if not admits:  # the spec error points at what the provider names: its types, else its accelerators
        key = "instanceTypes" if spec["instanceTypes"] else "acceleratorNames"
        assert [(i.field[-1], i.value) for i in issues] == [(key, spec[key])]


R = managed_instances.Requirements
NOT_P5 = sorted(set(CAT.regions) - set(CAT.get("p5.48xlarge").offerings))[0]


@pytest.mark.parametrize(
    "requirements, region, message",
    [
        # What the spec and the pack say of a provider whose requirements admit nothing, per type named.
        (
            R(("g5.xlarge",), names=("l4",)),
            "us-east-1",
            "the instance requirements admit no accelerated type offered in us-east-1: g5.xlarge its accelerator is a10g",
        ),
        (
            R(("g5.xlarge",), manufacturers=("amd",)),
            None,
            "the instance requirements admit no accelerated type offered in any region: g5.xlarge its accelerators are nvidia",
        ),
        (
            R(("inf2.xlarge",), names=("a10g",)),
            "us-east-1",
            "the instance requirements admit no accelerated type offered in us-east-1: inf2.xlarge its accelerator is not an API accelerator name",
        ),
        # Inferentia (inf1) is an API accelerator name; Inferentia2 is not.
        (
            R(("inf1.xlarge",), names=("a10g",)),
            "us-east-1",
            "the instance requirements admit no accelerated type offered in us-east-1: inf1.xlarge its accelerator is inferentia",
        ),
        (
            R(("m5.large", "nope.large")),
            "us-east-1",
            "the instance requirements admit no accelerated type offered in us-east-1: m5.large has no accelerator",
        ),
        (
            R(("p5.48xlarge",)),
            NOT_P5,
            f"the instance requirements admit no accelerated type offered in {NOT_P5}: p5.48xlarge is not offered in {NOT_P5}",
        ),
        (
            R(names=("a10g",), accelerator_count=(9, None)),
            "us-east-1",
            "the instance requirements admit no accelerated type offered in us-east-1",
        ),
        (R(("g5.xlarge",), names=("a10g",)), "us-east-1", None),
    ],
)
def test_requirements_that_admit_nothing_say_why_per_type(requirements, region, message):
    assert managed_instances.no_match_problem(requirements, region, CAT) == message


def _neuron(name: str) -> dict:
    return {"name": name, "resourceRequirements": [{"type": "NeuronDevice", "value": "ALL"}]}


@pytest.mark.parametrize(
    "containers, compatibilities, messages",
    [
        ([_neuron("a")], ["MANAGED_INSTANCES"], []),
        (
            [_neuron("a")],
            [],
            [
                "container 'a' asks for NeuronDevice, which only Managed Instances support (requiresCompatibilities ['EC2 by default']); on EC2 capacity map the chips as /dev/neuronK devices"
            ],
        ),
        (
            [_neuron("a"), _neuron("b")],
            ["EC2"],
            [
                "containers a, b ask for NeuronDevice: only one container of a task may",
                "container 'a' asks for NeuronDevice, which only Managed Instances support (requiresCompatibilities ['EC2']); on EC2 capacity map the chips as /dev/neuronK devices",
            ],
        ),
    ],
)
def test_neuron_device_messages(containers, compatibilities, messages):
    assert managed_instances.neuron_device_problems(containers, compatibilities) == messages


def test_each_provider_is_held_to_its_own_infrastructure_policy(judge, plan):
    """The gpu provider's infrastructure role gets a custom policy and a badly named instance role:
    not judged, though the neuron provider's role keeps the managed policy; the neuron provider,
    judged after it, is still judged."""
    renamed = json.loads(json.dumps(plan["resources"]))
    for r in renamed:
        if r["type"] == "aws:iam/rolePolicyAttachment:RolePolicyAttachment" and r["name"].startswith("ml-managed-gpu-infrastructure"):
            r["inputs"]["policyArn"] = "arn:aws:iam::123456789012:policy/custom-managed-instances"
        if r["type"] == "aws:iam/role:Role" and r["name"] in ("ml-managed-gpu-instance", "ml-managed-neuron-instance"):
            r["inputs"]["name"] = f"{r['name']}-7f3a"
    [message] = findings(judge(renamed), "ecs-managed-instances-role-name")
    assert "capacity provider 'ml-managed-neuron' passes instance role 'ml-managed-neuron-instance-7f3a'" in message


def test_an_auto_scaling_provider_is_not_a_managed_instances_one(judge):
    group = resource("aws:autoscaling/group:Group", "asg", {"maxSize": 1, "minSize": 0})
    cp = resource(
        "aws:ecs/capacityProvider:CapacityProvider",
        "cp",
        {"autoScalingGroupProvider": {"autoScalingGroupArn": "arn"}},
        autoScalingGroupProvider=[group],
    )
    result = judge([group, cp])
    assert findings(result, "ecs-managed-instances-match") == [] and findings(result, "ecs-managed-instances-role-name") == []


def test_among_types_that_hold_as_many_tasks_the_smallest_is_where_tasks_land():
    from gpufleet.stack.summary import accelerator_summary

    admitted = ["g5.8xlarge", "gr6.4xlarge", "g6.4xlarge"]  # the larger ones first: a tie must not keep the first
    assert {CAT.get(t).gpu.count for t in admitted} == {1}  # a one-GPU task: one per instance on each
    smallest = min(admitted, key=lambda t: (CAT.get(t).vcpus, CAT.get(t).memory_mib))
    assert smallest == "g6.4xlarge" and CAT.get("gr6.4xlarge").vcpus == CAT.get(smallest).vcpus  # vCPUs tie, memory decides
    fleet = _fleet([{"name": "gpu", "instanceTypes": admitted}], [_workload("gpu", [{"gpus": 1}], service={"desiredCount": 2})])
    [row] = accelerator_summary(load_spec({"region": "us-east-1", "ecs": fleet}), CAT)["workloads"]
    assert (row["landsOn"], row["tasksPerInstance"]) == (smallest, 1)


def test_a_task_per_chip_on_managed_instances_names_the_setting_as_written():
    [issue] = _rules(_fleet([INF2], [_workload("neuron", [{}], service={"perChip": True})]))["ecs-neuron-per-chip"]
    assert (issue.field[-2:], issue.value) == (("service", "perChip"), True)
    assert "on Managed Instances a task gets every chip of its instance (NeuronDevice ALL)" in issue.reason
