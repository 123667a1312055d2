"""The catalog: typed views over the generated EC2 data and the curated facts file.

Loading is the only I/O of the catalog room (its generate/ sub-room aside); the rules over what is
loaded here are src/gpufleet/rules/. The spec validators and the policy pack both read this one catalog.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML

from gpufleet.catalog.facts import CuratedFacts, EcsAmiVariant, EcsFacts, checked, trusted
from gpufleet.errors import InputError

DATA = Path(__file__).parent / "data"
REGENERATE = "python -m gpufleet.catalog.generate"


@dataclass(frozen=True)
class Gpu:
    """The GPUs of an instance type (`GpuInfo.Gpus[0]` of DescribeInstanceTypes)."""

    manufacturer: str
    model: str
    count: int  # whole GPUs; 0 on fractional types
    memory_mib: int  # per GPU, or per partition on fractional types
    partition_size: float  # 1.0 for whole GPUs, e.g. 0.125 for an eighth of one
    logical_count: int

    @property
    def fractional(self) -> bool:
        return self.count == 0 and 0 < self.partition_size < 1


@dataclass(frozen=True)
class NeuronDevices:
    """The Neuron chips of an instance type (`NeuronInfo.NeuronDevices[0]`)."""

    model: str
    count: int
    cores_per_device: int
    memory_mib: int


@dataclass(frozen=True)
class NetworkCard:
    index: int
    max_interfaces: int
    interface_types: tuple[str, ...]


@dataclass(frozen=True)
class InstanceType:
    """What gpufleet knows of one EC2 instance type."""

    name: str
    architectures: tuple[str, ...]
    vcpus: int
    memory_mib: int
    gpu: Gpu | None
    neuron: NeuronDevices | None
    efa_supported: bool
    max_efa_interfaces: int
    max_network_cards: int
    network_cards: tuple[NetworkCard, ...]
    ipv4_per_interface: int  # NetworkInfo.Ipv4AddressesPerInterface (0 when the record lacks it)
    network_performance: str  # NetworkInfo.NetworkPerformance as EC2 words it ("3200 Gigabit", "4x 100 Gigabit")
    default_card_interfaces: int  # MaximumNetworkInterfaces of the default network card (the VPC CNI's ENIs)
    usage_classes: tuple[str, ...]
    placement_strategies: tuple[str, ...]
    offerings: dict[str, tuple[str, ...]] = field(hash=False, compare=False)
    incomplete: str | None = None  # why the accelerator facts are unknown, when they are
    # What Karpenter labels a type with from its record (instancetype/types.go @bde00654 L216-L218, L257-L264, L296-L308):
    # the hypervisor ("" on bare metal, which names none), the CPU's manufacturer and sustained
    # clock, the EBS-optimized bandwidth (where EBS optimization is the default), the NVMe instance
    # store's size and whether the network encrypts in transit.
    hypervisor: str = ""
    cpu_manufacturer: str | None = None
    sustained_clock_ghz: float = 0.0
    ebs_bandwidth_mbps: int | None = None
    local_nvme_gb: int | None = None
    encryption_in_transit: bool = False

    @property
    def family(self) -> str:
        return family_of(self.name)


def family_of(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


@dataclass(frozen=True)
class PartialType:
    """A type the EC2 data lacks, known only by what public sources state (data/ec2_supplement/SOURCE.md).

    It is never an InstanceType: the fields no source gives (GPU memory, EFA interfaces, network
    cards, zones) would read as zero or absent, and the rules would answer "no" where the truth is
    "unknown". Asking the catalog for it is refused with those fields named.
    """

    name: str
    known: dict[str, object] = field(hash=False, compare=False)  # DescribeInstanceTypes field path -> value
    sources: dict[str, str] = field(hash=False, compare=False)  # the same paths -> citation
    unknown: dict[str, str] = field(hash=False, compare=False)  # field a predicate needs -> why no value is given
    facts: dict[str, object] = field(hash=False, compare=False)  # what EC2 records do not hold (UltraServer sizes, ...)

    def refusal(self, source: str) -> str:
        """Why the catalog cannot answer for the type as an instance type: the fields it lacks."""
        return (
            f"not in the EC2 data of the catalog ({source}); public sources give some of its facts but not "
            f"{', '.join(sorted(self.unknown))} (catalog/data/ec2_supplement/SOURCE.md); run `{REGENERATE}` once the EC2 data carries it"
        )


def record_fields(value: object, path: str = "") -> dict[str, object]:
    """A DescribeInstanceTypes record flattened to its leaves, keyed as `GpuInfo.Gpus[0].Count`
    (a list of objects is indexed; a list of strings is one leaf)."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in record_fields(item, f"{path}.{key}" if path else key).items()}
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        return {k: v for i, item in enumerate(value) for k, v in record_fields(item, f"{path}[{i}]").items()}
    return {path: value}


