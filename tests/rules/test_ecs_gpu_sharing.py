"""GPU sharing on ECS (MPS shares and G6f fractions): every rule through both doors on one table, the
pack-only rules, placement by GPU memory, and the ecs-mps stack's plan."""

from __future__ import annotations

import json

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import ecs_gpu_sharing
from gpufleet.simulate import ecs_scheduler
from gpufleet.simulate.ecs_placement import member_of
from gpufleet.ecs.args import WorkloadArgs
from gpufleet.ecs.container_definitions import container_definitions
from gpufleet.stack.spec import SpecError, load_spec
from tests.conftest import golden_plan, run_cli
from tests.policy_helpers import findings, gpu_container, launch_template, resource, task_definition

SHARING_RULES = {"ecs-gpu-value-or-share", "ecs-gpu-one-option", "ecs-mps-compute-percent", "ecs-mps-memory-fits", "ecs-gpu-fractional"}
CAT = catalog.load()
A10G = CAT.get("g5.xlarge").gpu.memory_mib  # 22,888 MiB in EC2's data


def share(memory: int, percent: int | None = None) -> dict:
    return {"gpuShare": {"memoryMiB": memory, **({"maxComputePercent": percent} if percent is not None else {})}}


# (case, the containers' GPU asks, instance type, the sharing rules broken)
CASES = [
    ("share-fits", [share(8000, 50)], "g5.xlarge", set()),
    ("share-fills-the-gpu", [share(A10G)], "g5.xlarge", set()),
    ("share-past-the-gpu", [share(A10G + 1)], "g5.xlarge", {"ecs-mps-memory-fits"}),
    ("two-shares-on-one-gpu", [share(12000), share(A10G - 12000 + 1)], "g5.12xlarge", {"ecs-mps-memory-fits"}),
    ("two-shares-fit", [share(12000), share(A10G - 12000)], "g5.12xlarge", set()),
    ("value-and-share", [{"gpus": 1, **share(8000)}], "g5.xlarge", {"ecs-gpu-value-or-share"}),
    ("whole-and-share", [{"gpus": 1}, share(4000)], "g5.12xlarge", {"ecs-gpu-one-option"}),
    ("whole-and-whole", [{"gpus": 1}, {"gpus": 1}], "g5.12xlarge", set()),
    ("compute-0", [share(8000, 0)], "g5.xlarge", {"ecs-mps-compute-percent"}),
    ("compute-1", [share(8000, 1)], "g5.xlarge", set()),
    ("compute-100", [share(8000, 100)], "g5.xlarge", set()),
    ("compute-101", [share(8000, 101)], "g5.xlarge", {"ecs-mps-compute-percent"}),
    ("share-on-g6f", [share(2000)], "g6f.2xlarge", {"ecs-gpu-fractional"}),
    ("fraction-on-g6f", [{"gpus": 0.25}], "g6f.2xlarge", set()),
    ("fraction-of-another-g6f", [{"gpus": 0.5}], "g6f.2xlarge", {"ecs-gpu-fractional"}),
    ("fraction-ecs-lacks", [{"gpus": 0.3}], "g6f.2xlarge", {"ecs-gpu-fractional"}),
    ("fraction-on-whole-gpus", [{"gpus": 0.25}], "g5.xlarge", {"ecs-gpu-fractional"}),
    ("two-fractions", [{"gpus": 0.125}, {"gpus": 0.125}], "g6f.large", {"ecs-gpu-one-option"}),
    ("no-gpu-asked", [{}], "g5.xlarge", set()),
    ("one-and-a-half", [{"gpus": 1.5}], "g5.12xlarge", {"ecs-gpu-value-or-share"}),
]


def _workload(asks: list[dict]) -> dict:
    containers = [{"name": f"c{i}", "image": "example:1", "memory": 512, **ask} for i, ask in enumerate(asks)]
    return {"name": "job", "capacityProvider": "gpu", "containers": containers}


