"""AKS GPU node pool rules over the curated AKS facts: which GPUs a VM size carries, the MIG instance
profiles of its GPU, and the driver. The stack spec's checks and the policy pack both call these.

A rule returns None when the request is fine, else the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.catalog.facts import AksFacts
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import k8s as k8s_rules


@dataclass(frozen=True)
class AksGpus:
    """The GPUs one node of a VM size carries."""

    vm_size: str
    gpu: str  # the curated GPU key, e.g. a100-80gb
    count: int


def gpus(vm_size: str, aks: AksFacts) -> AksGpus | str:
    """The node's GPUs, or why the size is refused."""
    size = aks.vm_sizes.get(vm_size)
    if size is None:
        return f"not a GPU VM size of the curated table ({aks.vm_sizes_source}); an unknown size is refused, not guessed"
    return AksGpus(vm_size, size.gpu, size.count)


def mig_problem(node: AksGpus, profile: str, aks: AksFacts) -> str | None:
    """Is the GPU instance profile one the size's GPU supports?"""
    mig_models = (aks.gpus[g].model for g in aks.mig_profiles)
    gpu = f"{node.vm_size}'s {aks.gpus[node.gpu].model}"
    return gpu_rules.mig_size_problem(profile, aks.mig_profiles.get(node.gpu), gpu, mig_models, "GPU instance profile", aks.mig_source)


def driver_problem(driver: str, operator_installs_driver: bool, aks: AksFacts) -> str | None:
    """Exactly one driver per node: AKS's (Install) or the GPU Operator's."""
    return k8s_rules.one_driver_problem(
        "AKS" if aks.driver_installed_by.get(driver) == "aks" else None, f"driver {driver}", operator_installs_driver
    )


def time_sharing_problem(aks: AksFacts) -> str | None:
    """GPU time-sharing on AKS nodes, which AKS does not support."""
    if aks.time_sharing.supported:
        return None
    return f"AKS does not support GPU time-sharing ({aks.time_sharing.source}); use MIG instance profiles (migProfile) to share a GPU"


def gpu_resources_per_node(node: AksGpus, profile: str | None, aks: AksFacts) -> int:
    """How many nvidia.com/gpu one node advertises: a GPU per MIG instance (the device plugin's
    single strategy) or per GPU."""
    return node.count * (aks.mig_profiles[node.gpu][profile] if profile else 1)


def parse_taint(text: str) -> dict | None:
    """AKS spells a node pool taint key=value:Effect."""
    head, _, effect = text.rpartition(":")
    key, _, value = head.partition("=")
    return {"key": key, "value": value, "effect": effect} if key and effect else None


def dra_problem(allocation: str, aks: AksFacts) -> str | None:
    """DRA asked of an AKS GPU pool, which AKS does not document yet."""
    if allocation != "dra":
        return None
    return f"{aks.dra.value} ({aks.dra.source})"
