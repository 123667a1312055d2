"""Amazon ECS: GPU or Neuron capacity providers (Auto Scaling or Managed Instances), the instance
role, the whole cluster, and their args.

`from gpufleet.library.ecs import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.ecs.args import (
    CapacityProviderArgs,
    ContainerArgs,
    EcsFleetArgs,
    GpuShareArgs,
    ManagedInstanceProviderArgs,
    RangeArgs,
    ServiceArgs,
    WorkloadArgs,
)
from gpufleet.ecs.capacity_provider import GpuCapacityProvider
from gpufleet.ecs.cluster_ref import EcsClusterRef
from gpufleet.ecs.gpu_cluster import GpuCluster
from gpufleet.ecs.instance_role import InstanceRole
from gpufleet.ecs.managed_instances import ManagedInstancesCapacityProvider

__all__ = [
    "CapacityProviderArgs",
    "ContainerArgs",
    "EcsClusterRef",
    "EcsFleetArgs",
    "GpuCapacityProvider",
    "GpuCluster",
    "GpuShareArgs",
    "InstanceRole",
    "ManagedInstanceProviderArgs",
    "ManagedInstancesCapacityProvider",
    "RangeArgs",
    "ServiceArgs",
    "WorkloadArgs",
]
