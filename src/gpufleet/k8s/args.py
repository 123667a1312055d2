"""Typed inputs of the in-cluster pieces: device plugins and the NCCL test."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gpufleet.platform.model import K8S_NAME, ImageReference, SpecModel, rule_error


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
    def _one_sharing(self) -> NvidiaDevicePluginArgs:
        if self.time_slicing_replicas is not None and self.mig_strategy != "none":
            raise rule_error("nvidia-one-sharing", "choose time-slicing or a MIG strategy, not both")
        return self


class NcclTestArgs(SpecModel):
    """An NCCL all-reduce MPIJob sized from an EFA node group: workers = nodes, slots = GPUs per node."""

    node_group: str = Field(description="The NVIDIA EFA node group the job proves.")
    image: ImageReference = Field(
        min_length=1,
        description="The nccl-tests image (EFA installer, NCCL and nccl-tests built in), e.g. from the "
        "awsome-distributed-training Dockerfile; no public tag is pinned (charts.md).",
    )


class GpuOperatorArgs(SpecModel):
    """The NVIDIA GPU Operator (Helm chart gpu-operator) instead of the cloud's GPU stack. Every GPU
    pool of the fleet gets exactly one driver: with `driver` on, the pools install none; with it off,
    the cloud installs it (the rules refuse any other pairing)."""

    driver: bool = Field(
        False, description="The operator installs the driver (pools with the driver off: GKE INSTALLATION_DISABLED, AKS None)."
    )
    toolkit: bool = Field(True, description="The operator installs the NVIDIA container toolkit.")
    mig_strategy: Literal["single", "mixed"] = Field(
        "single", description="How MIG instances are advertised: single (nvidia.com/gpu) or mixed (nvidia.com/mig-<profile>)."
    )
    time_slicing_replicas: int | None = Field(
        None,
        ge=2,
        le=64,
        description="Advertise each GPU as this many nvidia.com/gpu (the device plugin's time-slicing); absent shares nothing.",
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
    gpu_operator: GpuOperatorArgs | None = Field(
        None,
        description="Install the NVIDIA GPU Operator instead of the NVIDIA device plugin (the EFA and Neuron plugins stay); absent installs the plugin.",
    )

    @model_validator(mode="after")
    def _one_nvidia_plugin(self) -> KubernetesArgs:
        if self.gpu_operator is not None and self.nvidia_device_plugin != NvidiaDevicePluginArgs():
            raise rule_error(
                "nvidia-one-plugin",
                "the GPU Operator brings its own device plugin: set time-slicing and MIG on gpuOperator, not nvidiaDevicePlugin",
            )
        return self


class WorkloadArgsBase(SpecModel):
    """What every accelerated workload names: a Deployment or Job of one container on one pool."""

    name: str = Field(pattern=K8S_NAME, description="Workload name.")
    kind: Literal["Deployment", "Job"] = Field("Deployment", description="Deployment (a service) or Job (runs to completion).")
    node_pool: str = Field(description="The pool it runs on (selected by the pool's node labels).")
    image: ImageReference = Field(min_length=1, description="Container image.")
    command: list[str] | None = Field(None, description="Container command; absent runs the image's entrypoint.")
    replicas: int = Field(1, ge=1, description="Pods (Deployment replicas, or Job parallelism and completions).")


class GpuWorkloadArgs(WorkloadArgsBase):
    """A Deployment or Job whose one container asks for nvidia.com/gpu on one GPU node pool: whole
    GPUs, MIG instances of the pool's partition, or (on pools that share GPUs) one shared GPU."""

    gpus: int = Field(
        1,
        ge=1,
        description="nvidia.com/gpu per pod, in limits equal to requests: GPUs, MIG instances, or one shared GPU on a sharing pool.",
    )


class ClaimedGpuWorkloadArgs(GpuWorkloadArgs):
    """A GPU workload of an EKS or GKE fleet. On a group with `allocation: dra` its pods claim their
    devices through resource.k8s.io ResourceClaims (whole GPUs, MIG instances of one profile, or one
    GPU shared by every pod) instead of asking for nvidia.com/gpu."""

    gpus: int = Field(
        1,
        ge=1,
        description="nvidia.com/gpu per pod, in limits equal to requests; on a DRA node group, the devices the claim asks "
        "for (whole GPUs, or MIG devices of migProfile).",
    )
    mig_profile: str | None = Field(
        None,
        description="On a DRA node group: claim `gpus` MIG instances of this exact profile (e.g. 1g.5gb, as NVIDIA's MIG "
        "user guide names them for the group's GPU); the group's nvidia.com/mig.config label must lay them out. "
        "Absent claims whole GPUs.",
    )
    shared_gpu: bool = Field(
        False,
        description="On a DRA node group: one ResourceClaim that every pod of the workload shares (the pods run on "
        "the node that holds the claimed devices), instead of a claim per pod.",
    )
