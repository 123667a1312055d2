"""Bad Neuron input: exit 2 naming the field, the value and the rule, before any resource exists."""

from __future__ import annotations

import json

from gpufleet.catalog.generate.sources import MotoSnapshot
from tests.conftest import run_cli
from tests.ecs.test_spec_errors import _errors


def _inf2_48(c):
    """The inference provider on inf2.48xlarge, whose chip count the tests read from EC2 data."""
    c["gpufleet:ecs"]["capacityProviders"][0]["instanceType"] = "inf2.48xlarge"


def _chips(instance_type: str) -> int:
    return MotoSnapshot().instance_types()[instance_type]["NeuronInfo"]["NeuronDevices"][0]["Count"]


def test_one_device_more_than_the_chips_is_rejected(stack_variant):
    chips = _chips("inf2.48xlarge")

    def edit(c):
        _inf2_48(c)
        c["gpufleet:ecs"]["workloads"][1]["containers"][0]["neuronDevices"] = chips + 1

    err = _errors(stack_variant(edit, "ecs-neuron"))
    assert f"gpufleet:ecs.workloads[1].containers[0].neuronDevices = {chips + 1}" in err
    assert f"{chips + 1} Neuron devices mapped but inf2.48xlarge has {chips}" in err
    assert f"/dev/neuron0../dev/neuron{chips - 1}" in err and "[rule: ecs-neuron-devices-exist]" in err


def test_every_chip_fits(stack_variant):
    chips = _chips("inf2.48xlarge")

    def edit(c):
        _inf2_48(c)
        c["gpufleet:ecs"]["workloads"][1]["containers"][0]["neuronDevices"] = chips

    code, out, err = run_cli("preview", "--config-file", str(stack_variant(edit, "ecs-neuron")), "--json")
    assert code == 0, err
    # /dev/neuron0 .. /dev/neuron{chips - 1}: every chip, one such task per instance
    row = next(w for w in json.loads(out)["summary"]["workloads"] if w["name"] == "embed-batch")
    assert (row["neuronDevicesPerTask"], row["tasksPerInstance"]) == (chips, 1)


def test_trn1_in_a_region_without_the_neuron_ami(stack_variant):
    # ap-southeast-4 offers trn1.32xlarge (EC2 data) but is not among the 001 document's Neuron AMI regions.
    [zone, *_] = [row["Location"] for row in MotoSnapshot().az_offerings("ap-southeast-4") if row["InstanceType"] == "trn1.32xlarge"]

    def edit(c):
        c["gpufleet:region"] = "ap-southeast-4"
        c["gpufleet:ecs"]["capacityProviders"].pop(0)  # inf2 is not offered there either
        c["gpufleet:ecs"]["workloads"] = [c["gpufleet:ecs"]["workloads"][2]]
        c["gpufleet:ecs"]["network"]["create"]["zones"] = [zone]

    err = _errors(stack_variant(edit, "ecs-neuron"))
    assert "gpufleet:ecs.capacityProviders[0].instanceType = 'trn1.32xlarge'" in err
    assert "the ECS Neuron AMIs are not supported in ap-southeast-4" in err and "[rule: ecs-neuron-region]" in err
    assert "1 problem" in err  # offered there: the region of the AMI is the only problem


def test_gpu_only_ami_variant_on_a_neuron_type(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["capacityProviders"][1].__setitem__("amiVariant", "al2-kernel-5.10"), "ecs-neuron"))
    assert "gpufleet:ecs.capacityProviders[1].amiVariant = 'al2-kernel-5.10'" in err
    assert "unknown ECS Neuron AMI variant 'al2-kernel-5.10' (known: al2023, al2) [rule: ecs-neuron-ami-supported]" in err


def test_a_task_per_chip_maps_exactly_one_chip(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][0]["containers"][0].__setitem__("neuronDevices", 2), "ecs-neuron"))
    assert "gpufleet:ecs.workloads[0].service.perChip = true" in err and "[rule: ecs-neuron-per-chip]" in err


def test_service_needs_a_size(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][0]["service"].__setitem__("desiredCount", 3), "ecs-neuron"))
    assert "give either desiredCount or perChip: true" in err


