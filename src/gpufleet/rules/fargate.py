"""AWS Fargate as capacity: an ECS task or an EKS pod runs there when its size is one Fargate runs
(curated `fargate`: the table the ECS and EKS guides give), each on a VM of its own. Fargate has no
instance to fill, so what decides is the size: ECS takes a task definition's task-level cpu and
memory as they are and refuses any other pair; EKS rounds a pod's requests (plus what its own
components take) up to the smallest size that holds them.

Plain functions of the facts and plain values; the placement (plans/tasks.py, plans/placement.py),
which the plan, `check` and the policy pack all reach, calls them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import cache

from gpufleet.catalog.facts import Fargate, FargateSize
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.catalog.wording import counted

MIB = 2**20
# The launch type and the capacity providers that are Fargate (ECS's own names: no instances behind them).
LAUNCH_TYPE = "FARGATE"
PROVIDERS = ("FARGATE", "FARGATE_SPOT")
LINUX, WINDOWS = "LINUX", "WINDOWS"

# ECS takes a task's cpu as units or as vCPUs in text, its memory as MiB or as GB in text (both
# converted when the definition is registered: botocore's RegisterTaskDefinition cpu and memory).
_VCPU = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*vcpu\s*$", re.IGNORECASE)
_GB = re.compile(r"^\s*(\d+(?:\.\d+)?|\.\d+)\s*gb\s*$", re.IGNORECASE)
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*$")


def task_cpu_units(value: object) -> int | None:
    """A task definition's cpu as ECS registers it (CPU units); None when none is given or it does not read."""
    return _amount(value, _VCPU, 1024)


def task_memory_mib(value: object) -> int | None:
    """A task definition's memory as ECS registers it (MiB); None when none is given or it does not read."""
    return _amount(value, _GB, 1024)


def _amount(value: object, unit: re.Pattern[str], per_unit: int) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value) if value == int(value) and value > 0 else None
    if not isinstance(value, str):
        return None
    if match := _NUMBER.match(value):
        number = float(match.group(1))
        return int(number) if number == int(number) and number > 0 else None
    if match := unit.match(value):
        return round(float(match.group(1)) * per_unit)
    return None


def _memories(size: FargateSize) -> str:
    """The memory a size takes, as the guide words it: listed, or a range and its step."""
    if size.memory_range_mib:
        low, high, step = size.memory_range_mib
        return f"{low} to {high} MiB in steps of {step}"
    values = [str(m) for m in size.memories()]
    return f"{', '.join(values[:-1])} or {values[-1]} MiB" if len(values) > 1 else f"{values[0]} MiB"


def _cpus(facts: Fargate) -> str:
    return ", ".join(str(s.cpu) for s in facts.sizes)


def _platform(version: str) -> tuple[int, ...] | None:
    """A Fargate platform version as numbers (1.4.0); None for LATEST or anything else."""
    parts = version.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def task_size_problem(
    cpu: int | None, memory: int | None, facts: Fargate, operating_system: str = LINUX, platform_version: str | None = None
) -> str | None:
    """Why Fargate does not run a task of this task-level cpu (units) and memory (MiB), on this
    operating system (LINUX or WINDOWS) and platform version (None or LATEST: the newest); None
    when it does."""
    missing = [name for name, value in (("cpu", cpu), ("memory", memory)) if value is None]
    if missing:
        return f"Fargate needs the task's cpu and memory at task level; the task definition gives no {' or '.join(missing)}"
    size = next((s for s in facts.sizes if s.cpu == cpu), None)
    if size is None:
        return f"{counted(cpu or 0, 'CPU unit')} is not one of Fargate's task sizes (its CPU units: {_cpus(facts)})"
    if memory not in size.memories():
        return f"{memory} MiB with {counted(size.cpu, 'CPU unit')} is not one of Fargate's task sizes ({size.cpu} takes {_memories(size)})"
    if operating_system not in size.operating_systems:
        return f"Fargate runs {size.cpu} CPU units on {' and '.join(o.title() for o in size.operating_systems)} only, not {operating_system.title()}"
    wanted = _platform(size.linux_platform) if size.linux_platform else None
    given = _platform(platform_version) if platform_version else None
    if wanted is not None and given is not None and given < wanted:
        return (
            f"Fargate runs {size.cpu} CPU units from Linux platform version {size.linux_platform}; the service asks for {platform_version}"
        )
    return None


