"""ACK shared GPU scheduling rule predicates (004): compute percentages, GPU memory per GPU, one
sharing mode per node, regions and prerequisites. Plain functions returning None when the rule
holds, else a reason; the stack spec and the policy pack both call them."""

from __future__ import annotations

import re

from components.catalog.predicates import region_listed


def core_percentage(value: object, ack_facts: dict) -> str | None:
    """Is `value` a valid aliyun.com/gpu-core.percentage (5..100, a multiple of 5)?"""
    rule = ack_facts["computePercentage"]
    if not isinstance(value, int) or isinstance(value, bool):
        return f"gpu-core.percentage {value!r} is not a whole number"
    if not rule["minimum"] <= value <= rule["maximum"] or value % rule["multipleOf"]:
        return (
            f"gpu-core.percentage {value} is not one of {rule['minimum']}..{rule['maximum']} in steps of "
            f"{rule['multipleOf']} (a job with such a value cannot be submitted)"
        )
    return None


def gpu_mem_fits(requested_gib: int, gpu_memory_gib: int, instance_type: str) -> str | None:
    """Do `requested_gib` of GPU memory fit one GPU of the pool's type (a pod's share lives on one GPU)?"""
    if requested_gib <= 0:
        return f"gpu-mem {requested_gib} GiB: request at least 1 GiB"
    if requested_gib > gpu_memory_gib:
        return f"gpu-mem {requested_gib} GiB does not fit one GPU of {instance_type} ({gpu_memory_gib} GiB)"
    return None


def sharing_mode_allows(mode: str | None, wants_compute: bool, ack_facts: dict) -> str | None:
    """Can a pod that does (not) request compute percentage run on a pool of `mode`? A node runs
    memory-only jobs or memory+compute jobs, never both."""
    modes = ack_facts["sharingModes"]
    if mode not in modes:
        return f"the pool has no GPU sharing mode ({ack_facts['scheduleLabel']} one of {', '.join(modes)})"
    if wants_compute and not modes[mode]["computePercentage"]:
        return f"a pod requesting {ack_facts['computeResource']} needs a core_mem pool; this pool is {mode} ({modes[mode]['isolation']} isolation)"
    if not wants_compute and modes[mode]["computePercentage"]:
        return f"a memory-only pod on a core_mem pool: a node runs memory-only or memory+compute jobs, never both"
    return None


def sharing_region(region: str, ack_facts: dict) -> str | None:
    return region_listed(region, ack_facts["sharingRegions"]["values"], "GPU memory and computing power allocation is")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text)[:3])


def cluster_prerequisites(kubernetes: str | None, chart: str | None, cgpu: str | None, ack_facts: dict) -> list[str]:
    """What the known versions miss of the prerequisites (unknown versions are not judged)."""
    need = ack_facts["prerequisites"]
    problems = []
    for what, have, minimum in (
        ("Kubernetes", kubernetes, need["minimumKubernetes"]),
        ("the GPU sharing chart (ack-ai-installer)", chart, need["minimumSharingChart"]),
        ("cGPU", cgpu, need["minimumCgpu"]),
    ):
        if have is not None and _version(have) < _version(minimum):
            problems.append(f"{what} {have} is older than {minimum}, which computing power allocation needs")
    return problems
