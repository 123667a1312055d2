"""Typed inputs of an EKS fleet: one model serves the stack spec, the components and the schema.

Rules that need the catalog or several fields are in `checks.py`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s.args import ClaimedGpuWorkloadArgs, KubernetesArgs
from gpufleet.karpenter.args import KarpenterArgs, NodePoolArgs
from gpufleet.network.args import NetworkArgs
from gpufleet.platform.model import CatalogChoice, SpecModel, rule_error, size_order_error

AmiType = Annotated[str, CatalogChoice(lambda cat: cat.facts.eks.accelerated_ami_types)]


def _both_spellings(cat: Catalog) -> list[str]:
    effects = cat.facts.eks.taint_effects.by_kubernetes_name()
    return [*effects, *effects.values()]


# Both spellings are accepted and converted to the EKS API's enum; the Kubernetes one is never passed through.
TaintEffect = Annotated[str, CatalogChoice(_both_spellings)]

EKS_NAME = r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$"  # CreateCluster / CreateNodegroup name rule


def _every_built_in_pool() -> list[Literal["general-purpose", "system"]]:
    return ["general-purpose", "system"]


class AutoModeArgs(SpecModel):
    """EKS Auto Mode: EKS runs Karpenter, the nodes' drivers and the NVIDIA, Neuron and EFA device
    plugins; its compute, block storage and load balancing are turned on together."""

    built_in_node_pools: list[Literal["general-purpose", "system"]] = Field(
        default_factory=_every_built_in_pool,
        description="Auto Mode's own NodePools: general-purpose (on-demand C, M, R nodes for ordinary pods) and "
        "system (tainted CriticalAddonsOnly); an empty list leaves only the stack's nodePools.",
    )


class NewClusterArgs(SpecModel):
    """An EKS cluster to create: its IAM role, API authentication and a pinned Kubernetes version."""

    version: str = Field(pattern=r"^1\.\d{2}$", description="Kubernetes version, pinned (e.g. 1.33); upgrades are explicit.")
    authentication_mode: Literal["API", "API_AND_CONFIG_MAP"] = Field(
        "API", description="How the cluster authenticates IAM principals: access entries only (API), or also the aws-auth ConfigMap."
    )
    auto_mode: AutoModeArgs | None = Field(
        None,
        description="Turn on EKS Auto Mode: nodePools then use its NodeClass, and gpufleet installs no Karpenter, system group or device plugin.",
    )
    endpoint_public_access: bool = Field(
        False,
        description="Expose the Kubernetes API endpoint publicly (the private endpoint is always on); the "
        "machine that runs `pulumi up` must reach the endpoint for the Kubernetes resources.",
    )


class ClusterArgs(SpecModel):
    """The EKS cluster the node groups join: an existing one (by name) or one to create."""

    name: str = Field(pattern=EKS_NAME, description="Cluster name.")
    create: NewClusterArgs | None = Field(None, description="Create the cluster; absent joins an existing cluster of that name.")
    security_group_id: str | None = Field(
        None,
        pattern=r"^sg-[0-9a-f]{8,17}$",
        description="The existing cluster's security group (nodes with their own interfaces must carry it to "
        "reach the control plane); only with an existing cluster.",
    )

    @model_validator(mode="after")
    def _existing_needs_its_group(self) -> ClusterArgs:
        if self.create is None and self.security_group_id is None:
            raise rule_error("eks-cluster-security-group", "an existing cluster needs securityGroupId (its cluster security group)")
        if self.create is not None and self.security_group_id is not None:
            raise rule_error("eks-cluster-security-group", "securityGroupId is for an existing cluster; a new cluster has its own")
        return self


class TaintArgs(SpecModel):
    """A Kubernetes taint on every node of the group."""

    # Lengths are the EKS API model's (botocore's Taint shape: src/gpufleet/eks/checks.py), not typed here.
    key: str = Field(description="Taint key, e.g. nvidia.com/gpu; its length is checked against the EKS API model (Taint.key).")
    value: str | None = Field(
        None, description="Taint value; absent for key-only taints; its length is checked against the EKS API model (Taint.value)."
    )
    effect: TaintEffect = Field(
        description="NoSchedule, NoExecute or PreferNoSchedule (or the EKS API spelling NO_SCHEDULE ...); "
        "written in the EKS API's spelling."
    )


class EfaArgs(SpecModel):
    """Elastic Fabric Adapter interfaces, laid out from the instance type's network cards."""

    layout: Literal["recommended", "efa-primary"] | None = Field(
        None,
        description="recommended (AWS's current guidance: an ENA primary, efa-only on card 0 at device index 1 "
        "and at device index 0 on every further card; efa-only needs VPC CNI 1.18.5+), or efa-primary (efa on "
        "card 0, one interface per further card at device index 1). Absent: recommended, unless the type's "
        "card 0 takes one interface only and the layout cannot reach the count.",
    )
    secondary_interface_type: Literal["efa", "efa-only"] = Field(
        "efa",
        description="With the efa-primary layout, the type of the interfaces after the primary: efa, or "
        "efa-only (no IP address used). The primary is never efa-only.",
    )
    availability_zone: str | None = Field(
        None,
        description="The one zone of the group (EFA traffic stays in one AZ): with existing subnets, the zone "
        "of `subnetIds`; with a created VPC, the first VPC zone that offers the type when absent.",
    )
    interfaces: int | None = Field(
        None,
        ge=1,
        description="EFA interfaces to lay out, at most the type's MaximumEfaInterfaces (fewer leave bandwidth "
        "unused); absent takes them all.",
    )
    placement_group: bool = Field(
        True,
        description="Launch into a new cluster placement group; ignored with a capacity reservation or block, "
        "which carries its own placement.",
    )