def task_problem(whole_gpus: int, shares_gpu: bool, maps_devices: bool, facts: Fargate) -> str | None:
    """What of a task definition Fargate does not take, of what the placement reads: a GPU resource
    requirement (whole, shared or fractional), host devices (a Neuron chip's /dev/neuronN)."""
    if (whole_gpus or shares_gpu) and "gpu" in facts.tasks.not_valid:
        return "the task asks for GPUs, which Fargate does not take (gpu is not valid in a Fargate task definition)"
    if maps_devices and "linuxParameters.devices" in facts.tasks.not_valid:
        return "the task maps host devices, which Fargate does not take (linuxParameters.devices)"
    return None


def pod_size(requests: Mapping[str, int], facts: Fargate) -> tuple[int, int] | None:
    """The size EKS runs a pod at on Fargate, (CPU units, MiB), from its effective requests (millicores
    and bytes: the larger of its init containers' largest and its containers' sum) and the memory
    Fargate's own components take; None when no size holds it."""
    cpu = requests.get("cpu", 0)
    memory = requests.get("memory", 0) + facts.pods.memory_overhead_mib * MIB
    for size in facts.sizes:  # smallest first: the table is in CPU order, each size's memory rising
        if size.cpu * 1000 < cpu * 1024:  # CPU units against millicores, in whole numbers
            continue
        fits = next((m for m in size.memories() if m * MIB >= memory), None)
        if fits is not None:
            return size.cpu, fits
    return None


def show_size(cpu: int, memory: int) -> str:
    """A Fargate size as EKS annotates a pod with it (CapacityProvisioned: 0.25vCPU 0.5GB)."""
    return f"{cpu / 1024:g}vCPU {memory / 1024:g}GB"


def pod_problem(requests: Mapping[str, int], gpu_resource: str, facts: Fargate) -> str | None:
    """Why EKS runs the pod on no Fargate size: a GPU it asks for, or a size past the largest."""
    if requests.get(gpu_resource) and not facts.pods.gpus:
        return f"it requests {gpu_resource}, and Fargate offers no GPUs"
    if pod_size(requests, facts) is None:
        largest = facts.sizes[-1]
        memory = math.ceil(requests.get("memory", 0) / MIB)
        return (
            f"it requests {requests.get('cpu', 0) / 1000:g} vCPU and {memory} MiB, {memory + facts.pods.memory_overhead_mib} MiB with "
            f"what Fargate adds: more than Fargate's largest size, {show_size(largest.cpu, largest.memories()[-1])}"
        )
    return None


@cache
def _wildcard(pattern: str) -> re.Pattern[str]:
    """A Fargate profile's pattern: * any run of characters, ? exactly one, nothing else special."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


def matches(pattern: str, value: str) -> bool:
    return _wildcard(pattern).fullmatch(value) is not None


def selects(selector: Mapping, namespace: str, labels: Mapping[str, str] | None) -> bool | None:
    """Does a Fargate profile's selector match a pod (its namespace, and every label it gives, keys
    and values both patterns)? None when that is not known: a namespace known only after apply, or
    labels the selector asks for on a pod whose labels the plan does not give."""
    wanted = selector.get("namespace")
    if UNKNOWN in (wanted, namespace):
        return None
    if not isinstance(wanted, str) or not matches(wanted, namespace):
        return False
    asked = selector.get("labels")
    given = {str(k): str(v) for k, v in asked.items()} if isinstance(asked, Mapping) else {}
    if not given:
        return True
    if labels is None:
        return None
    return all(any(matches(k, key) and matches(v, value) for key, value in labels.items()) for k, v in given.items())
