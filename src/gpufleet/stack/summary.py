"""The accelerator summary of a stack: what it provisions, per capacity provider and in total.

Computed from the validated spec and the catalog, exported as the stack output `accelerators` (so
`pulumi stack output accelerators` shows it under the real CLI) and shown by `gpufleet preview`.
GPU groups count GPUs; Neuron groups count chips and NeuronCores (cores per chip from the catalog).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufleet.catalog.catalog import Catalog
from gpufleet.platform.summary_rows import SIZES
from gpufleet.stack.platforms import PLATFORMS

if TYPE_CHECKING:
    from gpufleet.stack.spec import FleetSpec

# Each platform's part of the summary is made by its record (src/gpufleet/<platform>/platform.py),
# which imports its components only then: a stack imports only the clouds it uses (cold start:
# AKS's models alone take 0.1 s to import, ECS's checks 0.05 s).

# The stack output that carries the summary; the plan moves it to its `summary`.
SUMMARY_OUTPUT = "accelerators"


def _totals(groups: list[dict]) -> list[dict]:
    totals: dict[tuple[str, str], dict] = {}
    for group in groups:
        key = (group["kind"], f"{group['manufacturer']} {group['model']}" if group["model"] else "none")
        bucket = totals.setdefault(key, {"kind": key[0], "model": key[1], **{k: 0 for k in SIZES}})
        for counted in ("neuronCores", "efaInterfaces"):
            if counted in group:
                bucket.setdefault(counted, {k: 0 for k in SIZES})
                for k in SIZES:
                    bucket[counted][k] += group[counted][k]
        for k in SIZES:
            bucket[k] += group["accelerators"][k]
    return [totals[k] for k in sorted(totals)]


def accelerator_summary(spec: FleetSpec, cat: Catalog) -> dict:
    """Every platform's groups, workloads and keys of its own, and the totals over all groups."""
    summary: dict = {"groups": [], "workloads": []}
    for platform in PLATFORMS:
        fleet = getattr(spec, platform.key)
        if fleet is None:
            continue
        part = platform.summary(fleet, spec.region, cat)
        summary["groups"] += part.pop("groups", [])
        summary["workloads"] += part.pop("workloads", [])
        summary.update(part)
    summary["totals"] = _totals(summary["groups"])
    return summary
