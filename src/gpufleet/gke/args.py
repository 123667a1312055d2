"""Typed inputs of a GKE GPU fleet: GPU node pools of a new or existing GKE cluster (guest
accelerators with the driver choice, multi-instance GPU partitions or GPU sharing) and workloads
that request nvidia.com/gpu on them.

Rules that need the curated facts or several fields are in `checks.py` (over `gke_rules`, the
predicates the policy pack calls too).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from gpufleet.k8s.args import ClaimedGpuWorkloadArgs, GpuOperatorArgs
from gpufleet.platform.model import CatalogChoice, SpecModel, rule_error

Driver = Annotated[str, CatalogChoice(lambda cat: cat.facts.gke.driver_installed_by)]
SharingStrategy = Annotated[str, CatalogChoice(lambda cat: cat.facts.gke.sharing_strategies)]

GCP_REGION = r"^[a-z]+-[a-z]+[0-9]+$"
# GKE: a cluster or node pool name starts with a letter, has lowercase letters, digits and hyphens,
# at most 40 characters.
GKE_NAME = r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$"


class GkeAcceleratorArgs(SpecModel):
    """The node's GPUs. A2, A3, A4 and G2 machine types come with theirs (give nothing, or the same
    type and count); N1 machine types take T4, V100 or P4 GPUs attached."""

    type: str | None = Field(
        None, min_length=1, description="Accelerator type, e.g. nvidia-tesla-t4 (required for N1; implied by A2/A3/A4/G2 types)."
    )
    count: int | None = Field(None, ge=1, description="GPUs per node (required for N1; implied by A2/A3/A4/G2 types).")


class GpuSharingArgs(SpecModel):
    """GKE GPU sharing: each physical GPU (or MIG partition) is advertised to that many containers."""

    strategy: SharingStrategy = Field(description="TIME_SHARING (time slices) or MPS (NVIDIA Multi-Process Service).")
    max_shared_clients_per_gpu: int = Field(ge=1, description="Containers that share one GPU (or one partition).")


class NodeAutoscalingArgs(SpecModel):
    """GKE's cluster autoscaler sizes the pool between these bounds, per zone of the pool."""

    min_node_count: int = Field(ge=0, description="Fewest nodes per zone.")
    max_node_count: int = Field(ge=1, description="Most nodes per zone.")

    @model_validator(mode="after")
    def _ordered(self) -> NodeAutoscalingArgs:
        if self.min_node_count > self.max_node_count:
            raise rule_error("size-order", f"minNodeCount {self.min_node_count} is larger than maxNodeCount {self.max_node_count}")
        return self


class GkeNodePoolArgs(SpecModel):
    """A GPU node pool. GKE taints its GPU nodes nvidia.com/gpu=present:NoSchedule when the cluster
    has other pools (003), and labels them with the accelerator, the partition size and the sharing
    settings, which the fleet's workloads tolerate and select."""

    name: str = Field(pattern=GKE_NAME, description="Node pool name.")
    machine_type: str = Field(min_length=1, description="Compute Engine machine type, e.g. a2-highgpu-1g, g2-standard-8, n1-standard-8.")
    accelerator: GkeAcceleratorArgs = Field(
        default_factory=GkeAcceleratorArgs, description="The node's GPUs (implied by A2/A3/A4/G2 machine types)."
    )
    zones: list[str] = Field(
        min_length=1, description="Zones of the cluster's region the nodes run in (nodeLocations); each must offer the machine type."
    )
    driver: Driver = Field(
        "DEFAULT",
        description="gpuDriverInstallationConfig.gpuDriverVersion: GKE installs its chosen or its latest driver, or "
        "INSTALLATION_DISABLED installs none (only with the GPU Operator installing one).",
    )
    partition_size: str | None = Field(
        None,
        min_length=1,
        description="Multi-instance GPU partition size, e.g. 1g.5gb (A100, H100, H200, B200 only); absent partitions nothing.",
    )
    sharing: GpuSharingArgs | None = Field(
        None, description="GPU sharing (time-sharing or MPS); absent gives each container whole GPUs or partitions."
    )
    node_count: int | None = Field(None, ge=0, description="Fixed nodes per zone (absent with autoscaling).")
    autoscaling: NodeAutoscalingArgs | None = Field(None, description="Autoscaling bounds per zone (absent with nodeCount).")
    spot: bool = Field(False, description="Spot VMs (preemptible at any time); absent runs on-demand.")
    labels: dict[str, str] = Field(default_factory=dict, description="Extra Kubernetes labels on the nodes.")
    allocation: Literal["device-plugin", "dra"] = Field(
        "device-plugin",
        description="How pods get the pool's GPUs: GKE's device plugin's nvidia.com/gpu, or dra: as GKE's DRA guide "
        "sets a pool up (driver INSTALLATION_DISABLED, GKE's device plugin off by label), gpufleet installs GKE's "
        "NVIDIA driver installer and the NVIDIA DRA driver, and workloads claim the GPUs through ResourceClaims "
        "(needs cluster.create.version 1.34 or later; no partitionSize or sharing).",
    )

    @model_validator(mode="after")
    def _one_size(self) -> GkeNodePoolArgs:
        if (self.node_count is None) == (self.autoscaling is None):
            raise rule_error("gke-pool-size", "give exactly one of nodeCount (a fixed pool) and autoscaling (minNodeCount, maxNodeCount)")
        return self


