"""Typed inputs of an AKS GPU fleet: GPU node pools of an existing AKS cluster (VM sizes with their
GPUs, the MIG instance profile, the GPU driver), the NVIDIA device plugin when AKS installs the
driver, and workloads that request nvidia.com/gpu on them.

Rules that need the curated facts or several fields are in `checks.py` (over `aks_rules`, the
predicates the policy pack calls too).
"""

from __future__ import annotations

from typing import Annotated, Literal, cast

from pydantic import Field, model_validator

from gpufleet.k8s.args import GpuOperatorArgs, GpuWorkloadArgs
from gpufleet.platform.model import CatalogChoice, SpecModel, rule_error

Driver = Annotated[str, CatalogChoice(lambda cat: cat.facts.aks.driver_installed_by)]
MigProfile = Literal["MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"]

# AKS: a Linux node pool name starts with a lowercase letter, has lowercase letters and digits, 1 to 12.
AKS_POOL_NAME = r"^[a-z][a-z0-9]{0,11}$"


class AksAutoscalingArgs(SpecModel):
    """AKS's cluster autoscaler sizes the pool between these bounds."""

    min_count: int = Field(ge=0, description="Fewest nodes.")
    max_count: int = Field(ge=1, description="Most nodes.")

    @model_validator(mode="after")
    def _ordered(self) -> AksAutoscalingArgs:
        if self.min_count > self.max_count:
            raise rule_error("size-order", f"minCount {self.min_count} is larger than maxCount {self.max_count}")
        return self


class AksNodePoolArgs(SpecModel):
    """A GPU node pool (mode User), tainted sku=gpu:NoSchedule as AKS's GPU page recommends, and
    labelled so the NVIDIA device plugin's default affinity selects its nodes."""

    name: str = Field(pattern=AKS_POOL_NAME, description="Node pool name (lowercase letters and digits, at most 12).")
    vm_size: str = Field(min_length=1, description="Azure VM size with NVIDIA GPUs, e.g. Standard_NC24ads_A100_v4.")
    zones: list[Literal["1", "2", "3"]] | None = Field(
        None, description="Availability zones of the pool; absent lets Azure place the nodes regionally."
    )
    driver: Driver = Field(
        "Install",
        description="gpuProfile.driver: Install (AKS installs the driver) or None (no driver: only with the GPU Operator installing one).",
    )
    mig_profile: MigProfile | None = Field(
        None, description="gpuInstanceProfile: the MIG partition of each GPU (A100, H100 sizes only); absent partitions nothing."
    )
    node_count: int | None = Field(None, ge=0, description="Fixed node count (absent with autoscaling).")
    autoscaling: AksAutoscalingArgs | None = Field(None, description="Autoscaling bounds (absent with nodeCount).")
    spot: bool = Field(False, description="Spot priority (evictable); absent runs regular VMs.")
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes labels on the nodes.")
    allocation: Literal["device-plugin", "dra"] = Field(
        "device-plugin",
        description="How pods get the pool's GPUs: the device plugin's nvidia.com/gpu. dra is refused on AKS until AKS "
        "documents Dynamic Resource Allocation for GPU pools (its managed NVIDIA DRA driver is in development).",
    )

    @model_validator(mode="after")
    def _one_size(self) -> AksNodePoolArgs:
        if (self.node_count is None) == (self.autoscaling is None):
            raise rule_error("aks-pool-size", "give exactly one of nodeCount (a fixed pool) and autoscaling (minCount, maxCount)")
        return self


class AksKubernetesArgs(SpecModel):
    """How gpufleet reaches an existing cluster for the device plugin and workloads: a kubeconfig
    context (from `az aks get-credentials`), not a stored secret. A cluster gpufleet creates is
    reached through its own kubeconfig output (a secret)."""

    context: str = Field(min_length=1, description="The kubeconfig context of the cluster.")


class AksSystemPoolArgs(SpecModel):
    """The default (system) node pool of a cluster gpufleet creates: CoreDNS, the metrics server and
    operators such as the GPU Operator's run here, off the tainted GPU pools."""

    vm_size: str = Field("Standard_D4s_v5", min_length=1, description="VM size of the system nodes.")
    node_count: int = Field(2, ge=1, description="System nodes (two keep CoreDNS on two nodes).")


class AksClusterCreateArgs(SpecModel):
    """An AKS cluster gpufleet creates, in an existing resource group, with a system-assigned identity."""

    name: str = Field(pattern=r"^[a-zA-Z0-9]([-_a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$", description="Cluster name (also its DNS prefix).")
    subscription_id: str = Field(pattern=r"^[0-9a-fA-F-]{36}$", description="Azure subscription the cluster goes in.")
    resource_group_name: str = Field(min_length=1, description="The existing resource group the cluster goes in.")
    location: str = Field(pattern=r"^[a-z]+[a-z0-9]*$", description="Azure region, e.g. eastus.")
    kubernetes_version: str | None = Field(None, pattern=r"^1\.\d+(\.\d+)?$", description="Kubernetes version; absent lets AKS choose.")
    system_pool: AksSystemPoolArgs = Field(default_factory=AksSystemPoolArgs, description="The system node pool.")


class AksFleetArgs(SpecModel):
    """GPU node pools in a new or existing AKS cluster, and what runs on them."""

    cluster_id: str | None = Field(
        None,
        pattern=r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ContainerService/managedClusters/[^/]+$",
        description="Azure resource ID of an existing AKS cluster (absent with createCluster).",
    )
    create_cluster: AksClusterCreateArgs | None = Field(None, description="Create the cluster (absent with clusterId).")
    location: str | None = Field(
        None,
        pattern=r"^[a-z]+[a-z0-9]*$",
        description="Azure region of the existing cluster (clusterId), e.g. eastus: the pools' prices are its region's; absent leaves them unknown. A created cluster gives createCluster.location instead.",
    )
    node_pools: list[AksNodePoolArgs] = Field(min_length=1, description="GPU node pools.")
    kubernetes: AksKubernetesArgs | None = Field(
        None,
        description="Access to an existing cluster for the device plugin and workloads; absent installs nothing there (a created cluster needs none).",
    )
    gpu_operator: GpuOperatorArgs | None = Field(
        None,
        description="Install the NVIDIA GPU Operator (its device plugin replaces the standalone one); absent uses AKS's driver and gpufleet's device plugin.",
    )

    @model_validator(mode="after")
    def _one_cluster(self) -> AksFleetArgs:
        if (self.cluster_id is None) == (self.create_cluster is None):
            raise rule_error("aks-cluster", "give exactly one of clusterId (an existing cluster) and createCluster")
        if self.location is not None and self.create_cluster is not None:
            raise rule_error(
                "aks-location",
                f"location {self.location!r} is for an existing cluster: a created cluster's region is createCluster.location",
            )
        return self

    @property
    def region(self) -> str | None:
        """The cluster's Azure region, where known (it prices the pools)."""
        return self.create_cluster.location if self.create_cluster is not None else self.location

    @property
    def subscription_id(self) -> str:
        """The subscription of the cluster: named in its resource ID, or given to create it."""
        # Without createCluster, clusterId is given (_one_cluster).
        return self.create_cluster.subscription_id if self.create_cluster is not None else cast(str, self.cluster_id).split("/")[2]

    workloads: list[GpuWorkloadArgs] = Field(default_factory=list, description="GPU workloads.")
