"""The catalog's facts come from EC2 records (moto's snapshot) and its predicates decide the rules."""

from __future__ import annotations

import re

import pytest

from gpufleet.catalog import catalog, generate
from gpufleet.rules import ecs_amis as ami_rules, gpus as gpu_rules, neuron as neuron_rules, offerings as offering_rules
from gpufleet.catalog.catalog import UnknownInstanceType
from gpufleet.catalog.generate.sources import MotoSnapshot

CAT = catalog.load()


def test_committed_catalog_is_what_the_generator_writes_from_the_moto_snapshot():
    assert generate.render(generate.build(MotoSnapshot())) == generate.DATA_FILE.read_text()


def test_committed_ami_index_is_what_the_generator_writes_and_knows_the_recommended_amis():
    source = MotoSnapshot()
    assert generate.render_amis(generate.build_amis(source)) == generate.AMI_FILE.read_text()
    amis = catalog.ecs_amis()
    ecs = catalog.load().ecs()
    for accelerator, variants in (("gpu", ecs.gpu_ami_variants), ("neuron", ecs.neuron_ami_variants)):
        for variant, facts in variants.items():
            recommended = source.ssm_parameter("us-west-2", facts.ssm_parameter + "/image_id")
            ami = amis[recommended]
            assert (ami.accelerator, ami.variant, ami.region) == (accelerator, variant, "us-west-2")


def ec2_gpus(name: str) -> dict:
    """The raw `GpuInfo.Gpus[0]` of moto's DescribeInstanceTypes record: the expectation is read from
    EC2 data, not typed here, and not through the catalog's own parsing."""
    return MotoSnapshot().instance_types()[name]["GpuInfo"]["Gpus"][0]


@pytest.mark.parametrize("name", ["p4d.24xlarge", "g5.12xlarge", "g5.xlarge", "g4dn.12xlarge", "p5.48xlarge"])
def test_gpu_facts_come_from_ec2_records(name):
    record, it = ec2_gpus(name), CAT.get(name)
    assert (it.gpu.count, it.gpu.model, it.gpu.memory_mib, it.gpu.manufacturer) == (
        record["Count"],
        record["Name"],
        record["MemoryInfo"]["SizeInMiB"],
        record["Manufacturer"],
    )
    assert gpu_rules.whole_gpus(it) == record["Count"] > 0


def test_ec2_overrides_the_document_table():
    # The 000 document's table gives the g5.12xlarge's A10G 24 GiB; EC2 says 22,888 MiB, and EC2 wins.
    assert CAT.get("g5.12xlarge").gpu.memory_mib == ec2_gpus("g5.12xlarge")["MemoryInfo"]["SizeInMiB"] != 24 * 1024


def test_fractional_gpu_is_fractional_not_gpu_less():
    it = CAT.get("g6f.large")
    assert it.gpu is not None and it.gpu.fractional
    assert it.gpu.partition_size == 0.125
    assert gpu_rules.whole_gpus(it) is None
    assert "fractional" in gpu_rules.gpus_fit(it, 1)
    assert gpu_rules.gpus_fit(it, 0) is None
    assert "1/8 of an NVIDIA L4" in gpu_rules.describe_gpus(it)


def test_fractional_values_are_the_g6f_partitions():
    # The ECS guide's table of fractional values (curated) is exactly the G6f partition sizes EC2 reports.
    partitions = {f"{it.gpu.partition_size:g}" for it in CAT.types.values() if it.gpu is not None and it.gpu.fractional}
    assert partitions == set(CAT.ecs().gpu_sharing.fractional_values) == {"0.125", "0.25", "0.5"}


def test_non_gpu_type_has_zero_gpus():
    it = CAT.get("m5.large")
    assert gpu_rules.whole_gpus(it) == 0
    assert gpu_rules.gpus_fit(it, 1) == "1 GPU requested but m5.large has 0 (no GPU)"


@pytest.mark.parametrize("name", ["g5.xlarge", "g5.12xlarge", "p4d.24xlarge"])
def test_gpus_fit_boundary(name):
    it, fits = CAT.get(name), ec2_gpus(name)["Count"]
    assert gpu_rules.gpus_fit(it, fits) is None
    assert f"{fits + 1} GPUs requested but {name} has {fits}" in gpu_rules.gpus_fit(it, fits + 1)


