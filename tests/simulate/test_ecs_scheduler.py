"""Where ECS places tasks: per instance, per service, per provider shared by services; and the spec
door refusing what ECS would never place (exit 2 naming the field)."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.simulate import ecs_scheduler as es, node_capacity
from gpufleet.simulate.ecs_scheduler import InstanceShape, TaskShape
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
    # The service that waits is one that asks for the resource, not the last on the provider.
    cpu_only = es.place_task(task(family="d", gpus=0), shape, 1)
    [(where, why)] = es.shared_capacity([a, b, c, cpu_only], {"gpu": shape})
    assert where is c and " GPUs in all" in why


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


def test_the_spec_refuses_a_service_of_one_task_per_instance_past_max_size(stack_variant):
    from gpufleet.catalog import catalog

    gpus = catalog.load().get("p4d.24xlarge").gpu.count

    def edit(c):
        train = c["gpufleet:ecs"]["workloads"][2]
        assert train["name"] == "train" and train["containers"][0]["gpus"] == gpus  # every GPU: one task per instance
        train["service"] = {"desiredCount": 3}  # training's maxSize is 2

    err = _errors(stack_variant(edit))
    assert "gpufleet:ecs.workloads[2].service.desiredCount = 3" in err
    assert "needs 3 instances at 1 per instance; training has at most 2 (maxSize) [rule: ecs-tasks-placeable]" in err


def test_the_line_of_the_field_is_named(stack_variant):
    path = stack_variant(lambda c: c["gpufleet:ecs"]["workloads"][0]["service"].__setitem__("desiredCount", 17))
    line = 1 + next(i for i, text in enumerate(path.read_text().splitlines()) if "desiredCount: 17" in text)
    assert f"{path}:{line}:" in _errors(path)


# --- GPU sharing and Neuron chips at the scheduler's bounds ----------------------------------------

def test_task_gpus_reads_whole_gpus_mps_memory_and_a_fraction():
    from gpufleet.rules.ecs_gpu_sharing import GpuRequest

    whole = es.task_gpus(task(gpus=0), [GpuRequest(0, "a", "2", None), GpuRequest(1, "b", "1", None)])
    assert (whole.gpus, whole.mps_memory, whole.gpu_fraction) == (3, 0, 0.0)
    shares = [GpuRequest(0, "a", None, {"nvidiaMps": {"memory": 4096}}), GpuRequest(1, "b", None, {"nvidiaMps": {"memory": 2048}})]
    mps = es.task_gpus(task(gpus=0), shares)
    assert (mps.gpus, mps.mps_memory, mps.gpu_fraction) == (0, 6144, 0.0)
    fraction = es.task_gpus(task(gpus=0), [GpuRequest(0, "a", "0.25", None)])
    assert (fraction.gpus, fraction.mps_memory, fraction.gpu_fraction) == (0, 0, 0.25)


def test_instance_gpus_from_the_type():
    whole, fractional = CAT.get("g5.12xlarge"), CAT.get("g6f.large")
    assert es.instance_gpus(whole) == {"gpu_memory": whole.gpu.memory_mib}
    assert es.instance_gpus(fractional) == {"gpu_partition": fractional.gpu.partition_size, "gpu_slices": fractional.gpu.logical_count}
    assert es.instance_gpus(CAT.get("m5.large")) == {}
    incomplete = next(it for it in CAT.types.values() if it.incomplete)
    assert es.instance_gpus(incomplete) == {}


@pytest.mark.parametrize(
    ("mps_memory", "gpus", "expected"),
    [(8000, 4, 8), (22888, 4, 4), (22889, 4, 0), (8000, 1, 2), (8000, 0, 0)],
)
def test_mps_shares_fill_each_gpus_memory(mps_memory, gpus, expected):
    """Shares are placed by GPU memory, per GPU (a task's shares sit on one GPU)."""
    count, reasons = es.per_instance(task(gpus=0, mps_memory=mps_memory), instance(gpus=gpus, gpu_memory=22888))
    assert count == expected
    if expected == 0:
        has = "22888 MiB per GPU" if gpus else "no whole GPU to share"
        assert reasons == {"gpus": f"{mps_memory} MiB of one GPU's memory per task (MPS), g5.12xlarge has {has}"}
    else:
        assert reasons == {}


def test_a_fraction_takes_a_slice_of_its_own_size_only():
    g6f = dict(instance_type="g6f.large", gpus=0, gpu_partition=0.125, gpu_slices=1)
    assert es.per_instance(task(gpus=0, gpu_fraction=0.125), instance(**g6f)) == (1, {})
    assert es.per_instance(task(gpus=0, gpu_fraction=0.125), instance(**{**g6f, "gpu_slices": 2}))[0] == 2
    assert es.per_instance(task(gpus=0, gpu_fraction=0.25), instance(**g6f)) == (0, {"gpus": "0.25 of a GPU per task, g6f.large provides 0.125 of a GPU"})
    assert es.per_instance(task(gpus=0, gpu_fraction=0.25), instance()) == (0, {"gpus": "0.25 of a GPU per task, g5.12xlarge provides whole GPUs only"})


def test_neuron_chips_a_task_maps():
    trn = dict(instance_type="trn1.32xlarge", gpus=0, neuron_chips=16)
    assert es.per_instance(task(gpus=0, neuron_chips=frozenset({0, 15})), instance(**trn)) == (1, {})
    assert es.per_instance(task(gpus=0, neuron_chips=frozenset({17, 16})), instance(**trn)) == (0, {"neuron": "maps /dev/neuron16, trn1.32xlarge has 16 chips"})


def test_a_task_that_reserves_nothing_is_not_limited():
    assert es.per_instance(task(cpu=0, memory=0, gpus=0), instance()) == (es.UNBOUNDED, {})
    assert es.place_task(task(cpu=0, memory=0, gpus=0), instance(max_instances=1), 2**31 - 1).status == es.PLACED


def test_a_resource_asked_exactly_as_registered_fits():
    assert es.per_instance(task(gpus=4), instance()) == (1, {})
    assert es.per_instance(task(gpus=5), instance()) == (0, {"gpus": "5 GPUs per task, g5.12xlarge registers 4"})


def test_tight_memory_note_only_when_fewer_fit_the_estimate():
    assert es.place_task(task(gpus=0, memory=90000), instance(memory=190000, memory_estimate=180000), None).notes == []
    [note] = es.place_task(task(gpus=0, memory=95000), instance(memory=190000, memory_estimate=180000), None).notes
    assert note == "memory is tight: 2 per instance fit the most g5.12xlarge may register (190000 MiB), 1 with the estimated OS share (180000 MiB)"


def test_instances_needed():
    assert es.place_task(task(), instance(), None).instances_needed == 1  # a task alone
    assert es.place_task(task(), instance(), 0).instances_needed == 0
    assert es.place_task(task(), instance(), 5).instances_needed == 2  # 4 per instance, rounded up
    assert es.place_task(task(), instance(), 8).instances_needed == 2


def _service(family: str, desired: int, **kw) -> es.TaskPlacement:
    return es.TaskPlacement(task(family=family, **kw), "gpu", es.PLACED, per_instance=1, desired=desired)


def test_shared_capacity_needs_two_services_and_a_sized_provider():
    alone = [_service("a", 17)]
    assert es.shared_capacity(alone, {"gpu": instance()}) == []
    two = [_service("a", 9), _service("b", 8)]
    [(p, why)] = es.shared_capacity(two, {"gpu": instance()})
    assert p.task.family == "b" and why == "the services on gpu reserve 17 GPUs in all (a 9 x 1, b 8 x 1); 4 instances register 16"
    assert es.shared_capacity([_service("a", 8), _service("b", 8)], {"gpu": instance()}) == []  # exactly full
    assert es.shared_capacity(two, {}) == []  # Managed Instances: no size
    # A provider without a size does not stop the judging of the next one.
    other = [es.TaskPlacement(task(family=f), "other", es.PLACED, per_instance=1, desired=9) for f in ("c", "d")]
    assert len(es.shared_capacity([*other, *two], {"gpu": instance()})) == 1
    solo = es.TaskPlacement(task(family="solo"), "other", es.PLACED, per_instance=1, desired=3)
    assert len(es.shared_capacity([solo, *two], {"other": instance(), "gpu": instance()})) == 1  # one service alone is not judged


def test_shared_capacity_of_neuron_chips():
    trn = instance(instance_type="trn1.32xlarge", gpus=0, neuron_chips=16, max_instances=2)
    services = [_service(f, 1, gpus=0, neuron_chips=frozenset({0, 1})) for f in ("a", "b", "c")]
    # The finding is the last service's: the one whose addition overfilled the provider.
    assert es.shared_capacity(services, {"gpu": trn}) == [
        (services[2], "3 tasks on gpu map /dev/neuron0; 2 instances have one each"),
        (services[2], "3 tasks on gpu map /dev/neuron1; 2 instances have one each"),
    ]
    fits = [_service("a", 1, gpus=0, neuron_chips=frozenset({0})), _service("b", 1, gpus=0, neuron_chips=frozenset({0}))]
    assert es.shared_capacity(fits, {"gpu": trn}) == []
    one = instance(instance_type="trn1.32xlarge", gpus=0, neuron_chips=16, max_instances=1)
    assert es.shared_capacity(fits, {"gpu": one}) == [(fits[1], "2 tasks on gpu map /dev/neuron0; 1 instance has one")]


def test_shared_capacity_of_gpu_memory_and_slices():
    mps = [_service("a", 4, gpus=0, mps_memory=20000), _service("b", 1, gpus=0, mps_memory=20000)]
    inst = instance(gpus=1, gpu_memory=22888, max_instances=4)
    [(_, why)] = es.shared_capacity(mps, {"gpu": inst})
    assert why == "the services on gpu reserve 100000 MiB of GPU memory in all (a 4 x 20000, b 1 x 20000); 4 instances register 91552"
    mixed = [_service("whole", 3, gpus=1), _service("share", 2, gpus=0, mps_memory=20000)]
    [(_, why)] = es.shared_capacity(mixed, {"gpu": inst})
    assert why.startswith("the services on gpu reserve 108664 MiB of GPU memory in all (whole 3 x 22888, share 2 x 20000)")
    g6f = instance(instance_type="g6f.large", gpus=0, gpu_partition=0.125, gpu_slices=1, max_instances=2)
    slices = [_service("a", 2, gpus=0, gpu_fraction=0.125), _service("b", 1, gpus=0, gpu_fraction=0.125)]
    [(_, why)] = es.shared_capacity(slices, {"gpu": g6f})
    assert why == "the services on gpu reserve 3 fractional GPU slices in all (a 2 x 1, b 1 x 1); 2 instances register 2"


def test_a_shared_capacity_finding_names_ten_services_and_counts_the_rest():
    services = [_service(f"s{i}", 1) for i in range(11)]
    [(_, why)] = es.shared_capacity(services, {"gpu": instance(max_instances=2)})
    assert "s9 1 x 1 and 1 more);" in why and "s10" not in why
    services = [_service(f"s{i}", 1) for i in range(10)]
    [(_, why)] = es.shared_capacity(services, {"gpu": instance(max_instances=2)})
    assert "more" not in why and "s9 1 x 1);" in why


def test_only_fraction_tasks_take_slices():
    g6f = instance(instance_type="g6f.large", gpus=0, gpu_partition=0.125, gpu_slices=2, max_instances=1)
    services = [_service("whole", 1, gpus=0), _service("slice", 2, gpus=0, gpu_fraction=0.125)]
    assert es.shared_capacity(services, {"gpu": g6f}) == []  # 2 slices asked, 2 registered
    over = [_service("whole", 1, gpus=0), _service("slice", 3, gpus=0, gpu_fraction=0.125)]
    [(_, why)] = es.shared_capacity(over, {"gpu": g6f})
    assert why == "the services on gpu reserve 3 fractional GPU slices in all (slice 3 x 1); 1 instance registers 2"


@pytest.mark.parametrize("resource, shape_of", [("CPU units", dict(cpu=30000, gpus=0)), ("MiB of memory", dict(memory=100000, cpu=1024, gpus=0))])
def test_services_sharing_a_provider_are_judged_on_cpu_and_memory_too(resource, shape_of):
    shape = instance(max_instances=1, desired=1)
    a, b = (es.place_task(task(family=f, **shape_of), shape, 1) for f in "ab")
    [(where, why)] = es.shared_capacity([a, b], {"gpu": shape})
    assert where is b and f" {resource} in all" in why
