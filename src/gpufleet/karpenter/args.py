"""Typed inputs of Karpenter NodePools, declared in accelerator terms: which GPUs or Neuron chips,
which families or types, which capacity types and zones. gpufleet derives the rest (requirements,
taints, limits, disruption, the EC2NodeClass); `manifests.py` writes them.

Rules that need the catalog or several fields are in `checks.py`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from gpufleet.platform.model import K8S_NAME, CatalogChoice, SpecModel, rule_error, validating_catalog

CapacityType = Annotated[str, CatalogChoice(lambda cat: cat.facts.karpenter.labels.capacity_types)]
# The CRD's patterns (karpenter.sh_nodepools.yaml @bde00654 L145-L152, L239-L247; budgets' nodes L78-L144).
DURATION = r"^(([0-9]+(s|m|h))+|Never)$"
BUDGET = r"^((100|[0-9]{1,2})%|[0-9]+)$"


class GpuSelectorArgs(SpecModel):
    """The GPUs a pool's nodes carry, as Karpenter labels them from EC2's GpuInfo."""

    names: list[str] | None = Field(
        None,
        min_length=1,
        description="GPU models, as Karpenter's karpenter.k8s.aws/instance-gpu-name gives them (EC2's name in lower "
        "case, spaces as '-': h100, l40s, a10g); absent admits any.",
    )
    count: int | None = Field(None, ge=1, description="GPUs per node, exactly; absent admits any count.")


class NeuronSelectorArgs(SpecModel):
    """The Neuron devices a pool's nodes carry, as Karpenter labels them from EC2's NeuronInfo."""

    names: list[str] | None = Field(
        None,
        min_length=1,
        description="Neuron devices, as karpenter.k8s.aws/instance-accelerator-name gives them (inferentia2, trainium, "
        "trainium2); absent admits any.",
    )
    count: int | None = Field(None, ge=1, description="Neuron devices per node, exactly; absent admits any count.")


class ReservationArgs(SpecModel):
    """An On-Demand Capacity Reservation or a Capacity Block the pool launches into."""

    id: str = Field(pattern=r"^cr-[0-9a-z]+$", description="The reservation's id (cr-...).")
    instances: int = Field(
        ge=1,
        description="Instances the reservation holds, stated to be checked: the placement launches no more nodes "
        "from it, as Karpenter finds no more reserved offerings.",
    )


class PoolEfaArgs(SpecModel):
    """EFA interfaces on every node, in the EC2NodeClass's networkInterfaces (Karpenter #9027)."""

    interfaces: int | None = Field(None, ge=1, description="efa-only interfaces to lay out; absent takes the type's MaximumEfaInterfaces.")
    placement_group: bool = Field(
        True,
        description="Launch into a new cluster placement group (the node class's placementGroupSelector); ignored "
        "with capacity reservations, which carry their own placement.",
    )