def _partial(name: str, entry: dict) -> PartialType:
    return PartialType(
        name=name,
        known=record_fields(entry["record"]),
        sources=dict(entry["sources"]),
        unknown=dict(entry["unknown"]),
        facts={key: fact["value"] for key, fact in entry["facts"].items()},
    )


class UnknownInstanceType(InputError, LookupError):
    """An instance type the catalog has no record of."""

    def __init__(self, name: str, reason: str, suggestions: list[str]):
        self.name = name
        self.reason = reason
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown instance type {name!r}: {reason}{hint}")


def _first(record: dict, info: str, devices: str) -> dict | None:
    """The first device an EC2 record lists under `info` (None: none): the catalog reads one model of
    an accelerator per type."""
    return next(iter((record.get(info) or {}).get(devices) or []), None)


def _gpu(record: dict) -> Gpu | None:
    if (g := _first(record, "GpuInfo", "Gpus")) is None:
        return None
    return Gpu(
        manufacturer=g.get("Manufacturer", "unknown"),
        model=g.get("Name", "unknown"),
        count=int(g.get("Count", 0)),
        memory_mib=int((g.get("MemoryInfo") or {}).get("SizeInMiB", 0)),
        partition_size=float(g.get("GpuPartitionSize", 1.0)),
        logical_count=int(g.get("LogicalGpuCount", g.get("Count", 0))),
    )


def _neuron(record: dict) -> NeuronDevices | None:
    if (d := _first(record, "NeuronInfo", "NeuronDevices")) is None:
        return None
    return NeuronDevices(
        model=d.get("Name", "unknown"),
        count=int(d.get("Count", 0)),
        cores_per_device=int((d.get("CoreInfo") or {}).get("Count", 0)),
        memory_mib=int((d.get("MemoryInfo") or {}).get("SizeInMiB", 0)),
    )


def _default_card_interfaces(net: dict) -> int:
    default = int(net.get("DefaultNetworkCardIndex", 0))
    for card in net.get("NetworkCards", []):
        if int(card["NetworkCardIndex"]) == default:
            return int(card.get("MaximumNetworkInterfaces", 0))
    return int(net.get("MaximumNetworkInterfaces", 0))


def _instance_type(name: str, record: dict, offerings: dict, incomplete: str | None) -> InstanceType:
    net = record.get("NetworkInfo") or {}
    return InstanceType(
        name=name,
        architectures=tuple(record["ProcessorInfo"]["SupportedArchitectures"]),
        vcpus=int(record["VCpuInfo"]["DefaultVCpus"]),
        memory_mib=int(record["MemoryInfo"]["SizeInMiB"]),
        gpu=_gpu(record),
        neuron=_neuron(record),
        efa_supported=bool(net.get("EfaSupported")),
        max_efa_interfaces=int((net.get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0)),
        max_network_cards=int(net.get("MaximumNetworkCards", 1)),
        network_cards=tuple(
            NetworkCard(int(c["NetworkCardIndex"]), int(c.get("MaximumNetworkInterfaces", 0)), tuple(c.get("InterfaceTypes", ())))
            for c in net.get("NetworkCards", [])
        ),
        ipv4_per_interface=int(net.get("Ipv4AddressesPerInterface", 0)),
        network_performance=str(net.get("NetworkPerformance", "")),
        default_card_interfaces=_default_card_interfaces(net),
        usage_classes=tuple(record.get("SupportedUsageClasses", ())),
        placement_strategies=tuple((record.get("PlacementGroupInfo") or {}).get("SupportedStrategies", ())),
        offerings=offerings,
        incomplete=incomplete,
        hypervisor=str(record.get("Hypervisor", "")),
        cpu_manufacturer=record["ProcessorInfo"].get("Manufacturer"),
        sustained_clock_ghz=float(record["ProcessorInfo"].get("SustainedClockSpeedInGhz") or 0.0),
        ebs_bandwidth_mbps=_ebs_bandwidth(record.get("EbsInfo") or {}),
        local_nvme_gb=_local_nvme(record.get("InstanceStorageInfo") or {}),
        encryption_in_transit=bool(net.get("EncryptionInTransitSupported")),
    )


