"""Where ECS places tasks: per instance, per service, per provider shared by services; and the spec
door refusing what ECS would never place (exit 2 naming the field)."""

from __future__ import annotations

import pytest

from gpufleet.components.catalog import catalog, ecs_scheduler as es, node_capacity
from gpufleet.components.catalog.ecs_scheduler import InstanceShape, TaskShape
from tests.conftest import run_cli

CAT = catalog.load()


def instance(**kw) -> InstanceShape:
    base = dict(provider="gpu", instance_type="g5.12xlarge", cpu=49152, memory=190000, memory_estimate=180000, gpus=4, neuron_chips=0, desired=1, max_instances=4)
    base.update(kw)
    return InstanceShape(**base)


def task(**kw) -> TaskShape:
    base = dict(family="app", cpu=1024, memory=1024, gpus=1)
    base.update(kw)
    return TaskShape(**base)


@pytest.mark.parametrize(
    "shape, expected",
    [
        (task(gpus=1), 4),
        (task(gpus=0, cpu=16384), 3),
        (task(gpus=0, memory=100000), 1),
        (task(gpus=0, host_ports=frozenset({(80, "tcp")})), 1),
        (task(gpus=0, neuron_chips=frozenset({0})), 0),  # a GPU type has no /dev/neuron0
    ],
)
def test_tasks_per_instance(shape, expected):
    assert es.per_instance(shape, instance())[0] == expected


def test_a_task_asking_more_than_registers_is_never_placed():
    placed = es.place_task(task(memory=190001), instance(), None)
    assert placed.status == es.PENDING and "190001 MiB of memory per task, g5.12xlarge registers at most 190000" in placed.reason
    assert es.place_task(task(memory=190000), instance(), None).status == es.PLACED


def test_a_service_larger_than_its_providers_maxsize_is_pending():
    assert es.place_task(task(), instance(max_instances=4), 16).status == es.PLACED
    placed = es.place_task(task(), instance(max_instances=4), 17)
    assert placed.status == es.PENDING and placed.instances_needed == 5
    assert "desiredCount 17 needs 5 instances at 4 per instance; gpu has at most 4 (maxSize)" == placed.reason
    # Without managed scaling the group stays at its desired size.
    assert es.place_task(task(), instance(max_instances=4, desired=1, managed_scaling=False), 5).status == es.PENDING


def test_distinct_instance_is_one_per_instance():
    placed = es.place_task(task(), instance(max_instances=2), 3, distinct_instance=True)
    assert placed.per_instance == 1 and placed.status == es.PENDING


def test_services_sharing_a_provider_are_judged_together():
    shape = instance(max_instances=2)  # 8 GPUs in all
    a, b = es.place_task(task(family="a", gpus=2), shape, 2), es.place_task(task(family="b", gpus=2), shape, 2)
    assert es.shared_capacity([a, b], {"gpu": shape}) == []
    c = es.place_task(task(family="c", gpus=1), shape, 1)
    [(where, why)] = es.shared_capacity([a, b, c], {"gpu": shape})
    assert where is c and "reserve 9 GPUs in all (a 2 x 2, b 2 x 2, c 1 x 1); 2 instances register 8" in why


def test_a_provider_of_thousands_of_services_names_ten():
    shape = instance(max_instances=2)  # 8 GPUs in all
    services = [es.place_task(task(family=f"s{i}", gpus=1), shape, 1) for i in range(2000)]
    [why] = [why for _, why in es.shared_capacity(services, {"gpu": shape}) if " GPUs in all" in why]
    assert "reserve 2000 GPUs in all (s0 1 x 1, s1 1 x 1, " in why and "s9 1 x 1 and 1990 more); 2 instances register 8" in why
    assert "s10 " not in why


def test_tight_memory_is_a_note():
    placed = es.place_task(task(gpus=0, memory=185000), instance(), None)
    assert placed.status == es.PLACED and "memory is tight" in placed.notes[0]


def _errors(path) -> str:
    code, out, err = run_cli("preview", "--config-file", str(path))
    assert code == 2 and out == "" and "Traceback" not in err, (code, err)
    return err


def test_the_spec_refuses_a_task_asking_for_all_installed_memory(stack_variant):
    installed = CAT.get("g5.12xlarge").memory_mib
    at_most, _ = node_capacity.os_memory_mib(CAT.get("g5.12xlarge"), CAT.facts.memory_overhead)

    def edit(c):
        c["gpufleet:ecs"]["workloads"][0]["containers"][0]["memory"] = installed

    err = _errors(stack_variant(edit))
    assert f"gpufleet:ecs.workloads[0].containers[0].memory = {installed}" in err
    assert f"{installed} MiB of memory per task, g5.12xlarge registers at most {at_most}" in err
    assert "[rule: ecs-memory-fits-instance]" in err


def test_the_spec_refuses_a_service_its_provider_cannot_hold(stack_variant):
    def edit(c):
        c["gpufleet:ecs"]["workloads"][0]["service"]["desiredCount"] = 17  # 1 GPU each, 4 x g5.12xlarge = 16

    err = _errors(stack_variant(edit))
    assert "gpufleet:ecs.workloads[0].service.desiredCount = 17" in err
    assert "needs 5 instances at 4 per instance; inference has at most 4 (maxSize) [rule: ecs-tasks-placeable]" in err


def test_the_line_of_the_field_is_named(stack_variant):
    path = stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][0]["service"].__setitem__("desiredCount", 17))
    line = 1 + next(i for i, text in enumerate(path.read_text().splitlines()) if "desiredCount: 17" in text)
    assert f"{path}:{line}:" in _errors(path)
