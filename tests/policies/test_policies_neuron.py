"""src/gpufleet/policies/neuron.py: each rule with a violating and a clean fixture, judged by the pack over gRPC."""

from __future__ import annotations

from gpufleet.catalog import catalog
from gpufleet.simulate.ecs_placement import member_of
from gpufleet.catalog.generate.sources import MotoSnapshot
from tests.conftest import shipped_plan
from tests.policy_helpers import findings, one_finding, launch_template, resource, task_definition


def neuron_container(name: str, chips: list[int], ipc_lock: bool = True, **extra) -> dict:
    container = {"name": name, "image": "example:1", "memory": 1024, "essential": True, **extra}
    container["linuxParameters"] = {
        "devices": [{"hostPath": f"/dev/neuron{k}", "containerPath": f"/dev/neuron{k}", "permissions": ["read", "write"]} for k in chips],
        **({"capabilities": {"add": ["IPC_LOCK"]}} if ipc_lock else {}),
    }
    return container


def _neuron_ami(variant: str, region: str = "us-east-1") -> str:
    return next(a.ami_id for a in catalog.ecs_amis().values() if a.accelerator == "neuron" and a.variant == variant and a.region == region)


def _provider(region: str) -> dict:
    return resource("pulumi:providers:aws", f"aws-{region}", {"region": region})


def _on(provider: dict, r: dict) -> dict:
    return {**r, "provider": provider["urn"]}


def test_devices_exist(judge):
    chips = catalog.load().get("inf2.24xlarge").neuron.count
    result = judge(
        [
            task_definition("clean", [neuron_container("a", list(range(chips)))], member_of("inf2.24xlarge")),
            task_definition("past-the-chips", [neuron_container("a", [0, chips])], member_of("inf2.24xlarge")),
            task_definition("twice", [neuron_container("a", [0]), neuron_container("b", [0])], member_of("inf2.24xlarge")),
            task_definition(
                "requirement",
                [neuron_container("a", [0], resourceRequirements=[{"type": "NeuronDevice", "value": "1"}])],
                member_of("inf2.24xlarge"),
            ),
        ]
    )
    assert findings(result, "ecs-neuron-devices-exist", "clean") == []
    [message] = findings(result, "ecs-neuron-devices-exist", "past-the-chips")
    assert f"/dev/neuron{chips} does not exist on inf2.24xlarge" in message and f"/dev/neuron{chips - 1}" in message
    assert "/dev/neuron0 mapped more than once" in one_finding(result, "ecs-neuron-devices-exist", "twice")
    messages = findings(result, "ecs-neuron-device-managed", "requirement")
    assert any("only Managed Instances support" in m for m in messages) and any("the only value is ALL" in m for m in messages)
    assert findings(result, "ecs-neuron-device-managed", "clean") == []


def test_task_pinned(judge):
    result = judge(
        [
            task_definition("pinned", [neuron_container("a", [0])], member_of("inf2.xlarge")),
            task_definition("open", [neuron_container("a", [0])]),
            task_definition("family", [neuron_container("a", [0])], "attribute:ecs.instance-type =~ inf2.*"),
            task_definition("gpu-type", [neuron_container("a", [0])], member_of("g5.xlarge")),
        ]
    )
    assert findings(result, "ecs-neuron-task-pinned", "pinned") == []
    assert "admit no instance types" in one_finding(result, "ecs-neuron-task-pinned", "open")
    [message] = findings(result, "ecs-neuron-task-pinned", "family")
    inf2 = sorted(name for name in MotoSnapshot().instance_types() if name.startswith("inf2."))
    assert f"admit {len(inf2)} instance types ({', '.join(inf2)})" in message
    assert "g5.xlarge, which has no Neuron chip" in one_finding(result, "ecs-neuron-task-pinned", "gpu-type")


