"""Rules on Dynamic Resource Allocation: plain functions over what the placement found, called by
the pack (src/gpufleet/policies/dra.py) on any program's plan and by the stack spec on gpufleet's own;
and what a DRA install needs (the API version against the cluster's, one allocator per GPU, MIG
profile names, where DRA may run, a ComputeDomain for P6e-GB200), called by both as well.

Each returns None when the rule holds, else a Verdict: the problem in words, and whether the plan
decides it (mandatory) or a gap it names leaves it open (advisory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from gpufleet.catalog.catalog import InstanceType
from gpufleet.catalog.facts import DraFacts
from gpufleet.rules.versions import version_tuple

# kube-scheduler's DynamicResources plugin: its Filter's words, and its PreFilter's for a class
# the cluster lacks (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, read
# in the research for issue 57 §3: statusUnschedulable "cannot allocate all claims", "resourceclaim
# not available on the node", "request %s: device class %s does not exist").
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
NO_CLASS = "device class {cls} does not exist"


@dataclass(frozen=True)
class Verdict:
    message: str
    mandatory: bool


def claims_unsatisfied(
    owner: str, claims_refused: bool, pending: int, message: str, certain: bool, unknowns: Sequence[str]
) -> Verdict | None:
    """A pod whose resourceClaims no node of the plan satisfies (`claims_refused`: the placement left
    it Pending for them): Pending in the DynamicResources plugin's words. Mandatory only where the
    placement is `certain` of it; else advisory, naming the `unknowns` (the plan's gaps and the pod's
    notes, such as a Karpenter or Auto Mode pool that could launch a node for it, or a device whose
    attributes only the node gives)."""
    if not claims_refused or not pending:
        return None
    said = f"{owner}: {pending} pod(s) stay Pending: a resource claim no node of the plan satisfies: {message}"
    if not certain:
        return Verdict(f"{said}; not certain: {'; '.join(unknowns)}", False)
    return Verdict(said, True)


def api_version_problem(api_version: str, kubernetes_version: str | None, facts: DraFacts) -> str | None:
    """Does a cluster of `kubernetes_version` serve the DRA API version `api_version`? None: it does.
    An unknown cluster version is a problem: gpufleet never guesses it."""
    api = facts.api
    if kubernetes_version is None:
        return f"the cluster's Kubernetes version is not known, and {api_version} needs {api.min_kubernetes} or later ({api.source})"
    have = version_tuple(kubernetes_version)
    if have is None:
        return f"the cluster's Kubernetes version {kubernetes_version!r} is not a version gpufleet reads, and {api_version} needs {api.min_kubernetes} or later ({api.source})"
    if api_version == api.api_version and have[:2] < (version_tuple(api.min_kubernetes) or ()):
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


def provisioner_problem(provisioner: Literal["karpenter", "auto-mode"], version: str | None, facts: DraFacts) -> Verdict | None:
    """May DRA claims be served on nodes that Karpenter (`version`: its chart's) or EKS Auto Mode
    (`version`: the cluster's Kubernetes) launches? Mandatory where the known version does not; an
    unknown version cannot be judged, and the verdict says so (advisory). None: it does."""
    rule = facts.provisioners[provisioner]
    have = version_tuple(version)
    if have is None:
        return Verdict(
            f"gpufleet cannot judge whether {rule.named} {version or '(version not known)'} provisions nodes for DRA claims: "
            f"{rule.named} {rule.since} or later does ({rule.source}); use a managed node group",
            False,
        )
    if have[:2] < (version_tuple(rule.since) or ()):
        return Verdict(
            f"{rule.named} {version} does not provision nodes for DRA claims ({rule.named} {rule.since} or later does; {rule.source}); use a managed node group",
            True,
        )
    return None


def compute_domain_problem(instance_type: str, has_compute_domain: bool, facts: DraFacts) -> str | None:
    """Does a workload on a P6e-GB200 UltraServer type lack the ComputeDomain its GPUs need?"""
    families = facts.compute_domain_families
    if instance_type.split(".")[0] in families.values and not has_compute_domain:
        return f"a workload on {instance_type} needs a DRA ComputeDomain (resource.nvidia.com/v1beta1) for its GPUs ({families.source})"
    return None
