"""The accelerator summary of a stack: what it provisions, per capacity provider and in total.

Computed from the validated spec and the catalog, exported as the stack output `accelerators` (so
`pulumi stack output accelerators` shows it under the real CLI) and shown by `gpufleet preview`.
"""

from __future__ import annotations

from components.catalog import catalog, predicates
from infra.spec import FleetSpec

SIZES = ("min", "desired", "max")


def accelerator_summary(spec: FleetSpec) -> dict:
    cat = catalog.load()
    groups, workloads = [], []
    totals: dict[str, dict[str, int]] = {}
    if spec.ecs is not None:
        per_instance: dict[str, int] = {}
        for cp in spec.ecs.capacity_providers:
            it = cat.get(cp.instance_type)
            gpus = predicates.whole_gpus(it) or 0
            per_instance[cp.name] = gpus
            instances = {"min": cp.min_size, "desired": cp.desired_size, "max": cp.max_size}
            groups.append(
                {
                    "platform": "ecs",
                    "group": cp.name,
                    "instanceType": cp.instance_type,
                    "purchase": cp.purchase,
                    "amiVariant": cp.ami_variant,
                    "kind": "gpu",
                    "manufacturer": it.gpu.manufacturer if it.gpu else None,
                    "model": it.gpu.model if it.gpu else None,
                    "perInstance": gpus,
                    "memoryMiBPerAccelerator": it.gpu.memory_mib if it.gpu else 0,
                    "instances": instances,
                    "accelerators": {k: gpus * n for k, n in instances.items()},
                }
            )
            model = f"{it.gpu.manufacturer} {it.gpu.model}" if it.gpu else "none"
            bucket = totals.setdefault(model, {k: 0 for k in SIZES})
            for k in SIZES:
                bucket[k] += gpus * instances[k]
        for wl in spec.ecs.workloads:
            gpus = sum(c.gpus for c in wl.containers)
            available = per_instance.get(wl.capacity_provider, 0)
            row = {"name": wl.name, "capacityProvider": wl.capacity_provider, "gpusPerTask": gpus}
            if gpus:
                # GPUs are the binding limit on these fleets; CPU and memory may bind earlier.
                row["tasksPerInstanceByGpu"] = available // gpus
            if wl.service:
                row["serviceDesiredCount"] = wl.service.desired_count
            workloads.append(row)
    return {
        "groups": groups,
        "totals": [{"kind": "gpu", "model": m, **counts} for m, counts in sorted(totals.items())],
        "workloads": workloads,
    }
