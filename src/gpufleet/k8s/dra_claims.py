"""What a workload on a DRA node group claims, as resource.k8s.io objects: one ResourceClaimTemplate
(a claim per pod) or one ResourceClaim (every pod shares it), and the pod's references to it.

The claim names the NVIDIA driver's DeviceClasses, which its chart installs (gpu.nvidia.com for whole
GPUs, mig.nvidia.com for MIG devices); a MIG profile is selected by the device's `profile` attribute,
in the subset of CEL the allocator simulation evaluates (docs/dra.md)."""

from __future__ import annotations

from dataclasses import dataclass

from gpufleet.catalog.facts import DraFacts
from gpufleet.k8s.args import ClaimedGpuWorkloadArgs
from gpufleet.platform.model import Violation

# The name of the claim inside the pod (spec.resourceClaims[].name, containers[].resources.claims[].name).
POD_CLAIM = "gpu"


@dataclass(frozen=True)
class Claim:
    """A workload's claim: its kind (ResourceClaimTemplate or ResourceClaim), name and spec."""

    kind: str
    name: str
    spec: dict

    def pod_reference(self) -> dict:
        """The pod's spec.resourceClaims entry for it."""
        key = "resourceClaimTemplateName" if self.kind == "ResourceClaimTemplate" else "resourceClaimName"
        return {"name": POD_CLAIM, key: self.name}


def device_request(wl: ClaimedGpuWorkloadArgs, facts: DraFacts) -> dict:
    """The one device request of the claim: `gpus` whole GPUs, or `gpus` MIG devices of the profile."""
    classes = facts.device_classes
    exactly: dict = {"deviceClassName": classes.mig if wl.mig_profile else classes.gpu, "allocationMode": "ExactCount", "count": wl.gpus}
    if wl.mig_profile:
        expression = f"device.attributes['{facts.driver}'].profile == '{wl.mig_profile}'"
        exactly["selectors"] = [{"cel": {"expression": expression}}]
    return {"name": POD_CLAIM, "exactly": exactly}


def workload_claim(wl: ClaimedGpuWorkloadArgs, facts: DraFacts) -> Claim:
    """The workload's claim: a template (a claim per pod) or, with sharedGpu, one claim all pods share."""
    devices = {"devices": {"requests": [device_request(wl, facts)]}}
    if wl.shared_gpu:
        return Claim("ResourceClaim", f"{wl.name}-shared-gpu", devices)
    return Claim("ResourceClaimTemplate", f"{wl.name}-gpu", {"spec": devices})


def claim_object(claim: Claim, facts: DraFacts) -> dict:
    """The claim as the API takes it (apiVersion, kind, metadata, spec)."""
    return {"apiVersion": facts.api.api_version, "kind": claim.kind, "metadata": {"name": claim.name}, "spec": claim.spec}


def claim_field(wl: ClaimedGpuWorkloadArgs) -> tuple[str, object] | None:
    """The field that makes the workload's request a DRA claim only (migProfile, else sharedGpu), with
    its value; None when it asks for whole GPUs, which the device plugin serves as well."""
    if wl.mig_profile:
        return "migProfile", wl.mig_profile
    if wl.shared_gpu:
        return "sharedGpu", wl.shared_gpu
    return None


def plugin_group_claim(i: int, field: str, value: object, group: str) -> Violation:
    """Workload `i` asks a claim (`field`) of `group` (e.g. "node pool l4"), whose GPUs the device plugin serves."""
    return Violation("dra-claims", ("workloads", i, field), value, f"{group} serves nvidia.com/gpu: claims need its allocation: dra")