def _fleet(asks: list[dict], instance_type: str) -> dict:
    return {
        "clusterName": "sharing",
        "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0"]},
        "capacityProviders": [{"name": "gpu", "instanceType": instance_type, "minSize": 0, "maxSize": 1, "desiredSize": 0}],
        "workloads": [_workload(asks)],
    }


def _spec_rules(asks: list[dict], instance_type: str) -> set[str]:
    try:
        load_spec({"region": "us-east-1", "ecs": _fleet(asks, instance_type)})
    except SpecError as err:
        return {issue.rule for issue in err.issues} & SHARING_RULES
    return set()


@pytest.fixture(scope="module")
def pack_rules(judge) -> dict[str, set[str]]:
    resources = []
    for case, asks, instance_type, _ in CASES:
        workload = WorkloadArgs.model_validate(_workload(asks))
        inputs = {
            "family": case,
            "containerDefinitions": json.dumps(container_definitions(workload, CAT)),
            "placementConstraints": [{"type": "memberOf", "expression": member_of(instance_type)}],
        }
        resources.append(resource("aws:ecs/taskDefinition:TaskDefinition", case, inputs))
    return _sharing_rules(judge(resources), [case for case, *_ in CASES])


def _sharing_rules(result, cases: list[str]) -> dict[str, set[str]]:
    """The sharing rules each case's task definition breaks in the pack's verdict."""
    found: dict[str, set[str]] = {case: set() for case in cases}
    for f in result.findings:
        if f.policy in SHARING_RULES:
            # Each of these requests ECS refuses or never places: all are mandatory.
            assert f.level == "mandatory", f
            found[f.urn.rsplit("::", 1)[-1]].add(f.policy)
    return found


@pytest.mark.parametrize("case, asks, instance_type, expected", CASES, ids=[c[0] for c in CASES])
def test_spec_and_pack_agree(case, asks, instance_type, expected, pack_rules):
    assert _spec_rules(asks, instance_type) == expected
    assert pack_rules[case] == expected


def test_every_sharing_rule_is_crossed_both_ways():
    """Each rule has a case that breaks it and one that keeps it, or the table proves little."""
    for rule in SHARING_RULES:
        assert any(rule in expected for *_, expected in CASES), rule
    assert any(not expected for *_, expected in CASES)


def test_the_spec_points_at_the_field_to_edit():
    with pytest.raises(SpecError) as err:
        load_spec(
            {
                "region": "us-east-1",
                "ecs": {
                    "clusterName": "sharing",
                    "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0"]},
                    "capacityProviders": [{"name": "gpu", "instanceType": "g5.xlarge", "minSize": 0, "maxSize": 1, "desiredSize": 0}],
                    "workloads": [_workload([share(4000), share(A10G, 120)])],
                },
            }
        )
    issues = {issue.rule: issue for issue in err.value.issues}
    assert issues["ecs-mps-memory-fits"].field == ("ecs", "workloads", 0, "containers", 1, "gpuShare", "memoryMiB")
    assert "4000" in issues["ecs-mps-memory-fits"].reason and str(A10G) in issues["ecs-mps-memory-fits"].reason
    assert issues["ecs-mps-compute-percent"].field[-2:] == ("gpuShare", "maxComputePercent")


def test_shares_render_as_the_api_takes_them():
    workload = WorkloadArgs.model_validate(_workload([share(6144, 25), {"gpus": 0.125}, {"gpus": 2.0}]))
    reqs = [c["resourceRequirements"] for c in container_definitions(workload, CAT)]
    assert reqs[0] == [{"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": 6144, "maxComputePercent": 25}}}]
    assert reqs[1] == [{"type": "GPU", "value": "0.125"}]
    assert reqs[2] == [{"type": "GPU", "value": "2"}]


def _mps_task(name: str) -> dict:
    container = gpu_container("server", 0)
    container["resourceRequirements"] = [{"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": 8000}}}]
    return task_definition(name, [container], member_of("g5.xlarge"))


