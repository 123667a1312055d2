"""Types the EC2 data lacks (p6e-gb200.36xlarge in moto 5.2.5) are carried by their sourced facts only:
every value cites a source, the fields no source gives are named, and the supplement never stands
in for a record the EC2 source has."""

from __future__ import annotations

import pytest

from gpufleet.catalog import catalog, generate
from gpufleet.catalog.catalog import UnknownInstanceType, record_fields
from gpufleet.catalog.generate.sources import MotoSnapshot
from tests.catalog.test_sources import ADDRESS

GB200 = "p6e-gb200.36xlarge"
CAT = catalog.load()
SUPPLEMENT = generate.supplement()


class _Source:
    """An EC2 source of the given DescribeInstanceTypes records and no regions."""

    label = "test source"

    def __init__(self, records: dict[str, dict]):
        self.records = records

    def instance_types(self) -> dict[str, dict]:
        return self.records

    def regions(self) -> list[str]:
        return []


@pytest.mark.parametrize("name", sorted(SUPPLEMENT))
def test_every_supplemented_value_cites_a_source_a_reader_can_open(name):
    entry = SUPPLEMENT[name]
    assert set(record_fields(entry["record"])) == set(entry["sources"])
    citations = [*entry["sources"].values(), *(fact["source"] for fact in entry["facts"].values())]
    assert [c for c in citations if not ADDRESS.search(c)] == []
    assert all(reason.strip() for reason in entry["unknown"].values())
    assert not set(entry["unknown"]) & set(entry["sources"])


@pytest.mark.parametrize("name", sorted(SUPPLEMENT))
def test_what_the_predicates_read_is_either_sourced_or_named_unknown(name):
    entry = SUPPLEMENT[name]
    accounted = {*entry["sources"], *entry["unknown"]}
    needed = {"VCpuInfo.DefaultVCpus", "MemoryInfo.SizeInMiB", "ProcessorInfo.SupportedArchitectures", "offerings"}
    if "GpuInfo" in entry["record"]:
        needed |= {"GpuInfo.Gpus[0].Count", "GpuInfo.Gpus[0].Name", "GpuInfo.Gpus[0].MemoryInfo.SizeInMiB"}
    if entry["record"].get("NetworkInfo", {}).get("EfaSupported"):
        needed |= {"NetworkInfo.EfaInfo.MaximumEfaInterfaces", "NetworkInfo.NetworkCards"}
    assert needed - accounted == set()


def test_the_catalog_carries_the_sourced_facts_of_p6e_gb200():
    gb200 = CAT.partial[GB200]
    assert gb200.known == record_fields(SUPPLEMENT[GB200]["record"])
    assert (gb200.known["GpuInfo.Gpus[0].Count"], gb200.known["ProcessorInfo.SupportedArchitectures"]) == (4, ["arm64"])
    assert gb200.facts["ultraServerInstances"] == {"u-p6e-gb200x36": 9, "u-p6e-gb200x72": 18}
    assert "ml-eks-nvidia-ultraserver.adoc" in gb200.sources["GpuInfo.Gpus[0].Count"]


def test_a_supplemented_type_is_refused_as_an_instance_type_naming_what_no_source_gives():
    with pytest.raises(UnknownInstanceType) as refused:
        CAT.get(GB200)
    assert "GpuInfo.Gpus[0].MemoryInfo.SizeInMiB" in refused.value.reason
    assert "NetworkInfo.EfaInfo.MaximumEfaInterfaces" in refused.value.reason
    assert "offerings" in refused.value.reason and "ec2_supplement/SOURCE.md" in refused.value.reason
    assert refused.value.suggestions == []
    assert CAT.find(GB200) is None and GB200 not in CAT.types


def test_the_supplement_fills_in_only_types_the_source_lacks():
    other = MotoSnapshot().instance_types()["p6-b200.48xlarge"]
    without = generate.build(_Source({"p6-b200.48xlarge": other}))
    assert list(without["supplemented"]) == sorted(SUPPLEMENT)
    carried = generate.build(_Source({GB200: {**other, "InstanceType": GB200}}))
    assert carried["supplemented"] == {}
    assert carried["instanceTypes"][GB200]["GpuInfo"] == other["GpuInfo"]


def test_the_committed_catalog_supplements_no_type_moto_carries():
    assert set(CAT.partial) & set(MotoSnapshot().instance_types()) == set()