class NodePoolArgs(SpecModel):
    """A Karpenter NodePool and its EC2NodeClass, for GPU or Neuron nodes."""

    name: str = Field(pattern=K8S_NAME, description="NodePool and EC2NodeClass name, unique in the cluster.")
    gpu: GpuSelectorArgs | None = Field(None, description="NVIDIA GPU nodes (give gpu or neuron).")
    neuron: NeuronSelectorArgs | None = Field(None, description="AWS Neuron nodes (give gpu or neuron).")
    instance_families: list[str] | None = Field(
        None, min_length=1, description="Instance families (g6e, g5, p5); absent admits every family with the accelerator."
    )
    instance_types: list[str] | None = Field(None, min_length=1, description="Instance types, instead of families (p5.48xlarge).")
    capacity_types: list[CapacityType] = Field(
        default_factory=lambda: ["on-demand"],
        min_length=1,
        description="on-demand, spot or reserved (capacity reservations and Capacity Blocks, given in capacityReservations).",
    )
    capacity_reservations: list[ReservationArgs] = Field(
        default_factory=list,
        description="The reservations a reserved pool launches into (its EC2NodeClass's capacityReservationSelectorTerms).",
    )
    zones: list[str] | None = Field(
        None, min_length=1, description="Zones of the pool (each a created VPC's zone); absent: every zone of the cluster's subnets."
    )
    max_nodes: int = Field(
        ge=1,
        description="The most nodes the pool may run: its limits are this many of its largest type's accelerators "
        "and vCPUs (Karpenter counts the largest type of each new node against them).",
    )
    consolidation: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = Field(
        "WhenEmpty",
        description="WhenEmpty removes only nodes with no workload pods (training, batch); WhenEmptyOrUnderutilized "
        "also moves running pods to fewer, cheaper nodes (services that tolerate restarts).",
    )
    consolidate_after: str = Field(
        "1m",
        pattern=DURATION,
        description="How long a node stays empty or underutilized before it goes (Karpenter's getting-started value).",
    )
    disruption_budget: str = Field(
        "10%",
        pattern=BUDGET,
        description="Nodes (a count or a percentage) Karpenter may disrupt at once (the value the CRD takes when none is given).",
    )
    expire_after: str = Field(
        "720h",
        pattern=DURATION,
        description="Node lifetime before replacement (as the CRD when unset; Never keeps nodes). Expiry is forceful: "
        "it does not wait for karpenter.sh/do-not-disrupt pods.",
    )
    ami_family: Literal["al2023", "bottlerocket"] = Field(
        "al2023", description="The EC2NodeClass's AMI alias family (not with Auto Mode, which chooses)."
    )
    ami_version: str | None = Field(
        None,
        pattern=r"^v[0-9][0-9A-Za-z.\-]*$",
        description="The AMI release the alias pins (al2023@v20260724; Karpenter advises against @latest in production: "
        "every release would replace every node). Required with Karpenter; not with Auto Mode, which chooses.",
    )
    root_volume_gib: int = Field(200, alias="rootVolumeGiB", ge=30, le=16384, description="Size of the encrypted gp3 root volume in GiB.")
    labels: dict[str, str] = Field(default_factory=dict, description="Kubernetes labels on every node, added to the accelerator's.")
    efa: PoolEfaArgs | None = Field(None, description="EFA interfaces on every node (one zone); absent uses one plain interface.")
    weight: int | None = Field(None, ge=1, le=100, description="Karpenter tries heavier pools first; absent counts 0.")

    @model_validator(mode="after")
    def _one_accelerator(self) -> NodePoolArgs:
        if (self.gpu is None) == (self.neuron is None):
            raise rule_error("karpenter-pool-accelerator", "give gpu or neuron (exactly one): a pool of gpufleet carries accelerators")
        if self.instance_families is not None and self.instance_types is not None:
            raise rule_error("karpenter-pool-types", "give instanceFamilies or instanceTypes, not both")
        # The other way round (reserved without reservations) is the pack's rule too: checks.py calls it.
        reserved = validating_catalog().facts.karpenter.reserved_capacity.capacity_type
        if self.capacity_reservations and reserved not in self.capacity_types:
            raise rule_error("karpenter-pool-reservations", f"capacityReservations are launched into only with capacityTypes {reserved}")
        return self


class KarpenterArgs(SpecModel):
    """Karpenter itself: its pinned chart, controller role (EKS Pod Identity), node role and access
    entry, and interruption queue, on the cluster's system node group."""

    node_overlays: bool = Field(
        False,
        description="With the NVIDIA device plugin time-slicing GPUs (kubernetes.nvidiaDevicePlugin.timeSlicingReplicas), "
        "NodeOverlays (one per GPU count of the pools' types) give Karpenter the shared nvidia.com/gpu count (alpha: turns "
        "on the NodeOverlay feature gate); off, Karpenter counts physical GPUs and launches a node where a shared one would "
        "do (aws/karpenter-provider-aws#3376).",
    )