def _gpu_ami(agent: str, newer: bool) -> str:
    """An us-east-1 AL2023 ECS GPU AMI whose agent is `agent` or later (newer) / older."""
    minimum = tuple(int(p) for p in agent.split("."))
    for ami in sorted(catalog.ecs_amis().values(), key=lambda a: a.image_version):
        version = tuple(int(p) for p in ami.agent_version.split("."))
        if ami.region == "us-east-1" and ami.accelerator == "gpu" and ami.variant == "al2023" and (version >= minimum) == newer:
            return ami.ami_id
    raise AssertionError("no such AMI in the snapshot")


def test_mps_tasks_need_an_agent_that_places_them(judge):
    minimum = CAT.ecs().gpu_sharing.mps_agent_minimum
    old, new = _gpu_ami(minimum, newer=False), _gpu_ami(minimum, newer=True)
    result = judge([_mps_task("mps"), launch_template("old", "g5.xlarge", imageId=old), launch_template("new", "g5.xlarge", imageId=new)])
    [message] = findings(result, "ecs-mps-agent")
    assert {f.level for f in result.findings if f.policy == "ecs-mps-agent"} == {"mandatory"}
    assert minimum in message and "g5.xlarge" in message
    assert [f.urn for f in result.findings if f.policy == "ecs-mps-agent"] == [
        f.urn for f in result.findings if f.urn.endswith("::old") and f.policy == "ecs-mps-agent"
    ]
    # Without an MPS task the old agent is fine: whole GPUs need nothing new.
    plain = task_definition("whole", [gpu_container("server", 1)], member_of("g5.xlarge"))
    assert findings(judge([plain, launch_template("old", "g5.xlarge", imageId=old)]), "ecs-mps-agent") == []


def test_mps_is_refused_on_external_compatibility(judge):
    external = _mps_task("external")
    external["inputs"]["requiresCompatibilities"] = ["EXTERNAL"]
    result = judge([external, _mps_task("ec2")])
    assert any("EXTERNAL" in m for m in findings(result, "ecs-gpu-task-placement", "external"))
    assert findings(result, "ecs-gpu-task-placement", "ec2") == []


