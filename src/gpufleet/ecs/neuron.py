"""Which Neuron chips each container of a workload maps (pure, no Pulumi).

The spec checks, the container definitions and the summary all read the counts from here, so the
default ("a lone container takes every chip", "a per-chip task maps one") is stated once.
"""

from __future__ import annotations

from gpufleet.catalog.catalog import InstanceType
from gpufleet.ecs.args import WorkloadArgs
from gpufleet.rules import neuron as neuron_rules


def device_counts(wl: WorkloadArgs, it: InstanceType | None) -> list[int]:
    """Neuron chips mapped per container: explicit counts; an unset count is every chip of the type
    for a workload's only container (one chip when its service runs a task per chip), else none."""
    chips = (neuron_rules.neuron_chips(it) or 0) if it is not None else 0
    if len(wl.containers) == 1 and wl.containers[0].neuron_devices is None:
        if wl.service is not None and wl.service.per_chip:
            return [1]
        return [chips]
    return [chips if c.neuron_devices == "all" else c.neuron_devices or 0 for c in wl.containers]


def chip_offsets(counts: list[int], first: int = 0) -> list[int]:
    """The first chip index of each container: containers get consecutive, disjoint chips."""
    offsets, next_chip = [], first
    for count in counts:
        offsets.append(next_chip)
        next_chip += count
    return offsets


def per_chip_families(workload: str, it: InstanceType) -> list[str]:
    """The task definition families (and service names) of a workload that runs a task per chip."""
    return [f"{workload}-chip{chip}" for chip in range(neuron_rules.neuron_chips(it) or 0)]
