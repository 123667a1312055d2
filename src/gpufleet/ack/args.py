"""Typed inputs of an ACK shared-GPU fleet: GPU node pools of an existing ACK Pro cluster, the GPU
sharing component, and workloads that request slices of a GPU (reference 004).

Rules that need the curated facts or several fields are in `checks.py`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from gpufleet.k8s.args import WorkloadArgsBase
from gpufleet.platform.model import K8S_NAME, CatalogChoice, SpecModel, rule_error

SharingMode = Annotated[str, CatalogChoice(lambda cat: cat.facts.ack.sharing_modes)]
Placement = Annotated[str, CatalogChoice(lambda cat: cat.facts.ack.placements)]


class AckTaintArgs(SpecModel):
    """A taint on every node of the pool; the fleet's workloads on the pool tolerate it."""

    key: str = Field(min_length=1, description="Taint key, e.g. nvidia.com/gpu.")
    value: str = Field("", description="Taint value.")
    effect: Literal["NoSchedule", "NoExecute", "PreferNoSchedule"] = Field(
        "NoSchedule", description="Taint effect (Kubernetes spelling, as ACK takes it)."
    )


class AutoscalingArgs(SpecModel):
    """Let ACK's node autoscaler size the pool between these bounds instead of a fixed size."""

    min_size: int = Field(ge=0, description="Fewest nodes.")
    max_size: int = Field(ge=1, description="Most nodes.")

    @model_validator(mode="after")
    def _ordered(self) -> AutoscalingArgs:
        if self.min_size > self.max_size:
            raise rule_error("size-order", f"minSize {self.min_size} is larger than maxSize {self.max_size}")
        return self


class AckNodePoolArgs(SpecModel):
    """A GPU node pool labelled for one sharing mode. ACK applies pool labels when a node joins, so a
    node cannot change mode in place (004): a change of mode, placement or labels replaces the pool."""

    name: str = Field(pattern=K8S_NAME, description="Pool name (also the value of the gpufleet.io/node-pool label workloads select).")
    sharing_mode: SharingMode = Field(
        description="ack.node.gpu.schedule: core_mem (GPU memory and computing power isolation) or cgpu "
        "(memory isolation only). A node runs one mode: memory-only and memory+compute jobs never share it."
    )
    placement: Placement | None = Field(
        None,
        description="ack.node.gpu.placement: binpack fills one GPU before the next, spread spreads pods; absent sets no label, and ACK packs (binpack).",
    )
    instance_types: list[str] = Field(min_length=1, description="ECS GPU instance types, e.g. ecs.gn6v-c8g1.8xlarge.")
    vswitch_ids: list[str] = Field(min_length=1, description="vSwitches the nodes are placed in (vsw-...).")
    desired_size: int | None = Field(None, ge=0, description="Fixed number of nodes (absent with autoscaling).")
    autoscaling: AutoscalingArgs | None = Field(None, description="Autoscaling bounds (absent with desiredSize).")
    taint: AckTaintArgs | None = Field(None, description="A taint that keeps other pods off the GPU nodes; absent taints nothing.")
    image_type: str | None = Field(None, min_length=1, description="Node OS image type, e.g. AliyunLinux3; absent lets ACK choose.")

    @model_validator(mode="after")
    def _one_size(self) -> AckNodePoolArgs:
        if (self.desired_size is None) == (self.autoscaling is None):
            raise rule_error("ack-pool-size", "give exactly one of desiredSize (a fixed pool) and autoscaling (minSize, maxSize)")
        return self


class SharingComponentArgs(SpecModel):
    """The GPU sharing component 004 requires (ack-ai-installer: the sharing device plugin and cGPU),
    installed as a Helm release. No public chart repository could be confirmed, so the stack names it."""

    repository: str = Field(
        min_length=1, description="Helm repository that serves the chart (the one your ACK console's App Catalog uses)."
    )
    version: str = Field(pattern=r"^v?\d+\.\d+\.\d+", description="Chart version; computing power allocation needs 1.2.0 or later (004).")
    namespace: str = Field("kube-system", pattern=K8S_NAME, description="Namespace of the release.")


class AckWorkloadArgs(WorkloadArgsBase):
    """A Deployment or Job whose one container asks for a slice of one GPU of a pool."""

    gpu_mem_gib: int = Field(ge=1, description="aliyun.com/gpu-mem: GiB of one GPU's memory per pod.")
    gpu_core_percentage: int | None = Field(
        None,
        description="aliyun.com/gpu-core.percentage: share of one GPU's compute (5..100, steps of 5; core_mem pools only). Absent asks none.",
    )


class AckKubernetesArgs(SpecModel):
    """How gpufleet reaches the cluster for in-cluster pieces: a kubeconfig context (the cluster's
    kubeconfig from the ACK console or `aliyun cs GET /k8s/<id>/user_config`), not a stored secret."""

    context: str = Field(min_length=1, description="The kubeconfig context of the cluster (kubeconfig from KUBECONFIG or ~/.kube/config).")


class AckFleetArgs(SpecModel):
    """GPU node pools for shared GPU scheduling on an existing ACK Pro cluster."""

    region: str = Field(pattern=r"^[a-z]{2}(-[a-z0-9]+)+$", description="Alibaba Cloud region of the cluster, e.g. cn-hangzhou.")
    cluster_id: str = Field(min_length=1, description="ID of the existing ACK Pro cluster.")
    kubernetes_version: str | None = Field(
        None, pattern=r"^1\.\d+", description="The cluster's Kubernetes version, when known: checked against 004's minimum (1.20)."
    )
    cgpu_version: str | None = Field(
        None, pattern=r"^v?\d+\.\d+\.\d+", description="The nodes' cGPU version, when known: checked against 004's minimum (1.0.5)."
    )
    node_pools: list[AckNodePoolArgs] = Field(min_length=1, description="GPU node pools.")
    kubernetes: AckKubernetesArgs | None = Field(
        None, description="Cluster access for the sharing component and workloads; absent installs nothing in the cluster."
    )
    sharing_component: SharingComponentArgs | None = Field(
        None, description="Install the GPU sharing component; absent assumes it is installed (from the ACK console)."
    )
    workloads: list[AckWorkloadArgs] = Field(default_factory=list, description="Shared-GPU workloads.")