def test_placement_counts_mps_memory_per_gpu():
    it = CAT.get("g5.12xlarge")  # 4 A10G
    inst = ecs_scheduler.InstanceShape("p", it.name, 49152, 190000, 180000, 4, 0, 1, 1, **ecs_scheduler.instance_gpus(it))
    task = ecs_scheduler.TaskShape("t", 1024, 1024, 0, mps_memory=A10G // 3)
    assert ecs_scheduler.per_instance(task, inst)[0] == 3 * 4
    task = ecs_scheduler.TaskShape("t", 1024, 1024, 0, mps_memory=A10G // 2 + 1)
    assert ecs_scheduler.per_instance(task, inst)[0] == 4  # one per GPU: two do not fit one GPU
    count, why = ecs_scheduler.per_instance(ecs_scheduler.TaskShape("t", 1024, 1024, 0, mps_memory=A10G + 1), inst)
    assert count == 0 and str(A10G) in why["gpus"]


def test_placement_of_fractions_and_shared_gpu_memory():
    g6f = CAT.get("g6f.2xlarge")
    slice_inst = ecs_scheduler.InstanceShape("s", g6f.name, 8192, 30000, 29000, 0, 0, 1, 2, **ecs_scheduler.instance_gpus(g6f))
    assert ecs_scheduler.per_instance(ecs_scheduler.TaskShape("q", 1024, 1024, 0, gpu_fraction=0.25), slice_inst)[0] == 1
    count, why = ecs_scheduler.per_instance(ecs_scheduler.TaskShape("h", 1024, 1024, 0, gpu_fraction=0.5), slice_inst)
    assert count == 0 and "0.25" in why["gpus"]
    # Two services on one g5.xlarge: a whole-GPU task and an MPS share cannot both have its one GPU.
    it = CAT.get("g5.xlarge")
    inst = ecs_scheduler.InstanceShape("p", it.name, 4096, 15000, 14000, 1, 0, 1, 1, **ecs_scheduler.instance_gpus(it))
    whole = ecs_scheduler.place_task(ecs_scheduler.TaskShape("whole", 512, 512, 1), inst, 1)
    shared = ecs_scheduler.place_task(ecs_scheduler.TaskShape("mps", 512, 512, 0, mps_memory=4000), inst, 1)
    [(_, why)] = ecs_scheduler.shared_capacity([whole, shared], {"p": inst})
    assert "GPU memory" in why
    assert (
        ecs_scheduler.shared_capacity(
            [shared, ecs_scheduler.place_task(ecs_scheduler.TaskShape("mps2", 512, 512, 0, mps_memory=4000), inst, 1)], {"p": inst}
        )
        == []
    )


plan, test_ecs_mps_plan_matches_golden = golden_plan("ecs-mps")


def test_the_summary_counts_tasks_per_gpu(plan):
    rows = {w["name"]: w for w in plan["summary"]["workloads"]}
    l40s = CAT.get("g6e.12xlarge").gpu.memory_mib
    assert rows["chat"]["gpuShare"]["tasksPerGpu"] == l40s // 22000 == 2
    assert rows["chat"]["gpuShare"]["computeBinds"] is False
    # Two containers of 25% each: 4 tasks fit one GPU's memory, 2 its compute.
    assert rows["embed-rerank"]["gpuShare"]["memoryMiBPerTask"] == 6144 + 4096
    assert (rows["embed-rerank"]["gpuShare"]["tasksPerGpu"], rows["embed-rerank"]["gpuShare"]["tasksPerGpuByCompute"]) == (4, 2)
    assert rows["small-llm"]["gpuFractionPerTask"] == 0.25 and rows["small-llm"]["tasksPerInstance"] == 1
    slices = next(g for g in plan["summary"]["groups"] if g["group"] == "slices")
    assert (slices["gpuFraction"], slices["accelerators"]["max"]) == (0.25, 1.0)


def test_ecs_mps_previews_clean():
    code, out, _ = run_cli("preview", "ecs-mps")
    assert code == 0 and "no violations" in out and "2 per GPU by" in out


def test_fraction_messages_say_what_to_change(judge):
    """A fraction on whole GPUs names G6f; a value ECS lacks is refused even where no type is pinned."""
    on_whole = ecs_gpu_sharing.GpuRequest(0, "c", "0.25", None)
    assert "only G6f types provide" in ecs_gpu_sharing.fraction_problem(CAT.get("g5.xlarge"), on_whole, CAT.ecs())
    unpinned = []
    for value in ("0.3", "0.25"):
        container = gpu_container("c", 0)
        container["resourceRequirements"] = [{"type": "GPU", "value": value}]
        unpinned.append(task_definition(f"unpinned-{value}", [container]))
    result = judge(unpinned)
    [message] = findings(result, "ecs-gpu-fractional", "unpinned-0.3")
    assert "0.125, 0.25, 0.5" in message
    assert findings(result, "ecs-gpu-fractional", "unpinned-0.25") == []


def test_tasks_per_gpu_divides_one_gpus_memory():
    it = CAT.get("g5.xlarge")
    assert ecs_gpu_sharing.tasks_per_gpu(it, 1) == A10G
    assert ecs_gpu_sharing.tasks_per_gpu(it, A10G) == 1 and ecs_gpu_sharing.tasks_per_gpu(it, A10G + 1) == 0
    assert ecs_gpu_sharing.tasks_per_gpu(it, 0) == 0  # no share asked: no division
    assert ecs_gpu_sharing.tasks_per_gpu(it, -1) == 0  # nor a negative one
    assert ecs_gpu_sharing.tasks_per_gpu(CAT.get("g6f.2xlarge"), 1000) == 0  # MPS does not run on G6f


def test_compute_percent_takes_only_integers_in_range():
    for bad in (True, "50", 50.5, 0, 101):
        assert ecs_gpu_sharing.compute_percent_problem(bad), bad
    for good in (None, 1, 50, 100):
        assert ecs_gpu_sharing.compute_percent_problem(good) is None, good


def _requirements(*requirements) -> dict:
    container = gpu_container("c", 0)
    container["resourceRequirements"] = list(requirements)
    return container


MPS = {"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": 4000}}}
MPS_PAST_THE_GPU = {"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": A10G + 1}}}