def test_retired_family_is_unknown_with_the_reason():
    with pytest.raises(UnknownInstanceType) as err:
        CAT.get("p2.xlarge")
    assert "retired" in err.value.reason


def test_typo_is_unknown_with_the_nearest_real_names():
    with pytest.raises(UnknownInstanceType) as err:
        CAT.get("g5.12xlarg")
    assert "g5.12xlarge" in err.value.suggestions
    assert "python -m gpufleet.catalog.generate" in err.value.reason


def test_incomplete_neuron_record_is_unknown_not_accelerator_less():
    it = CAT.get("trn2u.48xlarge")
    assert it.neuron is None and it.incomplete
    assert gpu_rules.whole_gpus(it) is None
    assert "unknown" in gpu_rules.gpus_fit(it, 1)


def test_efa_interfaces_and_network_cards_are_both_recorded_where_they_differ():
    it = CAT.get("p6-b300.48xlarge")
    assert (it.max_efa_interfaces, it.max_network_cards) == (16, 17)
    assert it.network_cards[0].interface_types == ("interface",)


ECS = CAT.ecs()


@pytest.mark.parametrize(
    "name, variant, expected",
    [
        ("g5.12xlarge", "al2023", None),
        ("p4d.24xlarge", "al2", None),
        ("g5g.xlarge", "al2023", "no ECS GPU-optimized AMI"),
        ("m5.large", "al2023", "has no GPU"),
        # ECS schedules G6f fractions on EC2 too (the GPU value 0.125..0.5): the AMI supports the type.
        ("g6f.large", "al2023", None),
        ("g5.12xlarge", "al2099", "unknown ECS GPU AMI variant"),
    ],
)
def test_ecs_gpu_ami_support(name, variant, expected):
    reason = ami_rules.ecs_gpu_ami_support(CAT.get(name), variant, ECS)
    assert reason is None if expected is None else expected in reason


@pytest.mark.parametrize(
    "family_type, version, ok",
    [
        ("g4dn.xlarge", "2.0.20190913", True),
        ("g4dn.xlarge", "2.0.20190912", False),
        ("p5.48xlarge", "2023.0.20230929", True),
        ("p5.48xlarge", "2.0.20230928", False),
    ],
)
def test_ami_release_bounds(family_type, version, ok):
    reason = ami_rules.ecs_gpu_ami_support(CAT.get(family_type), "al2", ECS, image_version=version)
    assert (reason is None) == ok, reason


def test_offerings_by_region_and_zone():
    it = CAT.get("p4d.24xlarge")
    assert offering_rules.offered_in(it, "us-east-1") is None
    assert offering_rules.offered_in(it, "af-south-1") == "p4d.24xlarge is not offered in af-south-1"
    assert "not offered in us-east-1e" in offering_rules.offered_in(it, "us-east-1", "us-east-1e")
    zones = offering_rules.zones_offering([it, CAT.get("g5.12xlarge")], "us-east-1")
    assert zones and all(z in it.offerings["us-east-1"] for z in zones)


@pytest.mark.parametrize(
    "path, index",
    [("/dev/neuron0", 0), ("/dev/neuron12", 12), ("/dev/neuron01", None), ("/dev/neuron", None), ("/dev/nvidia0", None), (None, None)],
)
def test_neuron_device_paths_are_read_strictly(path, index):
    assert neuron_rules.neuron_device_index(path, CAT.ecs()) == index


def test_neuron_predicates_read_the_chip_count_from_ec2():
    ecs = CAT.ecs()
    [device] = MotoSnapshot().instance_types()["inf2.48xlarge"]["NeuronInfo"]["NeuronDevices"]
    it = CAT.get("inf2.48xlarge")
    last = f"/dev/neuron{device['Count'] - 1}"
    assert neuron_rules.neuron_device_exists(it, last, ecs) is None
    assert "does not exist" in neuron_rules.neuron_device_exists(it, f"/dev/neuron{device['Count']}", ecs)
    assert neuron_rules.neuron_device_paths(2, 3, ecs) == ["/dev/neuron2", "/dev/neuron3", "/dev/neuron4"]
    assert neuron_rules.neuron_capabilities(["SYS_PTRACE", "IPC_LOCK"], ecs) is None
    assert "IPC_LOCK" in neuron_rules.neuron_capabilities([], ecs)
    assert "unknown" in neuron_rules.neuron_devices_fit(CAT.get("trn2u.48xlarge"), 1)


