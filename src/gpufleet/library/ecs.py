"""Amazon ECS: GPU or Neuron capacity providers (Auto Scaling or Managed Instances), the instance
role, the whole cluster, and their args.

`from gpufleet.library.ecs import ...`: its public names, re-exported (gpufleet.library keeps every name flat as
well)."""

from gpufleet.ecs.args import CapacityProviderArgs as CapacityProviderArgs
from gpufleet.ecs.args import ContainerArgs as ContainerArgs
from gpufleet.ecs.args import EcsFleetArgs as EcsFleetArgs
from gpufleet.ecs.args import GpuShareArgs as GpuShareArgs
from gpufleet.ecs.args import ManagedInstanceProviderArgs as ManagedInstanceProviderArgs
from gpufleet.ecs.args import RangeArgs as RangeArgs
from gpufleet.ecs.args import ServiceArgs as ServiceArgs
from gpufleet.ecs.args import WorkloadArgs as WorkloadArgs
from gpufleet.ecs.capacity_provider import GpuCapacityProvider as GpuCapacityProvider
from gpufleet.ecs.cluster_ref import EcsClusterRef as EcsClusterRef
from gpufleet.ecs.gpu_cluster import GpuCluster as GpuCluster
from gpufleet.ecs.instance_role import InstanceRole as InstanceRole
from gpufleet.ecs.managed_instances import ManagedInstancesCapacityProvider as ManagedInstancesCapacityProvider
from gpufleet.ecs.resolved import ResolvedCapacityProvider as ResolvedCapacityProvider
