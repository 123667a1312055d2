"""Regenerate the catalog's data files from EC2 and SSM data.

    python -m gpufleet.catalog.generate            # from the moto snapshot (offline, the default)
    python -m gpufleet.catalog.generate --live     # from live AWS (boto3 credentials)
    python -m gpufleet.catalog.generate --check    # exit 1 if the committed file is stale

The file keeps, per instance type, the subset of the DescribeInstanceTypes record that gpufleet
reasons about, in the API's own shape, and the availability-zone offerings of every accelerated or
EFA-capable type, and of the families a system node group may use, per region. One line per instance type, so a regeneration reads as a small diff.

Types the source lacks but `data/ec2_supplement/instance_types.json` gives sourced facts of are
copied into the section `supplemented`, never over a record the source has (that folder's SOURCE.md).

`ecs_amis.json` maps every AMI id published under the ECS GPU and Neuron AMI variants' SSM paths to
its accelerator, variant and version, per region: the policy pack judges a launch template's
`imageId` with it.
"""

from __future__ import annotations

import argparse
import json
import sys

from gpufleet.catalog.catalog import DATA, curated_facts
from gpufleet.catalog.generate.rendering import one_entry_a_line
from gpufleet.catalog.generate.sources import FactSource, LiveAws, MotoSnapshot

DATA_FILE = DATA / "instance_types.json"
AMI_FILE = DATA / "ecs_amis.json"
SUPPLEMENT_FILE = DATA / "ec2_supplement" / "instance_types.json"
REGENERATE = "python -m gpufleet.catalog.generate"

# Top-level record fields kept as they are, and the NetworkInfo fields kept.
_RECORD_FIELDS = (
    "BareMetal",
    "GpuInfo",
    "Hypervisor",
    "InferenceAcceleratorInfo",
    "NeuronInfo",
    "PlacementGroupInfo",
    "SupportedUsageClasses",
)
_NETWORK_FIELDS = (
    "DefaultNetworkCardIndex",
    "EfaSupported",
    "EfaInfo",
    "EncryptionInTransitSupported",
    "Ipv4AddressesPerInterface",
    "MaximumNetworkCards",
    "MaximumNetworkInterfaces",
    "NetworkPerformance",
)
_CARD_FIELDS = ("NetworkCardIndex", "MaximumNetworkInterfaces", "InterfaceTypes")


def _slim(record: dict) -> dict:
    slim = {k: record[k] for k in _RECORD_FIELDS if record.get(k) is not None}
    processor = record["ProcessorInfo"]
    slim["ProcessorInfo"] = {
        k: processor[k] for k in ("SupportedArchitectures", "Manufacturer", "SustainedClockSpeedInGhz") if k in processor
    }
    # What Karpenter's labels read of the EBS and instance-store records (instancetype/types.go
    # @bde00654 L257-L259, L305-L308).
    ebs = record.get("EbsInfo") or {}
    if ebs.get("EbsOptimizedSupport"):
        slim["EbsInfo"] = {"EbsOptimizedSupport": ebs["EbsOptimizedSupport"]}
        if "MaximumBandwidthInMbps" in (ebs.get("EbsOptimizedInfo") or {}):
            slim["EbsInfo"]["EbsOptimizedInfo"] = {"MaximumBandwidthInMbps": ebs["EbsOptimizedInfo"]["MaximumBandwidthInMbps"]}
    storage = record.get("InstanceStorageInfo") or {}
    if storage:
        slim["InstanceStorageInfo"] = {k: storage[k] for k in ("NvmeSupport", "TotalSizeInGB") if k in storage}
    slim["VCpuInfo"] = {"DefaultVCpus": record["VCpuInfo"]["DefaultVCpus"]}
    slim["MemoryInfo"] = {"SizeInMiB": record["MemoryInfo"]["SizeInMiB"]}
    network = record.get("NetworkInfo") or {}
    slim["NetworkInfo"] = {k: network[k] for k in _NETWORK_FIELDS if network.get(k) is not None}
    slim["NetworkInfo"]["NetworkCards"] = [{k: card[k] for k in _CARD_FIELDS if k in card} for card in network.get("NetworkCards", [])]
    return slim


def _accelerated(record: dict) -> bool:
    return bool(
        record.get("GpuInfo")
        or record.get("NeuronInfo")
        or record.get("InferenceAcceleratorInfo")
        or (record.get("NetworkInfo") or {}).get("EfaSupported")
    )