def test_the_curated_facts_are_checked_at_load():
    """Every key of curated.yaml is one the typed facts know, of the type they say: a misspelt, missing
    or mistyped fact fails when the catalog loads, naming its path."""
    import copy

    from gpufleet.catalog import facts

    document = catalog.curated_facts()
    assert catalog.load().facts == facts.checked(document, "curated.yaml")
    assert catalog.load().facts.quotas["ecsCapacityProvidersPerCluster"].value == 20
    for mutate, path in (
        (lambda d: d["eks"].__setitem__("efaResourse", "vpc.amazonaws.com/efa"), "eks.efaResourse"),
        (lambda d: d["ecs"]["agentFlags"].pop("neuron"), "ecs.agentFlags.neuron"),
        (lambda d: d["quotas"]["ecsCapacityProvidersPerCluster"].__setitem__("value", "20"), "quotas.ecsCapacityProvidersPerCluster.value"),
        (lambda d: d["replacement"]["aws:ec2/vpc:Vpc"].pop("source"), "replacement.aws:ec2/vpc:Vpc.source"),
    ):
        broken = copy.deepcopy(document)
        mutate(broken)
        with pytest.raises(facts.CuratedFactsError, match=re.escape(f"curated.yaml: {path}:")):
            facts.checked(broken, "curated.yaml")


def test_every_shipped_yaml_file_reads_alike_in_yaml_1_1_and_1_2():
    """The catalog reads its YAML data (curated.yaml, the charts' values, the Karpenter CRDs, the GKE
    installer) with libyaml (YAML 1.1, fast); each file means what ruamel (YAML 1.2) reads: an
    unquoted `on`, `no`, `0755` or `1:30` would differ, and fail here."""
    from ruamel.yaml import YAML

    from gpufleet.catalog import cloudformation

    shipped = sorted(p for p in catalog.DATA.rglob("*") if p.suffix in (".yaml", ".yml"))
    assert {"curated.yaml", "charts/karpenter-crd-1.14.1/karpenter.sh_nodepools.yaml"} <= {str(p.relative_to(catalog.DATA)) for p in shipped}
    for path in shipped:
        relative = str(path.relative_to(catalog.DATA))
        # The Karpenter CloudFormation template's intrinsics (!Sub) are local tags, read alike by both.
        tags = cloudformation.INTRINSICS if path == cloudformation.TEMPLATE else {}
        ruamel = YAML(typ="safe", pure=True)
        for tag, make in tags.items():
            ruamel.constructor.add_constructor(tag, lambda constructor, node, make=make: make(constructor.construct_scalar(node)))
        assert catalog.shipped_yaml(relative, tags) == ruamel.load(path.read_text()), relative
    assert catalog.curated_facts() == catalog.shipped_yaml("curated.yaml")


def test_yaml_1_1_and_1_2_differ_where_the_check_above_looks():
    """What the check above would catch: the same text read otherwise by the two versions."""
    import yaml
    from ruamel.yaml import YAML

    text = "enabled: on\nmode: 0755\n"
    assert yaml.safe_load(text) != YAML(typ="safe", pure=True).load(text)


def test_a_record_that_leaves_fields_out_gets_the_safe_defaults():
    """A live DescribeInstanceTypes answer may leave optional fields out (a type newer than the
    snapshot, a partial record): what it does not say is no GPU, no Neuron chip, no EFA, one network
    card, whole GPUs, and no interfaces to count on."""
    from gpufleet.catalog.catalog import Gpu, NeuronDevices, _instance_type

    base = {"ProcessorInfo": {"SupportedArchitectures": ["x86_64"]}, "VCpuInfo": {"DefaultVCpus": 2}, "MemoryInfo": {"SizeInMiB": 4096}}
    it = _instance_type("x9.large", base, {}, None)
    assert (it.gpu, it.neuron, it.efa_supported, it.max_efa_interfaces, it.max_network_cards, it.network_cards) == (None, None, False, 0, 1, ())
    assert (it.ipv4_per_interface, it.default_card_interfaces, it.usage_classes, it.placement_strategies) == (0, 0, (), ())
    it = _instance_type("x9.large", {**base, "GpuInfo": {"Gpus": [{"Count": 2}]}, "NeuronInfo": {"NeuronDevices": [{}]}}, {}, None)
    assert it.gpu == Gpu("unknown", "unknown", 2, 0, 1.0, 2) and not it.gpu.fractional
    assert it.neuron == NeuronDevices("unknown", 0, 0, 0)
    assert _instance_type("x9.large", {**base, "GpuInfo": {"Gpus": [{}]}}, {}, None).gpu == Gpu("unknown", "unknown", 0, 0, 1.0, 0)


