"""Amazon ECS: GPU or Neuron capacity providers (Auto Scaling or Managed Instances), the instance
role, the whole cluster, and their args.

`from gpufleet.library.ecs import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.components.ecs.args import CapacityProviderArgs, ContainerArgs, EcsFleetArgs, GpuShareArgs, ManagedInstanceProviderArgs, RangeArgs, ServiceArgs, WorkloadArgs
from gpufleet.components.ecs.capacity_provider import GpuCapacityProvider
from gpufleet.components.ecs.cluster_ref import EcsClusterRef
from gpufleet.components.ecs.gpu_cluster import GpuCluster
from gpufleet.components.ecs.instance_role import InstanceRole
from gpufleet.components.ecs.managed_instances import ManagedInstancesCapacityProvider

__all__ = ["CapacityProviderArgs", "ContainerArgs", "EcsClusterRef", "EcsFleetArgs", "GpuCapacityProvider", "GpuCluster", "GpuShareArgs", "InstanceRole", "ManagedInstanceProviderArgs", "ManagedInstancesCapacityProvider", "RangeArgs", "ServiceArgs", "WorkloadArgs"]
