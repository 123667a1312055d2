"""src/gpufleet/catalog/facts.py: the curated facts are checked as they load (every entry sourced,
nothing unknown, nothing mistyped, names that refer to other entries resolved), and the helpers the
rules read them through."""

from __future__ import annotations

import copy
import re

import pytest

from gpufleet.catalog import catalog, facts

DOCUMENT = catalog.curated_facts()
FACTS = catalog.load().facts


def _refused(mutate, words: str) -> str:
    broken = copy.deepcopy(DOCUMENT)
    mutate(broken)
    with pytest.raises(facts.CuratedFactsError) as err:
        facts.checked(broken, "curated.yaml")
    assert words in str(err.value), str(err.value)
    return str(err.value)


def test_every_fact_names_its_source():
    _refused(lambda d: d["quotas"]["ecsCapacityProvidersPerCluster"].__setitem__("source", ""), "quotas.ecsCapacityProvidersPerCluster.source")
    terse = copy.deepcopy(DOCUMENT)
    terse["quotas"]["ecsCapacityProvidersPerCluster"]["source"] = "§"  # any source at all is one
    assert facts.checked(terse, "curated.yaml").quotas["ecsCapacityProvidersPerCluster"].source == "§"


def test_facts_are_strict_and_frozen():
    _refused(lambda d: d["quotas"]["ecsCapacityProvidersPerCluster"].__setitem__("adjustable", "no"), "adjustable")
    with pytest.raises(Exception, match="frozen"):
        FACTS.quotas["ecsCapacityProvidersPerCluster"].value = 21


def test_names_that_refer_to_other_entries_must_resolve():
    def attach(d):
        d["gke"]["n1Attachable"]["nvidia-imaginary"] = next(iter(d["gke"]["n1Attachable"].values()))

    _refused(attach, "accelerators named but not listed under gke.accelerators: nvidia-imaginary")
    first = next(iter(DOCUMENT["aks"]["vmSizes"]))
    _refused(lambda d: d["aks"]["vmSizes"][first].__setitem__("gpu", "imaginary-gpu"), "GPUs named but not listed under aks.gpus: imaginary-gpu")


def test_a_broken_file_names_ten_problems_at_most():
    def break_many(d):
        for entry in d["replacement"].values():
            entry.pop("source")

    assert len(DOCUMENT["replacement"]) > 10
    message = _refused(break_many, ".source:")
    assert len(message.splitlines()) == 10 and all(re.match(r"curated.yaml: replacement\.[^ ]+\.source: ", line) for line in message.splitlines())


def test_a_variant_without_the_yum_fix_does_without_it():
    variant = next(k for k, v in DOCUMENT["ecs"]["gpuAmiVariants"].items() if v.get("yumIpv4Fix") is False)

    def drop(d):
        d["ecs"]["gpuAmiVariants"][variant].pop("yumIpv4Fix")

    broken = copy.deepcopy(DOCUMENT)
    drop(broken)
    assert facts.checked(broken, "curated.yaml").ecs.gpu_ami_variants[variant].yum_ipv4_fix is False


def test_the_accelerator_taints_and_labels_of_a_kind():
    eks = FACTS.eks
    nvidia = eks.accelerator_taints.nvidia
    assert eks.accelerator_taints.of("nvidia") == nvidia.model_dump(exclude_none=True)
    assert eks.accelerator_taints.of("neuron") == eks.accelerator_taints.neuron.model_dump(exclude_none=True)
    assert eks.accelerator_taints.of(None) is None and eks.accelerator_taints.of("source") is None
    assert all(v is not None for v in eks.accelerator_taints.of("nvidia").values())  # a taint without a value has no value key
    assert eks.accelerator_labels.of("nvidia") == dict(eks.accelerator_labels.nvidia) and eks.accelerator_labels.of("nvidia")
    assert eks.accelerator_labels.of("neuron") == {}


def test_every_replacing_field_is_an_input_of_its_resource_type():
    """A ForceNew field the provider does not take (a typo, a renamed input) would never match a change."""
    import importlib
    import inspect

    for token, entry in DOCUMENT["replacement"].items():
        provider, module, kind = re.match(r"^(\w+):([\w/]+)/\w+:(\w+)$", token).groups()
        package = {"aws": "pulumi_aws", "gcp": "pulumi_gcp", "azure": "pulumi_azure"}[provider]
        resource = getattr(importlib.import_module(f"{package}.{module.replace('/', '.')}"), kind)
        snake = [p for p in inspect.signature(resource._internal_init).parameters if not p.startswith("_") and p not in ("self", "resource_name", "opts")]
        inputs = {re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), p) for p in snake}
        for field in entry["replaces"] + entry.get("rolls", []):
            assert field.split(".")[0] in inputs, f"{token}: {field} is not an input ({sorted(inputs)})"