def test_the_default_network_cards_interfaces():
    """The VPC CNI's ENIs are those of the default card (card 0 unless the record names another);
    a record without per-card data falls back to the type's MaximumNetworkInterfaces."""
    from gpufleet.catalog.catalog import _instance_type

    base = {"ProcessorInfo": {"SupportedArchitectures": ["x86_64"]}, "VCpuInfo": {"DefaultVCpus": 2}, "MemoryInfo": {"SizeInMiB": 4096}}
    cards = [{"NetworkCardIndex": 0, "MaximumNetworkInterfaces": 6}, {"NetworkCardIndex": 1, "MaximumNetworkInterfaces": 2}]
    assert _instance_type("x9.large", {**base, "NetworkInfo": {"MaximumNetworkInterfaces": 8, "NetworkCards": cards}}, {}, None).default_card_interfaces == 6
    named = {"MaximumNetworkInterfaces": 8, "NetworkCards": cards, "DefaultNetworkCardIndex": 1}
    assert _instance_type("x9.large", {**base, "NetworkInfo": named}, {}, None).default_card_interfaces == 2
    assert _instance_type("x9.large", {**base, "NetworkInfo": {"MaximumNetworkInterfaces": 8}}, {}, None).default_card_interfaces == 8
    # A card that does not say how many interfaces it takes takes none we can count on.
    silent = _instance_type("x9.large", {**base, "NetworkInfo": {"MaximumNetworkInterfaces": 8, "NetworkCards": [{"NetworkCardIndex": 0}]}}, {}, None)
    assert silent.default_card_interfaces == 0 and silent.network_cards[0].max_interfaces == 0 and silent.network_cards[0].interface_types == ()
    for name, record in MotoSnapshot().instance_types().items():  # the snapshot's records agree
        net = record.get("NetworkInfo") or {}
        by_index = {c["NetworkCardIndex"]: c["MaximumNetworkInterfaces"] for c in net.get("NetworkCards", [])}
        assert CAT.get(name).default_card_interfaces == by_index.get(net.get("DefaultNetworkCardIndex", 0), net.get("MaximumNetworkInterfaces", 0))


@pytest.mark.parametrize(
    ("count", "partition", "fractional"),
    [(0, 0.125, True), (0, 0.5, True), (0, 1.0, False), (0, 0.0, False), (1, 0.5, False), (1, 1.0, False)],
)
def test_a_fractional_gpu_is_less_than_one_whole_gpu(count, partition, fractional):
    from gpufleet.catalog.catalog import Gpu

    assert Gpu("NVIDIA", "L4", count, 2861, partition, 1).fractional is fractional


def test_find_takes_names_only():
    assert CAT.find("g5.xlarge") is CAT.get("g5.xlarge")
    assert CAT.find("g5.nope") is None and CAT.find(None) is None and CAT.find(["g5.xlarge"]) is None


def test_a_typo_gets_at_most_three_close_names():
    with pytest.raises(UnknownInstanceType) as err:
        CAT.get("p5.48xlarg")
    # More than three real names are close to it (p5e, p5en, g5 ...): three are given, the nearest first.
    assert len(err.value.suggestions) == 3 and err.value.suggestions[0] == "p5.48xlarge"
    assert str(err.value).endswith(f"; did you mean {', '.join(err.value.suggestions)}?")
    with pytest.raises(UnknownInstanceType) as err:
        CAT.get("zzzzzzzz")
    assert err.value.suggestions == [] and "did you mean" not in str(err.value)


@pytest.mark.parametrize("name", [None, 5, ["p5.48xlarge"]])
def test_a_name_of_the_wrong_kind_is_an_unknown_type_not_a_crash(name):
    from gpufleet.catalog.catalog import UnknownInstanceType

    with pytest.raises(UnknownInstanceType, match="an instance type is a string, not"):
        catalog.load().get(name)