class NodeRepairArgs(SpecModel):
    """EKS node auto repair of a managed node group: nodes the node monitoring agent reports unhealthy
    (a GPU XID, a DCGM or Neuron fault: AcceleratedHardwareReady) are rebooted or replaced."""

    enabled: bool = Field(
        True,
        description="Repair the group's unhealthy nodes (EKS leaves repair off unless asked); a node that lost a GPU "
        "otherwise stays in the group until someone replaces it.",
    )
    max_unhealthy_node_threshold_percentage: int | None = Field(
        None,
        ge=1,
        le=100,
        description="Stop repairing when more than this percentage of the group's nodes is unhealthy (a fleet-wide fault "
        "is not repaired node by node); absent leaves EKS's choice.",
    )
    max_parallel_nodes_repaired_count: int | None = Field(None, ge=1, description="Nodes repaired at once; absent leaves EKS's choice.")


class NodeGroupArgs(SpecModel):
    """An EKS managed node group of one GPU or Neuron instance type."""

    name: str = Field(pattern=EKS_NAME, description="Node group name, unique within the cluster.")
    instance_type: str = Field(description="EC2 instance type with NVIDIA GPUs or Neuron chips, e.g. p5.48xlarge.")
    ami_type: AmiType | None = Field(
        None,
        description="EKS AMI type; absent chooses from the accelerator and architecture (AL2023_x86_64_NVIDIA, "
        "AL2023_ARM_64_NVIDIA, AL2023_x86_64_NEURON). AL2 and Bottlerocket only when named here.",
    )
    capacity_type: Literal["ON_DEMAND", "SPOT", "CAPACITY_BLOCK"] = Field("ON_DEMAND", description="EKS capacity type.")
    capacity_reservation_id: str | None = Field(
        None,
        pattern=r"^cr-[0-9a-f]{8,17}$",
        description="On-Demand capacity reservation or capacity block to launch into (required with CAPACITY_BLOCK).",
    )
    min_size: int = Field(ge=0, description="Minimum number of nodes.")
    desired_size: int = Field(ge=0, description="Nodes at creation.")
    max_size: int = Field(ge=1, description="Maximum number of nodes.")
    subnet_ids: list[str] = Field(
        default_factory=list,
        description="Subnets of the group with an existing network (one subnet for EFA); with a created VPC, "
        "its private subnets (the EFA zone's only).",
    )
    zones: list[str] | None = Field(
        None,
        min_length=1,
        description="With a created VPC, the zones of the group (each a VPC zone that offers the type); absent "
        "runs in every VPC zone that offers it, so a zone appended to the VPC that offers it spreads the group "
        "there, which replaces the group. Name them to keep the group where it is. Not with efa (one zone: "
        "efa.availabilityZone).",
    )
    labels: dict[str, str] = Field(default_factory=dict, description="Kubernetes labels on every node, added to the accelerator's.")
    taints: list[TaintArgs] | None = Field(
        None,
        description="Taints on every node; absent taints the accelerator's convention (nvidia.com/gpu or "
        "aws.amazon.com/neuron, NoSchedule); an empty list taints nothing.",
    )
    efa: EfaArgs | None = Field(None, description="EFA interfaces, one zone and a placement group; absent uses one plain interface.")
    root_volume_gib: int = Field(200, alias="rootVolumeGiB", ge=30, le=16384, description="Size of the encrypted gp3 root volume in GiB.")
    metadata_hop_limit: int = Field(
        1,
        ge=1,
        le=64,
        description="IMDSv2 response hop limit; 1 keeps pods from the node role's credentials (they use IRSA or Pod Identity).",
    )
    repair: NodeRepairArgs = Field(
        default_factory=NodeRepairArgs, description="Node auto repair of the group's nodes, on unless turned off."
    )
    allocation: Literal["device-plugin", "dra"] = Field(
        "device-plugin",
        description="How pods get the group's NVIDIA GPUs: the device plugin's nvidia.com/gpu (the proven path), or "
        "dra: the NVIDIA DRA driver publishes them as resource.k8s.io devices, workloads claim them through "
        "ResourceClaims, and the device plugin stays off the group's nodes (needs a created cluster of Kubernetes "
        "1.34 or later).",
    )

    @model_validator(mode="after")
    def _sizes_and_capacity(self) -> NodeGroupArgs:
        error = size_order_error(self.min_size, self.desired_size, self.max_size)
        if error:
            raise rule_error("size-order", error)
        if self.capacity_type == "CAPACITY_BLOCK" and self.capacity_reservation_id is None:
            raise rule_error(
                "eks-capacity-block-reservation", "capacityType CAPACITY_BLOCK needs capacityReservationId (the capacity block)"
            )
        if self.capacity_type == "SPOT" and self.capacity_reservation_id is not None:
            raise rule_error("eks-reservation-purchase", "a capacity reservation is On-Demand or a capacity block, not Spot")
        return self