def _ebs_bandwidth(ebs: dict) -> int | None:
    """The maximum EBS bandwidth, where EBS optimization is the default (types.go @bde00654 L306-L309)."""
    if ebs.get("EbsOptimizedSupport") != "default" or "EbsOptimizedInfo" not in ebs:
        return None
    return int(ebs["EbsOptimizedInfo"]["MaximumBandwidthInMbps"])


def _local_nvme(storage: dict) -> int | None:
    """The instance store's size where it is NVMe (types.go @bde00654 L257-L259)."""
    if not storage or storage.get("NvmeSupport") == "unsupported" or storage.get("TotalSizeInGB") is None:
        return None
    return int(storage["TotalSizeInGB"])


@dataclass(frozen=True)
class Catalog:
    """Instance types from EC2 data plus the curated facts, loaded once."""

    types: dict[str, InstanceType]
    regions: tuple[str, ...]
    # The curated facts, typed and checked at load (facts.py): a misspelt or missing key fails there.
    facts: CuratedFacts
    source: str
    # Types the EC2 data lacks that public sources give some facts of; never among `types`.
    partial: dict[str, PartialType] = field(default_factory=dict)

    def get(self, name: str) -> InstanceType:
        """The instance type, or UnknownInstanceType with the reason and the nearest real names."""
        found = self.types.get(name) if isinstance(name, str) else None
        if found is not None:
            return found
        if not isinstance(name, str):
            # A plan's field of the wrong kind (null, a number) names no type: refused like a misspelt one.
            raise UnknownInstanceType(str(name)[:40], f"an instance type is a string, not {type(name).__name__}", [])
        partial = self.partial.get(name)
        if partial is not None:
            # The name is right: a nearest-name hint would only mislead.
            raise UnknownInstanceType(name, partial.refusal(self.source), [])
        retired = self.facts.retired_families.get(family_of(name))
        if retired:
            reason = f"{retired.reason} ({retired.source})"
        else:
            reason = f"not in the EC2 data of the catalog ({self.source}); if it is new, run `{REGENERATE}`"
        raise UnknownInstanceType(name, reason, difflib.get_close_matches(name, self.types, n=3, cutoff=0.6))

    def find(self, name: object) -> InstanceType | None:
        """The record of a type named in some input; None when the name is absent or unknown."""
        return self.types.get(name) if isinstance(name, str) else None

    def ecs(self) -> EcsFacts:
        return self.facts.ecs

    def ecs_ami_variants(self, it: InstanceType) -> tuple[str, dict[str, EcsAmiVariant]]:
        """The ECS-optimized AMI family of the type's accelerator and its variants: ("neuron", ...)
        for Inferentia and Trainium, else ("gpu", ...)."""
        if it.neuron is not None:
            return "neuron", self.facts.ecs.neuron_ami_variants
        return "gpu", self.facts.ecs.gpu_ami_variants


@dataclass(frozen=True)
class EcsAmi:
    """An AMI id published under an ECS GPU or Neuron AMI variant's SSM path."""

    ami_id: str
    accelerator: str  # gpu | neuron
    variant: str
    image_version: str
    region: str
    agent_version: str = ""  # the ECS agent the AMI ships ("" when SSM does not say)


@functools.cache
def ecs_amis() -> dict[str, EcsAmi]:
    """Every ECS GPU and Neuron AMI id the generated data knows, whatever its region (AMI ids are unique)."""
    document = json.loads((DATA / "ecs_amis.json").read_text())
    return {
        ami_id: EcsAmi(ami_id, accelerator, variant, version, region, agent)
        for region, amis in document["amis"].items()
        for ami_id, (accelerator, variant, version, agent) in amis.items()
    }