# Task definitions as any program may write them (the pack reads containerDefinitions as ECS does):
# (case, containers, instance type, the sharing rules broken). Only GPU requirements of object
# containers count; a value is a fraction only strictly between 0 and 1.
RAW = [
    ("junk-then-share-past-the-gpu", ["not a container", _requirements(MPS_PAST_THE_GPU)], "g5.xlarge", {"ecs-mps-memory-fits"}),
    (
        "accelerator-then-share-past-the-gpu",
        [_requirements({"type": "InferenceAccelerator", "value": "device-1"}, MPS_PAST_THE_GPU)],
        "g5.xlarge",
        {"ecs-mps-memory-fits"},
    ),
    ("untyped-requirement-and-share", [_requirements({"value": "1"}, MPS)], "g5.xlarge", set()),
    ("memory-as-text", [_requirements({"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": str(A10G + 1)}}})], "g5.xlarge", set()),
    (
        "memory-as-bool-and-share-that-fills",
        [
            _requirements({"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": True}}}),
            _requirements({"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": A10G}}}),
        ],
        "g5.12xlarge",
        set(),
    ),
    ("one-gpu-is-whole", [_requirements({"type": "GPU", "value": "1"})], "g5.xlarge", set()),
    ("zero-is-no-fraction", [_requirements({"type": "GPU", "value": "0"})], "g5.xlarge", set()),
    ("negative-is-no-fraction", [_requirements({"type": "GPU", "value": "-0.5"})], "g5.xlarge", {"ecs-gpu-value-or-share"}),
    ("one-and-a-half-is-no-count", [_requirements({"type": "GPU", "value": "1.5"})], "g5.12xlarge", {"ecs-gpu-value-or-share"}),
    ("a-word-is-no-count", [_requirements({"type": "GPU", "value": "two"})], "g5.12xlarge", {"ecs-gpu-value-or-share"}),
    ("all-gpus", [_requirements({"type": "GPU", "value": "ALL"})], "g5.xlarge", set()),
    ("whole-beside-a-share", [_requirements({"type": "GPU", "value": "1"}), _requirements(MPS)], "g5.12xlarge", {"ecs-gpu-one-option"}),
    ("fraction-smaller-than-the-type", [_requirements({"type": "GPU", "value": "0.125"})], "g6f.2xlarge", {"ecs-gpu-fractional"}),
    ("no-gpu-request", [gpu_container("c", 0)], "g5.xlarge", set()),
    (
        "share-past-a-g6f-slice",
        [_requirements({"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": CAT.get("g6f.2xlarge").gpu.memory_mib + 1}}})],
        "g6f.2xlarge",
        {"ecs-gpu-fractional"},
    ),
    ("two-gpus-is-whole", [_requirements({"type": "GPU", "value": "2"})], "g5.12xlarge", set()),
    (
        "memory-as-text-beside-a-share-past-the-gpu",
        [_requirements({"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": "lots"}}}), _requirements(MPS_PAST_THE_GPU)],
        "g5.12xlarge",
        {"ecs-mps-memory-fits"},
    ),
]


@pytest.fixture(scope="module")
def raw_rules(judge) -> dict[str, set[str]]:
    result = judge([task_definition(case, containers, member_of(instance_type)) for case, containers, instance_type, _ in RAW])
    return _sharing_rules(result, [case for case, *_ in RAW])


@pytest.mark.parametrize("case, containers, instance_type, expected", RAW, ids=[c[0] for c in RAW])
def test_the_pack_reads_gpu_requests_as_ecs_does(case, containers, instance_type, expected, raw_rules):
    assert raw_rules[case] == expected