def _system_families() -> set[str]:
    """Families a system node group may use: their offerings are kept too (curated, with the reason)."""
    return set(curated_facts()["eks"]["systemNodeFamilies"]["values"])


def supplement() -> dict[str, dict]:
    """Sourced facts of instance types an EC2 source may lack, by type (data/ec2_supplement/SOURCE.md)."""
    return json.loads(SUPPLEMENT_FILE.read_text())["instanceTypes"]


def build(source: FactSource, supplemented: dict[str, dict] | None = None) -> dict:
    """The catalog document, built from one source; `supplemented` (default: the supplement file)
    fills in only the types the source lacks."""
    records = source.instance_types()
    extra = supplement() if supplemented is None else supplemented
    types = {name: _slim(records[name]) for name in sorted(records)}
    families = _system_families()
    with_offerings = {name for name, rec in records.items() if _accelerated(rec) or name.split(".", 1)[0] in families}
    offerings: dict[str, dict[str, list[str]]] = {}
    for region in source.regions():
        per_type: dict[str, list[str]] = {}
        for row in source.az_offerings(region):
            if row["InstanceType"] in with_offerings:
                per_type.setdefault(row["InstanceType"], []).append(row["Location"])
        offerings[region] = {name: sorted(azs) for name, azs in sorted(per_type.items())}
    return {
        "generated": {
            "by": REGENERATE,
            "source": source.label,
            "offerings": "availability-zone offerings of GPU, Neuron, inference-accelerator and EFA-capable types, and of the system node families",
            "supplemented": "types the source lacks, with the facts data/ec2_supplement/instance_types.json sources",
        },
        "instanceTypes": types,
        "offerings": offerings,
        "supplemented": {name: extra[name] for name in sorted(extra) if name not in records},
    }


def build_amis(source: FactSource) -> dict:
    """Per region, AMI id -> [accelerator, variant, image version, ECS agent version] of every ECS GPU
    and Neuron AMI its SSM tree lists (the agent version decides agent-gated features such as MPS)."""
    ecs = curated_facts()["ecs"]
    families = {"gpu": ecs["gpuAmiVariants"], "neuron": ecs["neuronAmiVariants"]}
    per_region: dict[str, dict[str, list[str]]] = {}
    for region in source.regions():
        found: dict[str, list[str]] = {}
        for accelerator, variants in families.items():
            for variant, facts in variants.items():
                parent = facts["ssmParameter"].rsplit("/", 1)[0]
                for value in source.ssm_children(region, parent):
                    record = json.loads(value)
                    if isinstance(record, dict) and "image_id" in record and "image_version" in record:
                        found[record["image_id"]] = [accelerator, variant, record["image_version"], record.get("ecs_agent_version", "")]
        if found:
            per_region[region] = dict(sorted(found.items()))
    return {
        "generated": {"by": REGENERATE, "source": source.label, "paths": "children of each ECS GPU and Neuron AMI variant's SSM path"},
        "amis": per_region,
    }


def render_amis(document: dict) -> str:
    lines = [f'"{region}":{json.dumps(amis, separators=(",", ":"))}' for region, amis in document["amis"].items()]
    body = ",\n".join(lines)
    return f'{{\n"generated":{json.dumps(document["generated"], sort_keys=True)},\n"amis":{{\n{body}\n}}\n}}\n'


def render(document: dict) -> str:
    """One instance type (and one region's offerings) per line, keys sorted, stable across runs."""
    return one_entry_a_line(document, ("instanceTypes", "offerings", "supplemented"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="read live AWS through boto3 instead of moto's snapshot")
    parser.add_argument("--region", default="us-east-1", help="home region for the live DescribeInstanceTypes call")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the committed file differs")
    args = parser.parse_args(argv)
    source: FactSource = LiveAws(args.region) if args.live else MotoSnapshot()
    files = {DATA_FILE: render(build(source)), AMI_FILE: render_amis(build_amis(source))}
    if args.check:
        stale = [path for path, text in files.items() if (path.read_text() if path.exists() else "") != text]
        for path in stale:
            print(f"{path} is stale against the {source.label}: run `{REGENERATE}`", file=sys.stderr)
        return 1 if stale else 0
    for path, text in files.items():
        path.write_text(text)
        print(f"wrote {path} from the {source.label}", file=sys.stderr)
    return 0