@functools.cache
def nodeadm_interfaces() -> dict[str, tuple[int, int]]:
    """nodeadm's own instance data (data/nodeadm/SOURCE.md): type -> (ENIs of the default network
    card, IPv4 addresses per ENI), what the EKS AMIs' bootstrap reads to set max pods."""
    found = {}
    with (DATA / "nodeadm" / "instance-info.jsonl").open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            found[record["instanceType"]] = (int(record["defaultMaxENIs"]), int(record["ipv4AddressesPerInterface"]))
    return found


@functools.cache
def aws_json_inputs() -> dict[str, frozenset[str]]:
    """Per pulumi-aws resource type, the inputs its provider turns from an object into a JSON string
    before its API call (generated, with its source: python -m gpufleet.catalog.generate.json_inputs)."""
    document = json.loads((DATA / "aws_json_inputs.json").read_text())
    return {token: frozenset(inputs) for token, inputs in document["jsonDocuments"].items()}


@functools.cache
def botocore_inputs() -> dict:
    """Of botocore's service models, the create calls gpufleet judges and the shapes their inputs
    reach, with the botocore version they were read from (generated: python -m
    gpufleet.catalog.generate.botocore_inputs)."""
    return json.loads((DATA / "botocore_inputs.json").read_text())


def shipped_yaml(path: str | Path, tags: Mapping[str, Callable[[str], Any]] | None = None) -> Any:
    """A YAML file of the catalog's data (`path` under DATA: relative to it, or whole), read by
    libyaml (C): ruamel's pure-Python reader took about 0.2 s of every cold start for the curated
    facts, and a tenth of a second of a Karpenter stack's pack for the CRDs and chart values. libyaml reads YAML 1.1 (as
    Helm's and the API server's sigs.k8s.io/yaml do), ruamel 1.2; tests/catalog/test_catalog.py
    holds that both read every shipped file alike. `tags`: a local tag's scalar (CloudFormation's
    `!Sub`) made into a value."""
    text = (DATA / path).read_text()  # a whole path stays itself
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:  # PyYAML built without libyaml
        reader = YAML(typ="safe", pure=True)
        for tag, make in (tags or {}).items():
            reader.constructor.add_constructor(tag, lambda constructor, node, make=make: make(constructor.construct_scalar(node)))
        return reader.load(text)
    if tags:
        tagged: Any = type("TaggedLoader", (loader,), {})  # a class of its own: PyYAML's constructors are per class
        for tag, make in tags.items():
            tagged.add_constructor(tag, lambda constructor, node, make=make: make(constructor.construct_scalar(node)))
        loader = tagged
    return yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)


@functools.cache
def curated_facts() -> dict:
    """The curated facts file (what EC2 does not publish), each entry with its source."""
    return shipped_yaml("curated.yaml")


# Whether load() builds the curated facts without validating them: the policy pack's start (see
# trust_shipped); everywhere else a misspelt or missing key fails at load, naming it.
_TRUSTED = {"shipped": False}


def trust_shipped() -> None:
    """From now on, load the shipped curated facts as `facts.trusted` builds them (the same models and
    values, unvalidated: tests/catalog holds both that the file passes the check and that the two
    loads are equal). The policy pack calls it before its first load: in a process that starts once
    per preview, the check first builds the ~100 validators (about 40 ms of the pack's start) to
    find nothing the tests have not found."""
    _TRUSTED["shipped"] = True


@functools.cache
def load() -> Catalog:
    """The catalog from the committed data files (cached per process)."""
    document = json.loads((DATA / "instance_types.json").read_text())
    curated = curated_facts()
    per_type: dict[str, dict[str, tuple[str, ...]]] = {}
    for region, offered in document["offerings"].items():
        for name, azs in offered.items():
            per_type.setdefault(name, {})[region] = tuple(azs)
    facts = trusted(curated) if _TRUSTED["shipped"] else checked(curated, str(DATA / "curated.yaml"))
    incomplete = facts.incomplete_records
    types = {
        name: _instance_type(
            name,
            record,
            per_type.get(name, {}),
            incomplete[family_of(name)].reason if family_of(name) in incomplete else None,
        )
        for name, record in document["instanceTypes"].items()
    }
    return Catalog(
        types=types,
        regions=tuple(sorted(document["offerings"])),
        facts=facts,
        source=document["generated"]["source"],
        partial={name: _partial(name, entry) for name, entry in document["supplemented"].items()},
    )