def test_ipc_lock(judge):
    result = judge(
        [
            task_definition("locked", [neuron_container("a", [0])], member_of("inf2.xlarge")),
            task_definition("unlocked", [neuron_container("a", [0], ipc_lock=False)], member_of("inf2.xlarge")),
        ]
    )
    assert findings(result, "ecs-neuron-ipc-lock", "locked") == []
    assert "container 'a' maps Neuron devices but does not add the IPC_LOCK capability" in one_finding(
        result, "ecs-neuron-ipc-lock", "unlocked"
    )


def test_region(judge):
    supported, unsupported = _provider("us-east-1"), _provider("af-south-1")
    result = judge(
        [
            supported,
            unsupported,
            _on(supported, launch_template("in-region", "inf2.xlarge", imageId=_neuron_ami("al2023"))),
            _on(unsupported, launch_template("out-of-region", "inf2.xlarge", imageId=_neuron_ami("al2023", "af-south-1"))),
            # A custom AMI that joins ECS on a Neuron type still needs the Neuron AMI's region.
            _on(unsupported, launch_template("custom-ami", "trn1.32xlarge")),
            # GPU container instances are not the Neuron rule's business.
            _on(unsupported, launch_template("gpu", "g5.xlarge")),
        ]
    )
    assert findings(result, "ecs-neuron-region", "in-region") == []
    assert "is the ECS Neuron AMI al2023: the ECS Neuron AMIs are not supported in af-south-1" in one_finding(
        result, "ecs-neuron-region", "out-of-region"
    )
    assert "trn1.32xlarge runs ECS on the Neuron AMI" in one_finding(result, "ecs-neuron-region", "custom-ami")
    assert findings(result, "ecs-neuron-region", "gpu") == []


def test_ami_supported(judge):
    ami = _neuron_ami("al2")
    result = judge(
        [
            launch_template("inf2", "inf2.xlarge", imageId=ami),
            launch_template("g5", "g5.xlarge", imageId=ami),
        ]
    )
    assert findings(result, "ecs-neuron-ami-supported", "inf2") == []
    [message] = findings(result, "ecs-neuron-ami-supported", "g5")
    assert f"{ami} is the ECS Neuron AMI al2" in message and "g5.xlarge has no Neuron chip" in message
    # The GPU AMI rule leaves a Neuron AMI to this rule rather than calling it an unknown GPU AMI.
    assert findings(result, "ecs-gpu-ami-supported") == []


def test_the_shipped_neuron_stack_is_clean():
    plan = shipped_plan("ecs-neuron")
    assert plan["policy"]["violations"] == []
    assert plan["policy"]["pack"] == "gpufleet-guard"


def test_a_task_without_neuron_devices_is_not_the_neuron_rules_business(judge):
    """A GPU task, or one without accelerators, is counted not applicable; a task that only asks for
    NeuronDevice in its requirements is judged."""
    gpu = {"name": "g", "image": "x:1", "memory": 512, "essential": True, "resourceRequirements": [{"type": "GPU", "value": "1"}]}
    asks = {
        "name": "n",
        "image": "x:1",
        "memory": 512,
        "essential": True,
        "resourceRequirements": [{"type": "NeuronDevice", "value": "ALL"}],
    }
    result = judge([task_definition("gpu", [gpu], member_of("g5.xlarge")), task_definition("asks", [asks], member_of("inf2.xlarge"))])
    assert result.not_applicable["ecs-neuron-ipc-lock"] == 1 and result.not_applicable["ecs-neuron-device-managed"] == 1
    assert findings(result, "ecs-neuron-device-managed", "asks") != []


def test_every_neuron_container_is_asked_for_ipc_lock(judge):
    plain = {"name": "sidecar", "image": "x:1", "memory": 128, "essential": False}
    assert "container 'a' maps Neuron devices" in one_finding(
        judge([task_definition("t", [plain, neuron_container("a", [0], ipc_lock=False)], member_of("inf2.xlarge"))]), "ecs-neuron-ipc-lock"
    )


def test_the_region_rule_judges_launch_templates_only(judge):
    unsupported = _provider("af-south-1")
    result = judge([unsupported, _on(unsupported, task_definition("t", [neuron_container("a", [0])], member_of("inf2.xlarge")))])
    assert findings(result, "ecs-neuron-region") == []
