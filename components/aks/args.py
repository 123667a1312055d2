"""Typed inputs of an AKS GPU fleet: GPU node pools of an existing AKS cluster (VM sizes with their
GPUs, the MIG instance profile, the GPU driver), the NVIDIA device plugin when AKS installs the
driver, and workloads that request nvidia.com/gpu on them.

Rules that need the curated facts or several fields are in `checks.py` (over `aks_rules`, the
predicates the policy pack calls too).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gpufleet.components.catalog import catalog
from gpufleet.components.k8s.args import GpuOperatorArgs, GpuWorkloadArgs
from gpufleet.components.spec_model import SpecModel, rule_error

_AKS = catalog.load().facts.aks
Driver = Literal.__getitem__(tuple(_AKS.driver_installed_by))
MigProfile = Literal["MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"]

# AKS: a Linux node pool name starts with a lowercase letter, has lowercase letters and digits, 1 to 12.
AKS_POOL_NAME = r"^[a-z][a-z0-9]{0,11}$"


class AksAutoscalingArgs(SpecModel):
    """AKS's cluster autoscaler sizes the pool between these bounds."""

    min_count: int = Field(ge=0, description="Fewest nodes.")
    max_count: int = Field(ge=1, description="Most nodes.")

    @model_validator(mode="after")
    def _ordered(self) -> "AksAutoscalingArgs":
        if self.min_count > self.max_count:
            raise rule_error("size-order", f"minCount {self.min_count} is larger than maxCount {self.max_count}")
        return self


class AksNodePoolArgs(SpecModel):
    """A GPU node pool (mode User), tainted sku=gpu:NoSchedule as AKS's GPU page recommends, and
    labelled so the NVIDIA device plugin's default affinity selects its nodes."""

    name: str = Field(pattern=AKS_POOL_NAME, description="Node pool name (lowercase letters and digits, at most 12).")
    vm_size: str = Field(min_length=1, description="Azure VM size with NVIDIA GPUs, e.g. Standard_NC24ads_A100_v4.")
    zones: list[Literal["1", "2", "3"]] | None = Field(None, description="Availability zones of the pool; absent lets Azure place the nodes regionally.")
    driver: Driver = Field("Install", description="gpuProfile.driver: Install (AKS installs the driver) or None (no driver: only with the GPU Operator installing one).")
    mig_profile: MigProfile | None = Field(None, description="gpuInstanceProfile: the MIG partition of each GPU (A100, H100 sizes only); absent partitions nothing.")
    node_count: int | None = Field(None, ge=0, description="Fixed node count (absent with autoscaling).")
    autoscaling: AksAutoscalingArgs | None = Field(None, description="Autoscaling bounds (absent with nodeCount).")
    spot: bool = Field(False, description="Spot priority (evictable); absent runs regular VMs.")
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes labels on the nodes.")

    @model_validator(mode="after")
    def _one_size(self) -> "AksNodePoolArgs":
        if (self.node_count is None) == (self.autoscaling is None):
            raise rule_error("aks-pool-size", "give exactly one of nodeCount (a fixed pool) and autoscaling (minCount, maxCount)")
        return self


class AksKubernetesArgs(SpecModel):
    """How gpufleet reaches the cluster for the device plugin and workloads: a kubeconfig context
    (from `az aks get-credentials`), not a stored secret."""

    context: str = Field(min_length=1, description="The kubeconfig context of the cluster.")


class AksFleetArgs(SpecModel):
    """GPU node pools in an existing AKS cluster, and what runs on them."""

    cluster_id: str = Field(
        pattern=r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ContainerService/managedClusters/[^/]+$",
        description="Azure resource ID of the existing AKS cluster.",
    )
    node_pools: list[AksNodePoolArgs] = Field(min_length=1, description="GPU node pools.")
    kubernetes: AksKubernetesArgs | None = Field(None, description="Cluster access for the device plugin and workloads; absent installs nothing in the cluster.")
    gpu_operator: GpuOperatorArgs | None = Field(
        None, description="Install the NVIDIA GPU Operator (its device plugin replaces the standalone one); absent uses AKS's driver and gpufleet's device plugin."
    )
    workloads: list[GpuWorkloadArgs] = Field(default_factory=list, description="GPU workloads.")