def test_the_memory_message_names_only_the_shares(judge):
    """A whole GPU or a fraction beside shares is refused by its own rule; the memory message adds up
    the MPS containers alone."""

    def named(name, requirement):
        container = _requirements(requirement)
        container["name"] = name
        return container

    tasks = [
        task_definition(
            "whole-beside", [named("w", {"type": "GPU", "value": "1"}), named("s", MPS_PAST_THE_GPU)], member_of("g5.12xlarge")
        ),
        task_definition(
            "fraction-beside", [named("f", {"type": "GPU", "value": "0.125"}), named("s", MPS_PAST_THE_GPU)], member_of("g5.12xlarge")
        ),
    ]
    result = judge(tasks)
    for name in ("whole-beside", "fraction-beside"):
        [message] = findings(result, "ecs-mps-memory-fits", name)
        assert f"ask {A10G + 1} MiB (s {A10G + 1})" in message, message


def test_only_mps_shares_are_refused_on_external(judge):
    tasks = []
    for name, requirement in (("whole", {"type": "GPU", "value": "1"}), ("fraction", {"type": "GPU", "value": "0.25"}), ("share", MPS)):
        task = task_definition(f"external-{name}", [_requirements(requirement)])
        task["inputs"]["requiresCompatibilities"] = ["EXTERNAL"]
        tasks.append(task)
    result = judge(tasks)
    refused = {f.urn.rsplit("::", 1)[-1] for f in result.findings if f.policy == "ecs-gpu-task-placement" and "MPS" in f.message}
    assert refused == {"external-share"}


def test_a_fraction_on_a_type_without_one_names_what_the_type_has():
    on = {
        name: ecs_gpu_sharing.fraction_problem(CAT.get(name), ecs_gpu_sharing.GpuRequest(0, "c", "0.25", None), CAT.ecs())
        for name in ("g5.xlarge", "c5.xlarge")
    }
    assert on["g5.xlarge"].endswith("g5.xlarge has whole GPUs")
    assert on["c5.xlarge"].endswith("c5.xlarge has no GPU")


def test_gpu_placement_counts_whole_gpus_not_shares(judge):
    """A task asking twice the whole GPUs of a g5.12xlarge does not fit it; one sharing a GPU does."""
    twice = str(2 * CAT.get("g5.12xlarge").gpu.count)
    whole = task_definition("eight", [_requirements({"type": "GPU", "value": twice})], member_of("g5.12xlarge"))
    shared = task_definition("shared", [_requirements(MPS)], member_of("g5.12xlarge"))
    result = judge([whole, shared])
    refused = {(f.urn.rsplit("::", 1)[-1], f.level) for f in result.findings if f.policy == "ecs-gpus-fit-instance"}
    assert refused == {("eight", "mandatory")}


def test_the_mps_agent_rule_reads_every_task_and_template(judge):
    """Templates of types no MPS task admits, templates without a known ECS GPU AMI, and tasks that
    ask for no share are passed over; the MPS task's own types are still judged, past them."""
    minimum = CAT.ecs().gpu_sharing.mps_agent_minimum
    old = _gpu_ami(minimum, newer=False)
    open_task = _mps_task("open")
    open_task["inputs"].pop("placementConstraints")  # no memberOf: every template is one it may land on
    cpu_task = task_definition("cpu", [gpu_container("server", 0)])
    other_type = launch_template("other-type", "g5.2xlarge", imageId=old)
    custom = launch_template("custom", "g5.xlarge")
    result = judge([custom, cpu_task, _mps_task("mps"), other_type, launch_template("old", "g5.xlarge", imageId=old)])
    assert [f.urn.rsplit("::", 1)[-1] for f in result.findings if f.policy == "ecs-mps-agent"] == ["old"]
    result = judge([open_task, other_type])
    assert [f.urn.rsplit("::", 1)[-1] for f in result.findings if f.policy == "ecs-mps-agent"] == ["other-type"]
    unreadable = _mps_task("unreadable")
    unreadable["inputs"]["placementConstraints"] = [{"type": "memberOf", "expression": "attribute:ecs.instance-type =="}]
    result = judge([unreadable, other_type])
    assert [f.urn.rsplit("::", 1)[-1] for f in result.findings if f.policy == "ecs-mps-agent"] == ["other-type"]


