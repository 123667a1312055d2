"""How containers of an ECS task ask for GPUs, and the rules of each way: whole GPUs (`value` N or
ALL), a fractional G6f GPU (`value` 0.125, 0.25 or 0.5), or a share of one GPU through NVIDIA MPS
(`sharingStrategy.nvidiaMps`: memory MiB, optional maxComputePercent).

The requests are read from `containerDefinitions` as ECS reads them, so the stack spec (which renders
its containers first) and the policy pack (which reads any program's task definitions) judge the same
document with the same functions. Each rule returns None when it holds, else a reason with its source
(facts.ecs.gpuSharing, the ECS API reference).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.apis.aws_rules import container_requirements
from gpufleet.apis.values import decimal
from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import EcsFacts
from gpufleet.rules.versions import version_tuple

WHOLE, FRACTION, SHARE = "whole GPUs", "a fractional GPU", "an MPS share"
ALL = "ALL"  # every GPU of the instance (ResourceRequirement.value)


@dataclass(frozen=True)
class GpuRequest:
    """One container's GPU resource requirement."""

    index: int  # the container's position in the task
    container: str
    value: object  # `value` as given (None when absent)
    sharing: object  # `sharingStrategy` as given (None when absent)

    @property
    def mps(self) -> Mapping:
        sharing = self.sharing if isinstance(self.sharing, Mapping) else {}
        mps = sharing.get("nvidiaMps")
        return mps if isinstance(mps, Mapping) else {}

    @property
    def mps_memory(self) -> int:
        memory = self.mps.get("memory")
        return memory if isinstance(memory, int) and not isinstance(memory, bool) else 0

    @property
    def max_compute_percent(self) -> object:
        return self.mps.get("maxComputePercent")

    @property
    def fraction(self) -> float | None:
        """The value as a fraction of one GPU (0 < f < 1), else None."""
        try:
            number = float(str(self.value))
        except ValueError:
            return None
        return number if 0 < number < 1 else None

    @property
    def whole(self) -> int:
        """Whole GPUs the value pins (0 for ALL, a fraction or a share: ALL depends on the instance)."""
        text = str(self.value)
        return (decimal(text) or 0) if self.sharing is None else 0

    @property
    def option(self) -> str:
        if self.sharing is not None:
            return SHARE
        return FRACTION if self.fraction is not None else WHOLE


def gpu_requests(containers: Sequence[object]) -> list[GpuRequest]:
    """The GPU requirements of a task's containers, in order (a container asks at most once)."""
    return [GpuRequest(i, name, req.get("value"), req.get("sharingStrategy")) for i, name, req in container_requirements(containers, "GPU")]


def value_or_share_problem(req: GpuRequest) -> str | None:
    """A GPU requirement gives `value` or `sharingStrategy`, never both, and one of them (ECS API
    reference, ResourceRequirement)."""
    if req.value is not None and req.sharing is not None:
        return f"container {req.container!r} gives a GPU value ({req.value}) and a sharingStrategy: ECS takes one of them"
    if req.value is None and req.sharing is None:
        return f"container {req.container!r} asks for GPUs with neither a value nor a sharingStrategy"
    return None


def value_problem(req: GpuRequest, ecs_facts: EcsFacts) -> str | None:
    """A GPU value is a count ECS takes: a whole number of GPUs, ALL, or a fractional value, which only
    G6f types provide (ECS API reference, ResourceRequirement; developer guide, "Specifying fractional
    GPUs"). Anything else (1.5, -1, "two") counts no physical GPUs, and places nowhere."""
    if req.value is None or req.sharing is not None or req.fraction is not None:
        return None  # no value; a share; a fraction (fraction_value_problem judges its value)
    text = str(req.value)
    if text == ALL or decimal(text) is not None:
        return None  # 0 reserves none: the API reference sets no lower bound
    values = ", ".join(ecs_facts.gpu_sharing.fractional_values)
    return f"container {req.container!r} asks for GPU value {text}: ECS takes a whole number of GPUs (1, 2, ...), {ALL}, or a G6f type's fraction ({values})"


def one_option_problem(requests: Sequence[GpuRequest]) -> str | None:
    """The containers of a task that request GPUs all use the same option (ECS API reference,
    ResourceRequirement.sharingStrategy); a fractional GPU is one container's alone (ECS developer
    guide, "Specifying fractional GPUs": no other container of the task may request a GPU)."""
    options = {r.option for r in requests}
    if len(options) > 1:
        uses = "; ".join(f"{r.container}: {r.option}" for r in requests)
        return f"the task's GPU containers mix {' and '.join(sorted(options))} ({uses}): ECS requires one option per task"
    if FRACTION in options and len(requests) > 1:
        return (
            f"{len(requests)} containers request GPUs ({', '.join(r.container for r in requests)}) and one asks for a fractional "
            "GPU: a fractional GPU is the only GPU request of its task"
        )
    return None


