"""`gpufleet catalog`: the facts the catalog holds for instance types, and the verdicts of its rules."""

from __future__ import annotations

from gpufleet.catalog.catalog import Catalog, Gpu, InstanceType, NeuronDevices
from gpufleet.rules import ecs_amis as ami_rules
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import offerings as offering_rules


def _gpu_facts(it: InstanceType, gpu: Gpu) -> dict:
    """The type's GPUs: the record's facts, and what the GPU rules read from them (whole GPUs, the summary)."""
    return {
        "manufacturer": gpu.manufacturer,
        "model": gpu.model,
        "count": gpu.count,
        "wholeGpus": gpu_rules.whole_gpus(it),
        "fractional": gpu.fractional,
        "partitionSize": gpu.partition_size,
        "memoryMiB": gpu.memory_mib,
        "summary": gpu_rules.describe_gpus(it),
    }


def _neuron_facts(neuron: NeuronDevices) -> dict:
    """The type's Neuron devices: how many, and each one's model, NeuronCores and memory."""
    return {
        "model": neuron.model,
        "devices": neuron.count,
        "coresPerDevice": neuron.cores_per_device,
        "memoryMiBPerDevice": neuron.memory_mib,
    }


def describe(cat: Catalog, it: InstanceType) -> dict:
    ecs = cat.ecs()
    notes = ecs.notes.get(it.family)
    accelerator, variants = cat.ecs_ami_variants(it)
    return {
        "instanceType": it.name,
        "architectures": list(it.architectures),
        "vcpus": it.vcpus,
        "memoryMiB": it.memory_mib,
        "gpu": None if it.gpu is None else _gpu_facts(it, it.gpu),
        "neuron": None if it.neuron is None else _neuron_facts(it.neuron),
        "acceleratorFactsUnknown": it.incomplete,
        "efa": {
            "supported": it.efa_supported,
            "maximumEfaInterfaces": it.max_efa_interfaces,
            "maximumNetworkCards": it.max_network_cards,
        },
        "spot": offering_rules.spot_supported(it) is None,
        "regions": sorted(it.offerings),
        # The ECS AMI of the type's accelerator (GPU or Neuron); per variant, None means supported,
        # otherwise the reason it is not.
        "ecsAmi": {
            "accelerator": accelerator,
            "variants": {v: ami_rules.ecs_ami_support(it, v, ecs) for v in variants},
            **(
                {"regions": [r for r in sorted(it.offerings) if ami_rules.neuron_ami_region(r, ecs) is None]}
                if accelerator == "neuron"
                else {}
            ),
        },
        "notes": [notes.note] if notes else [],
    }


def overview(cat: Catalog) -> list[dict]:
    """Every type with GPUs or Neuron devices, or whose accelerator facts are unknown."""
    return [describe(cat, it) for name, it in sorted(cat.types.items()) if it.gpu or it.neuron or it.incomplete]


def render(records: list[dict], source: str, console) -> None:
    from gpufleet.cli.text_layout import TextTable

    table = TextTable(f"Catalog ({source})", ["type", "accelerators", "vCPU", "memory GiB", "EFA", "regions", "ECS AMI (al2023)"])
    for r in records:
        if r["gpu"]:
            acc = r["gpu"]["summary"]
        elif r["neuron"]:
            n = r["neuron"]
            acc = f"{n['devices']} x {n['model']} ({n['coresPerDevice']} NeuronCores each)"
        else:
            acc = f"unknown: {r['acceleratorFactsUnknown']}"
        efa = f"{r['efa']['maximumEfaInterfaces']} if / {r['efa']['maximumNetworkCards']} cards" if r["efa"]["supported"] else "-"
        verdict = r["ecsAmi"]["variants"].get("al2023")
        ami = f"{r['ecsAmi']['accelerator']}: yes" if verdict is None else verdict
        if "regions" in r["ecsAmi"]:
            ami += f" ({len(r['ecsAmi']['regions'])} regions)"
        table.add_row(r["instanceType"], acc, str(r["vcpus"]), f"{r['memoryMiB'] / 1024:g}", efa, str(len(r["regions"])), ami)
    table.print(console)