class SystemNodeGroupArgs(SpecModel):
    """The untainted node group of a cluster gpufleet creates: CoreDNS (an EKS default add-on that
    tolerates no accelerator taint), the MPI operator and the NCCL test's launcher run here."""

    enabled: bool = Field(
        True,
        description="Create the group. Turn it off only when another node group of the stack is untainted "
        "(taints: []): without one, CoreDNS stays Pending and cluster DNS never works.",
    )
    instance_type: str = Field(
        "m6i.large",
        description="A general-purpose type of a family the catalog keeps zone offerings for "
        "(`eks.systemNodeFamilies` in the curated facts; an error lists them).",
    )
    min_size: int = Field(2, ge=0, description="Minimum number of nodes; two or more keep a CoreDNS replica up through a node's loss.")
    desired_size: int = Field(2, ge=0, description="Nodes at creation.")
    max_size: int = Field(3, ge=1, description="Maximum number of nodes.")
    root_volume_gib: int = Field(50, alias="rootVolumeGiB", ge=20, le=16384, description="Size of the encrypted gp3 root volume in GiB.")

    @model_validator(mode="after")
    def _sizes(self) -> SystemNodeGroupArgs:
        error = size_order_error(self.min_size, self.desired_size, self.max_size)
        if error:
            raise rule_error("size-order", error)
        return self


class EksFleetArgs(SpecModel):
    """An EKS cluster with accelerated managed node groups."""

    cluster: ClusterArgs = Field(description="The cluster: existing, or one to create.")
    network: NetworkArgs = Field(description="The cluster's subnets (at least two zones), or a VPC to create.")
    node_groups: list[NodeGroupArgs] = Field(default_factory=list, description="Accelerated managed node groups, one instance type each.")
    node_pools: list[NodePoolArgs] = Field(
        default_factory=list,
        description="Karpenter NodePools of GPU or Neuron nodes, launched when pods are Pending (a created cluster; "
        "Karpenter is installed with them, on the system node group).",
    )
    karpenter: KarpenterArgs = Field(default_factory=KarpenterArgs, description="Karpenter's own settings, with nodePools.")
    system_node_group: SystemNodeGroupArgs = Field(
        default_factory=SystemNodeGroupArgs,
        description="The untainted, on-demand node group for cluster add-ons and controllers (a created cluster only).",
    )
    kubernetes: KubernetesArgs | None = Field(
        None,
        description="Device plugins (NVIDIA, EFA, Neuron, as the node groups need them), and optionally the MPI "
        "operator with an NCCL test; absent installs nothing in the cluster.",
    )
    workloads: list[ClaimedGpuWorkloadArgs] = Field(
        default_factory=list,
        description="GPU workloads, each on one NVIDIA node group or NodePool (nodePool names it), installed with the device plugins (needs kubernetes).",
    )

    @model_validator(mode="after")
    def _some_accelerators(self) -> EksFleetArgs:
        if not self.node_groups and not self.node_pools:
            raise rule_error("eks-accelerated-capacity", "give nodeGroups or nodePools: an EKS fleet of gpufleet has accelerated nodes")
        return self
