"""ACK shared GPU scheduling rule predicates (004): compute percentages, GPU memory per GPU, one
sharing mode per node, regions and prerequisites. Plain functions returning None when the rule
holds, else a reason; the stack spec and the policy pack both call them."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.catalog.facts import AckFacts
from gpufleet.rules.offerings import region_listed
from gpufleet.rules.versions import version_tuple


@dataclass(frozen=True)
class AckGpuType:
    """An ECS GPU instance type as ACK's GPU sharing sees it (curated `ack.gpuInstanceTypes`)."""

    name: str
    gpus: int
    model: str
    memory_mib: int  # per GPU, as NVML reports it

    @property
    def shared_gib(self) -> int:
        """GiB of aliyun.com/gpu-mem the sharing plugin advertises per GPU (it divides MiB by 1024)."""
        return self.memory_mib // 1024


def gpu_type(instance_type: str, ack_facts: AckFacts) -> AckGpuType | None:
    """The curated facts of an ECS GPU type (`ecs.gn6v-c8g1.8xlarge`), or None when not curated."""
    gpus = ack_facts.gpu_instance_types.get(instance_type)
    family = instance_type.split(".")[1].split("-")[0] if instance_type.count(".") >= 2 else ""
    facts = ack_facts.gpu_families.get(family)
    if gpus is None or facts is None:
        return None
    return AckGpuType(instance_type, gpus, facts.model, facts.memory_mib)


def gpu_type_known(instance_type: str, ack_facts: AckFacts) -> str | None:
    if gpu_type(instance_type, ack_facts) is not None:
        return None
    return (
        f"{instance_type} is not an ECS GPU type gpufleet has sourced facts for (GPUs, GPU memory); "
        f"known: {', '.join(ack_facts.gpu_instance_types)}"
    )


def smallest_gpu(instance_types: list[str], ack_facts: AckFacts) -> AckGpuType | None:
    """The type whose GPU holds the least shared memory: what a pool of these types guarantees a pod
    (None when no type has sourced facts)."""
    known = [t for t in (gpu_type(name, ack_facts) for name in instance_types) if t is not None]
    return min(known, key=lambda t: t.shared_gib, default=None)


def pool_gpus(instance_types: list[str], ack_facts: AckFacts) -> int:
    """GPUs per node a pool of these types guarantees: the fewest of its sourced types (0 if none is)."""
    return min((t.gpus for t in (gpu_type(name, ack_facts) for name in instance_types) if t is not None), default=0)


def shares_per_gpu(gpu_gib: int, mem_gib: int, core_percentage: int | None, ack_facts: AckFacts) -> int:
    """How many pods asking `mem_gib` (and `core_percentage`) one GPU holds: memory and compute both bind."""
    fit = gpu_gib // mem_gib if mem_gib > 0 else 0
    if core_percentage:
        fit = min(fit, ack_facts.compute_percentage.maximum // core_percentage)
    return fit


def pool_mode(labels: dict, ack_facts: AckFacts) -> str | None:
    """The sharing mode a pool's (or a pod's node selector's) labels name, or None."""
    mode = labels.get(ack_facts.schedule_label)
    return mode if isinstance(mode, str) else None


def core_percentage(value: object, ack_facts: AckFacts) -> str | None:
    """Is `value` a valid aliyun.com/gpu-core.percentage (5..100, a multiple of 5)?"""
    rule = ack_facts.compute_percentage
    if not isinstance(value, int) or isinstance(value, bool):
        return f"gpu-core.percentage {value!r} is not a whole number"
    if not rule.minimum <= value <= rule.maximum or value % rule.multiple_of:
        return (
            f"gpu-core.percentage {value} is not one of {rule.minimum}..{rule.maximum} in steps of "
            f"{rule.multiple_of} (a job with such a value cannot be submitted)"
        )
    return None


def gpu_mem_fits(requested_gib: int, gpu_memory_gib: int, instance_type: str) -> str | None:
    """Do `requested_gib` of GPU memory fit one GPU of the pool's type (a pod's share lives on one GPU)?"""
    if requested_gib <= 0:
        return f"gpu-mem {requested_gib} GiB: request at least 1 GiB"
    if requested_gib > gpu_memory_gib:
        return f"gpu-mem {requested_gib} GiB does not fit one GPU of {instance_type} ({gpu_memory_gib} GiB)"
    return None


def sharing_mode_allows(mode: str | None, wants_compute: bool, ack_facts: AckFacts) -> str | None:
    """Can a pod that does (not) request compute percentage run on a pool of `mode`? A node runs
    memory-only jobs or memory+compute jobs, never both."""
    modes = ack_facts.sharing_modes
    if mode not in modes:
        return f"the pool has no GPU sharing mode ({ack_facts.schedule_label} one of {', '.join(modes)})"
    if wants_compute and not modes[mode].compute_percentage:
        return (
            f"a pod requesting {ack_facts.compute_resource} needs a core_mem pool; this pool is {mode} ({modes[mode].isolation} isolation)"
        )
    if not wants_compute and modes[mode].compute_percentage:
        return "a memory-only pod on a core_mem pool: a node runs memory-only or memory+compute jobs, never both"
    return None


def sharing_region(region: str, mode: str | None, ack_facts: AckFacts) -> str | None:
    """Is a pool of sharing `mode` in a region that supports it? 004's table lists the regions of
    computing power allocation, so it judges only modes that allocate compute (core_mem)."""
    if mode not in ack_facts.sharing_modes or not ack_facts.sharing_modes[mode].compute_percentage:
        return None
    return region_listed(region, ack_facts.sharing_regions.values, "GPU memory and computing power allocation is")


def cluster_prerequisites(kubernetes: str | None, chart: str | None, cgpu: str | None, ack_facts: AckFacts) -> dict[str, str]:
    """What the known versions miss of the prerequisites, by which one ("kubernetes", "chart",
    "cgpu"); unknown versions are not judged."""
    need = ack_facts.prerequisites
    problems = {}
    for key, what, have, minimum in (
        ("kubernetes", "Kubernetes", kubernetes, need.minimum_kubernetes),
        ("chart", f"the GPU sharing chart ({ack_facts.sharing_chart})", chart, need.minimum_sharing_chart),
        ("cgpu", "cGPU", cgpu, need.minimum_cgpu),
    ):
        have_numbers, minimum_numbers = version_tuple(have), version_tuple(minimum)
        if have_numbers is not None and minimum_numbers is not None and have_numbers < minimum_numbers:
            problems[key] = f"{what} {have} is older than {minimum}, which computing power allocation needs"
    return problems
