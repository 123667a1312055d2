"""What the Karpenter provisioning simulation adds, at the largest EKS stack (bench/fleets.py: 30
accelerated groups, 300 one-GPU workloads), measured in one run:

- the plan-side placement (`plans.placement`, what the report and the pack run) of the stack with
  30 node groups, and of the same stack with its 30 groups as NodePools, so that every workload is
  provisioned: the median over back-to-back pairs of their ratio;
- the whole judged preview of each (spec, program, pack, placement), the same way.

    python bench/provisioning.py

Ratios are the claim, never seconds: these machines are noisy.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpufleet.analyzer.pack_dir import DEFAULT_PACK  # noqa: E402
from gpufleet.catalog import catalog  # noqa: E402
from gpufleet.plans.placement import from_plan, placement  # noqa: E402
from gpufleet.engine.preview import preview_plan  # noqa: E402
from gpufleet.stack.spec import decode_config, load_spec  # noqa: E402
from bench.fleets import EKS_LARGEST, eks_fleet  # noqa: E402

PAIRS = 7


def pooled(config: dict[str, str]) -> dict[str, str]:
    """The same stack with each node group a NodePool of its type (on-demand, maxNodes its maxSize)."""
    eks = json.loads(config["gpufleet:eks"])
    eks["nodePools"] = [
        {"name": g["name"], "gpu": {}, "instanceTypes": [g["instanceType"]], "maxNodes": g["maxSize"], "amiVersion": "v20260724"}
        for g in eks.pop("nodeGroups")
    ]
    return {**config, "gpufleet:eks": json.dumps(eks)}


def judged(config: dict[str, str], name: str) -> tuple[dict, float]:
    start = time.perf_counter()
    load_spec(decode_config(config))
    plan = preview_plan(config, name, DEFAULT_PACK, {})
    return plan, time.perf_counter() - start


def placed(plan: dict) -> float:
    resources = from_plan(plan)
    start = time.perf_counter()
    placement(resources, catalog.load())
    return time.perf_counter() - start


def main() -> int:
    groups = eks_fleet(EKS_LARGEST["node_groups"], EKS_LARGEST["workloads"])
    pools = pooled(groups)
    plans = {}
    preview_ratios, placement_ratios = [], []
    for i in range(PAIRS):
        runs = {}
        for kind in (("groups", "pools") if i % 2 else ("pools", "groups")):
            plans[kind], runs[kind] = judged(groups if kind == "groups" else pools, f"bench-{kind}")
        preview_ratios.append(runs["pools"] / runs["groups"])
        times = {}
        for kind in (("groups", "pools") if i % 2 else ("pools", "groups")):
            times[kind] = placed(plans[kind])
        placement_ratios.append(times["pools"] / times["groups"])
    provisioned = sum(1 for p in plans["pools"]["placement"]["pods"] if p["status"] == "provisioned")
    print(f"largest EKS stack: {EKS_LARGEST['node_groups']} accelerated groups, {EKS_LARGEST['workloads']} workloads")
    print(f"resources: node groups {plans['groups']['summary']['resourceCount']}, NodePools {plans['pools']['summary']['resourceCount']}; "
          f"workloads provisioned by NodePools: {provisioned}")
    print(f"plan-side placement, NodePools / node groups: {statistics.median(placement_ratios):.2f}x (median of {PAIRS} pairs)")
    print(f"judged preview, NodePools / node groups: {statistics.median(preview_ratios):.2f}x (median of {PAIRS} pairs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
