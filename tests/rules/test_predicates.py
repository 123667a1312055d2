"""The shared predicates at their edges: the answers the spec errors and the pack's findings quote.
Types are picked from the EC2 data by what they have (a fractional GPU, one Neuron chip), not typed
with their facts."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import ecs_amis as ami_rules, gpus as gpu_rules, neuron as neuron_rules, offerings as offering_rules

CAT = catalog.load()
ECS = CAT.ecs()


def _first(test) -> str:
    return next(name for name, it in sorted(CAT.types.items()) if test(it))


FRACTIONAL = _first(lambda it: it.gpu is not None and it.gpu.fractional)
ONE_GPU = _first(lambda it: gpu_rules.whole_gpus(it) == 1)
CPU = _first(lambda it: not gpu_rules.accelerated(it) and not it.incomplete)
NEURON = _first(lambda it: it.neuron is not None and it.gpu is None)


def test_no_request_fits_anywhere_and_one_is_judged():
    """Zero GPUs or devices ask nothing, even of a fractional GPU or a CPU type; one is judged."""
    fractional, cpu = CAT.get(FRACTIONAL), CAT.get(CPU)
    assert gpu_rules.gpus_fit(fractional, 0) is None
    assert "whole-GPU requests cannot be placed on it" in gpu_rules.gpus_fit(fractional, 1)
    assert gpu_rules.gpus_fit(cpu, 1) == f"1 GPU requested but {CPU} has 0 (no GPU)"
    assert gpu_rules.gpus_fit_any([], 0) is None
    assert gpu_rules.gpus_fit_any([], 1) == "no instance type is admitted"
    assert neuron_rules.neuron_devices_fit(cpu, 0) is None
    assert neuron_rules.neuron_devices_fit(cpu, 1) == f"1 Neuron devices mapped but {CPU} has no Neuron chip"


def test_gpu_capable_asks_for_one_whole_gpu():
    assert gpu_rules.gpu_capable(CAT.get(ONE_GPU)) is None
    assert gpu_rules.gpu_capable(CAT.get(FRACTIONAL)) == gpu_rules.gpus_fit(CAT.get(FRACTIONAL), 1)
    assert gpu_rules.gpu_capable(CAT.get(CPU)) == f"{CPU} has no GPU"


@pytest.mark.parametrize(("count", "text"), [(1, "/dev/neuron0"), (2, "/dev/neuron0../dev/neuron1"), (16, "/dev/neuron0../dev/neuron15")])
def test_neuron_device_range(count, text):
    assert neuron_rules.neuron_device_range(count) == text


def test_neuron_facts_of_a_type_without_chips():
    cpu, neuron = CAT.get(CPU), CAT.get(NEURON)
    assert neuron_rules.neuron_chips(cpu) == 0
    assert neuron_rules.neuron_chips(neuron) == neuron.neuron.count
    assert neuron_rules.describe_neuron(cpu) == "no Neuron chip"
    assert neuron_rules.describe_neuron(neuron).startswith(f"{neuron.neuron.count} x AWS {neuron.neuron.model} (")


def test_accelerated_means_a_gpu_or_a_neuron_chip():
    assert gpu_rules.accelerated(CAT.get(ONE_GPU)) and gpu_rules.accelerated(CAT.get(NEURON))
    assert not gpu_rules.accelerated(CAT.get(CPU))


def test_gpu_ami_architecture_must_match_the_type():
    """Graviton GPU types are turned away by name today (no ECS GPU AMI for g5g); without that entry
    the architecture check still stops an arm64 type on an x86_64 AMI."""
    arm = _first(lambda it: it.gpu is not None and "x86_64" not in it.architectures)
    variant = next(v for v, facts in ECS.gpu_ami_variants.items() if "arm64" not in facts.architectures)
    facts = ECS.model_copy(update={"families_without_gpu_ami": {}})
    arches = "/".join(ECS.gpu_ami_variants[variant].architectures)
    assert ami_rules.ecs_gpu_ami_support(CAT.get(arm), variant, facts) == f"{arm} is arm64; the {variant} GPU AMI is {arches}"
    assert ami_rules.ecs_gpu_ami_support(CAT.get(ONE_GPU), variant, facts) is None


def test_zones_offering_every_type():
    """The zones where all the types are offered: a zone only the first type has is not one."""
    region = "us-east-1"
    wide = max((it for name, it in sorted(CAT.types.items()) if it.offerings.get(region)), key=lambda it: len(it.offerings[region]))
    narrow = next(it for it in CAT.types.values() if it.offerings.get(region) and set(it.offerings[region]) < set(wide.offerings[region]))
    expected = tuple(sorted(set(wide.offerings[region]) & set(narrow.offerings[region])))
    assert offering_rules.zones_offering([wide, narrow], region) == expected != tuple(sorted(wide.offerings[region]))
    assert offering_rules.zones_offering([], region) == ()


def test_counts_read_in_the_singular_for_one():
    from gpufleet.catalog.wording import counted

    assert [counted(n, "GPU") for n in (0, 1, 2, 1.0, 8.0)] == ["0 GPUs", "1 GPU", "2 GPUs", "1 GPU", "8 GPUs"]
    assert counted(1, "Neuron chip") == "1 Neuron chip" and counted(16, "Neuron chip") == "16 Neuron chips"


def test_gpus_fit_when_one_admitted_type_holds_them():
    """ECS places the task where its GPUs fit: one admitted type that holds them is enough (an
    `all` written as `any` here once passed the whole suite)."""
    small, large = CAT.get("g5.xlarge"), CAT.get("g5.12xlarge")
    assert gpu_rules.gpus_fit_any([small, large], 4) is None
    assert gpu_rules.gpus_fit_any([large, small], 4) is None
    assert gpu_rules.gpus_fit_any([small], 4) is not None
    assert gpu_rules.gpus_fit_any([], 1) == "no instance type is admitted"