def test_whole_gpu_containers_are_passed_over_by_the_fraction_rule(judge):
    whole = gpu_container("whole", 1)
    share = gpu_container("share", 0)
    share["resourceRequirements"] = [{"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": 8000}}}]
    messages = findings(judge([task_definition("mixed", [whole, share], member_of("g6f.large"))]), "ecs-gpu-fractional")
    assert any("container 'share'" in m for m in messages)


def _issues(asks: list[dict], instance_type: str) -> list[tuple]:
    """(field under the workload, value) of each sharing error of the spec."""
    with pytest.raises(SpecError) as err:
        load_spec({"region": "us-east-1", "ecs": _fleet(asks, instance_type)})
    return [(i.rule, i.field[i.field.index("containers") :], i.value) for i in err.value.issues if i.rule in SHARING_RULES]


@pytest.mark.parametrize(
    "asks, instance_type, expected",
    [
        # Two ways of asking in one task: the error points at the last container's ask.
        # the value as the stack writes it: the share's memory, the GPU count
        ([{"gpus": 1}, share(4000)], "g5.12xlarge", [("ecs-gpu-one-option", ("containers", 1, "gpuShare"), 4000)]),
        ([share(4000), {"gpus": 1}], "g5.12xlarge", [("ecs-gpu-one-option", ("containers", 1, "gpus"), 1)]),
        ([share(4000), {"gpus": 1}, share(3000)], "g5.12xlarge", [("ecs-gpu-one-option", ("containers", 2, "gpuShare"), 3000)]),
        # A fraction on whole GPUs points at gpus; a share on a type without MPS at gpuShare, with its memory.
        ([{}, {"gpus": 0.25}], "g5.xlarge", [("ecs-gpu-fractional", ("containers", 1, "gpus"), 0.25)]),
        ([{}, share(2000)], "g6f.2xlarge", [("ecs-gpu-fractional", ("containers", 1, "gpuShare"), 2000)]),
    ],
)
def test_a_sharing_error_points_at_the_ask_to_edit(asks, instance_type, expected):
    assert _issues(asks, instance_type) == expected


def test_mps_is_refused_on_external_when_any_container_shares():
    from gpufleet.rules.ecs_gpu_sharing import GpuRequest, compatibility_problem

    share = GpuRequest(0, "a", None, {"nvidiaMps": {"memory": 1000}})
    whole = GpuRequest(1, "b", "1", None)
    facts = CAT.facts.ecs
    refused = facts.gpu_sharing.mps_unsupported_compatibilities[0]
    assert compatibility_problem([refused], [whole, share], facts) is not None
    assert compatibility_problem([refused], [whole], facts) is None
    assert compatibility_problem(["EC2"], [share], facts) is None


def test_one_admitted_type_that_holds_the_share_or_the_fraction_is_enough(judge):
    """ECS places the task where it fits: of the types memberOf admits, one is enough (an `all`
    written as `any` passed before these cases)."""
    share = _requirements({"type": "GPU", "sharingStrategy": {"nvidiaMps": {"memory": 30000}}})
    quarter = _requirements({"type": "GPU", "value": "0.25"})
    result = judge(
        [
            task_definition("share-fits-one", [share], "attribute:ecs.instance-type in [g5.xlarge, g6e.xlarge]"),
            task_definition("share-fits-none", [share], "attribute:ecs.instance-type in [g5.xlarge]"),
            task_definition("quarter-fits-one", [quarter], "attribute:ecs.instance-type in [g6f.large, g6f.2xlarge]"),
            task_definition("quarter-fits-none", [quarter], "attribute:ecs.instance-type in [g6f.large]"),
        ]
    )
    assert findings(result, "ecs-mps-memory-fits", "share-fits-one") == [] and findings(result, "ecs-mps-memory-fits", "share-fits-none")
    assert findings(result, "ecs-gpu-fractional", "quarter-fits-one") == [] and findings(result, "ecs-gpu-fractional", "quarter-fits-none")