def compute_percent_problem(value: object) -> str | None:
    """maxComputePercent, when given, is an integer 1..100 (ECS API reference, NvidiaMpsAllocation)."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 100:
        return f"maxComputePercent {value!r} is not an integer from 1 to 100 (a limit on the GPU's compute, in percent)"
    return None


def mps_type_problem(it: InstanceType) -> str | None:
    """Can the type share its GPUs through MPS? An NVIDIA GPU, not a G6f fraction (MPS does not
    work there: facts.ecs.gpuSharing)."""
    if it.incomplete:
        return f"{it.name}: accelerator facts unknown ({it.incomplete})"
    if it.gpu is None:
        return f"{it.name} has no GPU to share"
    if it.gpu.fractional:
        return f"{it.name} has a fractional GPU: MPS sharing does not work on G6f; ask for its fraction ({it.gpu.partition_size:g}) as the GPU value"
    return None


def mps_memory_problem(it: InstanceType, requests: Sequence[GpuRequest]) -> str | None:
    """The MPS containers of one task share one GPU, which must hold all their memory (ECS API
    reference, NvidiaMpsAllocation.memory). The agent may report a little less than EC2's figure."""
    shared = [r for r in requests if r.option == SHARE]
    total = sum(r.mps_memory for r in shared)
    # mps_type_problem() is None only for a type with a GPU; `it.gpu is None` says so to the type checker.
    if not shared or mps_type_problem(it) is not None or it.gpu is None or total <= it.gpu.memory_mib:
        return None
    parts = " + ".join(f"{r.container} {r.mps_memory}" for r in shared)
    return f"the task's MPS containers share one GPU and ask {total} MiB ({parts}); one {it.gpu.model} of {it.name} has {it.gpu.memory_mib} MiB"


def fraction_value_problem(req: GpuRequest, ecs_facts: EcsFacts) -> str | None:
    """A fractional value is one ECS supports (facts.ecs.gpuSharing)."""
    values = ecs_facts.gpu_sharing.fractional_values
    if req.fraction is not None and str(req.value) not in values:
        return f"GPU value {req.value} is not a fractional value ECS supports ({', '.join(values)})"
    return None


def fraction_problem(it: InstanceType, req: GpuRequest, ecs_facts: EcsFacts) -> str | None:
    """A fractional value is one ECS supports, and the G6f type provides exactly that fraction
    (its EC2 GpuPartitionSize); fractional values place on G6f only (facts.ecs.gpuSharing)."""
    if req.fraction is None:
        return None
    reason = fraction_value_problem(req, ecs_facts)
    if reason:
        return reason
    if it.incomplete:
        return f"{it.name}: accelerator facts unknown ({it.incomplete})"
    if it.gpu is None or not it.gpu.fractional:
        return f"GPU value {req.value} asks for a fractional GPU, which only G6f types provide; {it.name} has {'whole GPUs' if it.gpu else 'no GPU'}"
    if req.fraction != it.gpu.partition_size:
        return f"{it.name} provides {it.gpu.partition_size:g} of a GPU; the container asks {req.value}"
    return None


def compatibility_problem(compatibilities: Sequence[str], requests: Sequence[GpuRequest], ecs_facts: EcsFacts) -> str | None:
    """MPS shares run on EC2 and Managed Instances, not on EXTERNAL (ECS API reference)."""
    refused = [c for c in compatibilities if c in ecs_facts.gpu_sharing.mps_unsupported_compatibilities]
    if refused and any(r.option == SHARE for r in requests):
        return f"the task shares GPUs through MPS but requires {', '.join(refused)} compatibility, which does not support GPU sharing"
    return None


def agent_problem(agent_version: str, ecs_facts: EcsFacts) -> str | None:
    """Does an ECS agent of this version run MPS tasks (the capability it advertises)?"""
    minimum = ecs_facts.gpu_sharing.mps_agent_minimum
    have, need = version_tuple(agent_version), version_tuple(minimum)
    if have is not None and need is not None and have < need:
        return (
            f"its AMI ships ECS agent {agent_version}; MPS shares need agent {minimum} or later "
            f"({ecs_facts.gpu_sharing.mps_capability}), so the tasks never place"
        )
    return None


def tasks_per_gpu(it: InstanceType, mps_memory: int) -> int:
    """How many tasks asking `mps_memory` MiB of one GPU ECS places on each GPU (it places by memory)."""
    if mps_memory <= 0 or it.gpu is None or it.gpu.fractional:
        return 0
    return it.gpu.memory_mib // mps_memory