class SystemPoolArgs(SpecModel):
    """The non-GPU pool of a cluster gpufleet creates: CoreDNS and the controllers run here, and its
    presence is what makes GKE taint the GPU nodes."""

    machine_type: str = Field("e2-standard-4", min_length=1, description="Machine type of the system nodes.")
    node_count: int = Field(1, ge=1, description="Nodes per zone of the region.")


class GkeClusterCreateArgs(SpecModel):
    """A regional GKE Standard cluster gpufleet creates, with its default pool removed and a system pool."""

    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = Field("REGULAR", description="GKE release channel.")
    version: str | None = Field(
        None,
        pattern=r"^1\.\d{2}$",
        description="Kubernetes minor version the control plane runs at least (minMasterVersion, e.g. 1.35; GKE "
        "upgrades it within the release channel); absent lets the channel choose, which gpufleet cannot judge.",
    )
    network: str = Field("default", min_length=1, description="VPC network name.")
    subnetwork: str | None = Field(None, min_length=1, description="Subnetwork name; absent uses the network's subnetwork of the region.")
    deletion_protection: bool = Field(True, description="Refuse to delete the cluster until this is set false.")
    system_pool: SystemPoolArgs = Field(default_factory=SystemPoolArgs, description="The system node pool.")


class GkeClusterArgs(SpecModel):
    """The cluster: created (with `create`) or an existing one joined by name."""

    name: str = Field(pattern=GKE_NAME, description="Cluster name.")
    create: GkeClusterCreateArgs | None = Field(
        None, description="Create the cluster; absent joins an existing cluster of this name in the region."
    )


class GkeKubernetesArgs(SpecModel):
    """How gpufleet reaches an existing cluster for the workloads: a kubeconfig context (from
    `gcloud container clusters get-credentials`), not a stored secret. A cluster gpufleet creates is
    reached through its own outputs."""

    context: str | None = Field(None, min_length=1, description="Kubeconfig context of an existing cluster; absent for a created cluster.")


class GkeFleetArgs(SpecModel):
    """GPU node pools in a new or existing GKE cluster, and the workloads that use them."""

    project: str = Field(pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$", description="Google Cloud project ID.")
    region: str = Field(pattern=GCP_REGION, description="Region of the (regional) cluster, e.g. us-central1.")
    cluster: GkeClusterArgs = Field(description="The cluster: created, or existing.")
    node_pools: list[GkeNodePoolArgs] = Field(min_length=1, description="GPU node pools.")
    kubernetes: GkeKubernetesArgs | None = Field(
        None, description="Cluster access for the workloads; absent installs nothing in the cluster."
    )
    workloads: list[ClaimedGpuWorkloadArgs] = Field(default_factory=list, description="GPU workloads.")
    gpu_operator: GpuOperatorArgs | None = Field(
        None,
        description="Install the NVIDIA GPU Operator instead of GKE's device plugin (and driver, when its driver is on); absent uses GKE's GPU stack.",
    )