def test_neuron_devices_on_a_gpu_type(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][0]["containers"][0].__setitem__("neuronDevices", 1)))
    assert "gpufleet:ecs.workloads[0].containers[0].neuronDevices = 1" in err
    assert "g5.12xlarge has no Neuron chip [rule: ecs-neuron-devices-exist]" in err


def test_a_neuron_workload_that_maps_no_chip(stack_variant):
    def edit(c):
        containers = c["gpufleet:ecs"]["workloads"][2]["containers"]
        containers.append({"name": "logs", "image": "public.ecr.aws/example/fluent-bit:3", "memory": 512})

    err = _errors(stack_variant(edit, "ecs-neuron"))
    assert "gpufleet:ecs.workloads[2].containers[0].neuronDevices = null" in err and "[rule: ecs-neuron-devices-mapped]" in err


def test_per_chip_names_may_not_take_another_workloads_name(stack_variant):
    err = _errors(stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][1].__setitem__("name", "llm-serve-chip3"), "ecs-neuron"))
    assert "gpufleet:ecs.workloads[0].name = 'llm-serve'" in err and "workload llm-serve-chip3 [rule: names-unique]" in err


def test_a_neuron_workload_that_maps_no_chip_points_at_its_first_container(stack_variant):
    def edit(c):
        embed = c["gpufleet:ecs"]["workloads"][1]
        embed["containers"][0]["neuronDevices"] = 0
        sidecar = {k: v for k, v in embed["containers"][0].items() if k != "neuronDevices"}
        embed["containers"].append({**sidecar, "name": "sidecar"})  # two containers: unset maps no chip

    err = _errors(stack_variant(edit, "ecs-neuron"))
    assert "gpufleet:ecs.workloads[1].containers[0].neuronDevices = 0: the workload runs on inf2.24xlarge" in err
    assert "maps no Neuron chip; set neuronDevices on the container that runs the model [rule: ecs-neuron-devices-mapped]" in err


def test_a_task_per_chip_holds_its_instances_against_the_providers_other_services(stack_variant):
    """llm-serve runs a task on every chip of the inference provider's desiredSize instances; a
    service of embed-batch (every chip of an instance) fits only on the instances left up to maxSize."""

    def edit(c, desired):
        c["gpufleet:ecs"]["workloads"][1]["service"] = {"desiredCount": desired}

    providers = {cp["name"]: cp for cp in _stack_providers()}
    free = providers["inference"]["maxSize"] - providers["inference"]["desiredSize"]
    code, _, err = run_cli("preview", "--config-file", str(stack_variant(lambda c: edit(c, free), "ecs-neuron")), "--json")
    assert code == 0, err
    err = _errors(stack_variant(lambda c: edit(c, free + 1), "ecs-neuron"))
    inference = providers["inference"]
    last = _chips("inf2.24xlarge") - 1
    assert (
        f"gpufleet:ecs.workloads[1].service = {free + 1}: {inference['desiredSize'] + free + 1} tasks on inference map "
        f"/dev/neuron{last}; {inference['maxSize']} instances have one each [rule: ecs-tasks-placeable]"
    ) in err


def _stack_providers() -> list[dict]:
    from ruamel.yaml import YAML

    from tests.conftest import ROOT

    return YAML(typ="safe").load((ROOT / "stacks" / "Pulumi.ecs-neuron.yaml").read_text())["config"]["gpufleet:ecs"]["capacityProviders"]


def test_per_chip_names_are_judged_when_the_task_per_chip_comes_last(stack_variant):
    def edit(c):
        workloads = c["gpufleet:ecs"]["workloads"]
        serve = workloads.pop(0)  # the task per chip after the others: each workload is judged
        workloads[0]["name"] = "llm-serve-chip3"
        workloads.append(serve)

    err = _errors(stack_variant(edit, "ecs-neuron"))
    assert (
        "gpufleet:ecs.workloads[2].name = 'llm-serve': a task per chip names its task definitions and services "
        "llm-serve-chip0.., which takes the name of workload llm-serve-chip3 [rule: names-unique]"
    ) in err
