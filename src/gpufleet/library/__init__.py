"""The components a Pulumi program of your own composes, and their typed args: one import,
`from gpufleet.library import ...`. Each is a `pulumi.ComponentResource` whose children are the
plain pulumi-aws, pulumi-kubernetes, pulumi-alicloud, pulumi-gcp and pulumi-azure resources a
preview and a policy pack see.

They take your VPC, subnets, cluster, roles and providers as Pulumi inputs (pass
`opts=pulumi.ResourceOptions(provider=...)` for your own provider); the args are the same frozen,
validated models the stack file is read into (snake_case in Python). The stack-file program
(`gpufleet/program.py`) is one user of this module: the whole-fleet components at the end compose
the others. `examples/` holds two programs written against it, and `gpufleet preview --program DIR`
previews such a program offline with the policy pack.

What a component resolves itself, from EC2 data and the curated facts: an EKS group's AMI type, the
EFA interface layout from the type's network cards, the ECS AMI's SSM parameter, the device
plugins' chart values and tolerations. What it leaves to you: anything of your account it cannot
know (the cluster, its security group, the node role, the subnets). Rules that span several
resources (a GPU count that fits the type, a task pinned to GPU instances) are the policy pack's:
run it on your program's preview.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

# Each platform's module names its exports once; this one keeps them flat, in the order the
# reference (docs/library.md) lists them. A name is imported from its platform's module on first
# use: a program of one cloud does not import the others' provider SDKs (pulumi_alicloud,
# pulumi_gcp and pulumi_azure cost an EKS program about 0.4 s of its start).
_PLATFORMS = ("ack", "aks", "ecs", "eks", "gke", "k8s", "network")

if TYPE_CHECKING:  # type checkers and editors see every name as the star imports give it
    # ruff: noqa: F403, F405
    from gpufleet.library.ack import *
    from gpufleet.library.aks import *
    from gpufleet.library.ecs import *
    from gpufleet.library.eks import *
    from gpufleet.library.gke import *
    from gpufleet.library.k8s import *
    from gpufleet.library.network import *


@functools.cache
def _modules() -> dict[str, str]:
    """{exported name: its platform's module}, read from the modules' re-exports without importing them."""
    found = {}
    for platform in _PLATFORMS:
        for node in ast.parse((Path(__file__).parent / f"{platform}.py").read_text()).body:
            if isinstance(node, ast.ImportFrom):
                found.update({alias.asname or alias.name: platform for alias in node.names})
    return found


def __getattr__(name: str) -> object:
    platform = _modules().get(name)
    if platform is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{platform}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    # ECS: GPU or Neuron capacity for a cluster, and the whole cluster.
    "GpuCapacityProvider",
    "EcsClusterRef",
    "CapacityProviderArgs",
    "ResolvedCapacityProvider",
    "InstanceRole",
    "GpuCluster",
    "EcsFleetArgs",
    "WorkloadArgs",
    "ContainerArgs",
    "GpuShareArgs",
    "ServiceArgs",
    # ECS Managed Instances: a capacity provider ECS fills itself, with the roles it needs.
    "ManagedInstancesCapacityProvider",
    "ManagedInstanceProviderArgs",
    "RangeArgs",
    # EKS: an accelerated managed node group with EFA, and the whole fleet.
    "AcceleratedNodeGroup",
    "EksClusterRef",
    "NodeGroupArgs",
    "ResolvedNodeGroup",
    "EfaArgs",
    "TaintArgs",
    "EksFleet",
    "EksFleetArgs",
    "AutoModeArgs",
    # EKS: Karpenter (its AWS side and chart) and a GPU or Neuron NodePool with its node class.
    "Karpenter",
    "KarpenterArgs",
    "KarpenterNodePool",
    "NodePoolArgs",
    "GpuSelectorArgs",
    "NeuronSelectorArgs",
    "PoolEfaArgs",
    "ReservationArgs",
    "NetworkArgs",
    "NewVpcArgs",
    # In the cluster: device plugins and the NCCL test.
    "DevicePlugins",
    "ServedGroups",
    "served_groups",
    "NvidiaDevicePluginArgs",
    "NcclTest",
    "NcclTestArgs",
    # In the cluster: the NVIDIA GPU Operator, and a GPU workload on one pool (GKE, AKS).
    "GpuOperator",
    "GpuOperatorArgs",
    "GpuWorkload",
    "GpuWorkloadArgs",
    # Alibaba ACK: shared-GPU node pools and the workloads that share a GPU.
    "SharedGpuNodePool",
    "AckNodePoolArgs",
    "AckTaintArgs",
    "AutoscalingArgs",
    "workload_selector",
    "SharedGpuWorkload",
    "AckWorkloadArgs",
    "AckFleet",
    "AckFleetArgs",
    # Google GKE: a GPU node pool (MIG, time-sharing or MPS, the driver), and the whole fleet.
    "GkeGpuNodePool",
    "GkeNodePoolArgs",
    "GkeAcceleratorArgs",
    "GpuSharingArgs",
    "GkeFleet",
    "GkeFleetArgs",
    # Azure AKS: a GPU node pool (MIG profile, the driver), and the whole fleet.
    "AksGpuNodePool",
    "AksNodePoolArgs",
    "AksFleet",
    "AksFleetArgs",
]
