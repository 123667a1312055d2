"""Typed inputs of the in-cluster pieces: device plugins and the NCCL test."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gpufleet.components.spec_model import SpecModel, rule_error


class NvidiaDevicePluginArgs(SpecModel):
    """The NVIDIA device plugin (Helm chart nvidia-device-plugin), installed when a group has NVIDIA GPUs."""

    time_slicing_replicas: int | None = Field(
        None,
        ge=2,
        le=64,
        description="Advertise each GPU as this many nvidia.com/gpu (time-slicing; no memory isolation, for "
        "mutually trusting workloads). Absent shares nothing.",
    )
    mig_strategy: Literal["none", "single", "mixed"] = Field(
        "none", description="MIG strategy (A100/H100 class GPUs only); none leaves MIG off."
    )

    @model_validator(mode="after")
    def _one_sharing(self) -> "NvidiaDevicePluginArgs":
        if self.time_slicing_replicas is not None and self.mig_strategy != "none":
            raise rule_error("nvidia-one-sharing", "choose time-slicing or a MIG strategy, not both")
        return self


class NcclTestArgs(SpecModel):
    """An NCCL all-reduce MPIJob sized from an EFA node group: workers = nodes, slots = GPUs per node."""

    node_group: str = Field(description="The NVIDIA EFA node group the job proves.")
    image: str = Field(
        min_length=1,
        description="The nccl-tests image (EFA installer, NCCL and nccl-tests built in), e.g. from the "
        "awsome-distributed-training Dockerfile; no public tag is pinned (charts.md).",
    )


class KubernetesArgs(SpecModel):
    """What gpufleet installs in the cluster, through a provider whose kubeconfig comes from the
    cluster's outputs (a new cluster) or the EKS API (an existing one, which the offline preview
    cannot look up)."""

    nvidia_device_plugin: NvidiaDevicePluginArgs = Field(
        default_factory=NvidiaDevicePluginArgs, description="NVIDIA device plugin settings."
    )
    nccl_test: NcclTestArgs | None = Field(
        None, description="Install the Kubeflow MPI operator and an NCCL all-reduce test job; absent installs neither."
    )
