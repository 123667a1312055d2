"""Rules on Dynamic Resource Allocation: plain functions over what the placement found, called by
the pack (src/gpufleet/policies/dra.py) on any program's plan and by the stack spec on gpufleet's own;
and what a DRA install needs (the API version against the cluster's, one allocator per GPU, MIG
profile names, where DRA may run, a ComputeDomain for P6e-GB200), called by both as well.

Each returns None when the rule holds, else a Verdict: the problem in words, and whether the plan
decides it (mandatory) or a gap it names leaves it open (advisory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import DraFacts

# kube-scheduler's DynamicResources plugin: its Filter's words, and its PreFilter's for a class
# the cluster lacks (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, read
# in the research for issue 57 §3: statusUnschedulable "cannot allocate all claims", "resourceclaim
# not available on the node", "request %s: device class %s does not exist").
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
NO_CLASS = "device class {cls} does not exist"
_WORDS = (CANNOT_ALLOCATE, NOT_AVAILABLE, NO_CLASS.split("{cls}")[-1])


@dataclass(frozen=True)
class Verdict:
    message: str
    mandatory: bool


def claims_unsatisfied(owner: str, has_claims: bool, pending: int, message: str, unknowns: Sequence[str]) -> Verdict | None:
    """A pod whose resourceClaims no node of the plan satisfies: Pending in the DynamicResources
    plugin's words. Mandatory only where nothing is unknown (`unknowns`: the plan's gaps and the
    pod's notes, such as a Karpenter or Auto Mode pool that could launch a node for it, or a
    device whose attributes only the node gives); else advisory, naming them."""
    if not has_claims or not pending or not any(w in message for w in _WORDS):
        return None
    said = f"{owner}: {pending} pod(s) stay Pending: a resource claim no node of the plan satisfies: {message}"
    if unknowns:
        return Verdict(f"{said}; not certain: {'; '.join(unknowns)}", False)
    return Verdict(said, True)


# DRA on Karpenter and on EKS Auto Mode is versioned. The newest EKS user guide (device-management.html:
# "DRA is supported with EKS Auto Mode, Karpenter ... EKS Auto Mode: ... Requires Kubernetes version 1.36
# or later. Karpenter: ... as of Karpenter version 1.15. Dynamic provisioning requires enabling Karpenter
# feature gates") lifts the refusal that older texts make (kubernetes-sigs/karpenter#1231, open; the EKS
# P6e-GB200 page ml-eks-nvidia-ultraserver: "Karpenter or EKS Auto Mode do not support DRA; use EKS
# self-managed or managed node groups"). Karpenter's own page (karpenter.sh/docs/tasks/dra/) calls it
# alpha, behind settings.enableDRA.
KARPENTER_DRA_SINCE = (1, 15)
AUTO_MODE_DRA_SINCE = (1, 36)
PROVISIONER_SOURCE = (
    "docs.aws.amazon.com/eks/latest/userguide/device-management.html (Karpenter >= 1.15 with feature gates, "
    "Auto Mode on Kubernetes >= 1.36); kubernetes-sigs/karpenter#1231 and the EKS P6e-GB200 page "
    "(docs.aws.amazon.com/eks/latest/userguide/ml-eks-nvidia-ultraserver.html) for earlier versions"
)
# P6e-GB200 GPUs reach each other across nodes (multi-node NVLink through IMEX) only through a DRA
# ComputeDomain: "Using P6e-GB200 with EKS requires DRA" (EKS user guide, ml-eks-nvidia-ultraserver.html).
GB200_FAMILY = "p6e-gb200"
GB200_SOURCE = "docs.aws.amazon.com/eks/latest/userguide/ml-eks-nvidia-ultraserver.html (P6e-GB200 with EKS requires DRA ComputeDomains)"


def version_tuple(version: str) -> tuple[int, ...]:
    """'1.34' or 'v1.34.2' as (1, 34[, 2]); a part that is not a number ends it ('1.35-eks' is (1, 35))."""
    parts: list[int] = []
    for part in version.lstrip("v").split("."):
        digits = part.split("-")[0]
        if not digits.isdigit():
            break
        parts.append(int(digits))
    return tuple(parts)


def api_version_problem(api_version: str, kubernetes_version: str | None, facts: DraFacts) -> str | None:
    """Does a cluster of `kubernetes_version` serve the DRA API version `api_version`? None: it does.
    An unknown cluster version is a problem: gpufleet never guesses it."""
    api = facts.api
    if kubernetes_version is None:
        return f"the cluster's Kubernetes version is not known, and {api_version} needs {api.min_kubernetes} or later ({api.source})"
    if api_version == api.api_version and version_tuple(kubernetes_version)[:2] < version_tuple(api.min_kubernetes):
        return f"Kubernetes {kubernetes_version} does not serve {api_version}: it needs {api.min_kubernetes} or later ({api.source})"
    return None


def two_allocators_problem(device_plugin: bool, dra_driver: bool, facts: DraFacts) -> str | None:
    """Do both the NVIDIA device plugin and the DRA driver serve GPUs on one node group?"""
    if device_plugin and dra_driver:
        off = facts.device_plugin_off
        return (
            f"both the NVIDIA device plugin and the DRA driver would allocate its GPUs; keep the plugin off the DRA nodes "
            f"(label {off.key}={off.value}: {off.source}); kubernetes-sigs/dra-driver-nvidia-gpu @v0.4.1 "
            "templates/validation.yaml L33-L43: the driver 'cannot be deployed alongside the standard GPU device plugin "
            "on the same node'"
        )
    return None


def mig_profile_problem(it: InstanceType, profile: str, facts: DraFacts) -> str | None:
    """Is `profile` a MIG profile name of the type's GPU (exactly as NVIDIA names it)?"""
    if it.gpu is None:
        return f"{it.name} has no GPU"
    key = f"{it.gpu.model}-{it.gpu.memory_mib}"
    profiles = facts.mig_profiles.get(key)
    if profiles is None:
        known = ", ".join(facts.mig_profiles)
        return f"gpufleet has no MIG profiles for {it.name}'s {it.gpu.model} ({it.gpu.memory_mib} MiB) (it has: {known})"
    if profile not in profiles:
        return f"{profile} is not a MIG profile of {it.gpu.model} ({it.gpu.memory_mib} MiB): {', '.join(profiles)} ({facts.mig_profiles_source})"
    return None


def provisioner_problem(provisioner: str, version: str | None) -> str | None:
    """May DRA claims be served on nodes that Karpenter (`version`: its chart's) or EKS Auto Mode
    (`version`: the cluster's Kubernetes) launches? An unknown version is refused."""
    since = {"karpenter": KARPENTER_DRA_SINCE, "auto-mode": AUTO_MODE_DRA_SINCE}[provisioner]
    named = {"karpenter": "Karpenter", "auto-mode": "EKS Auto Mode on Kubernetes"}[provisioner]
    wanted = ".".join(str(p) for p in since)
    if version is None or version_tuple(version)[:2] < since:
        return f"{named} {version or '(version unknown)'} does not provision nodes for DRA claims ({named} {wanted} or later does; {PROVISIONER_SOURCE}); use a managed node group"
    return None


def compute_domain_problem(instance_type: str, has_compute_domain: bool) -> str | None:
    """Does a workload on a P6e-GB200 UltraServer type lack the ComputeDomain its GPUs need?"""
    if instance_type.split(".")[0] == GB200_FAMILY and not has_compute_domain:
        return f"a workload on {instance_type} needs a DRA ComputeDomain (resource.nvidia.com/v1beta1) for its GPUs ({GB200_SOURCE})"
    return None
