"""In a Kubernetes cluster: the device plugins of the groups they serve, the NCCL test, the NVIDIA GPU
Operator and a GPU workload on one pool.

`from gpufleet.library.k8s import ...`: its public names, re-exported (gpufleet.library keeps every name flat as
well)."""

from gpufleet.eks.resolved import served_groups as served_groups
from gpufleet.k8s.args import GpuOperatorArgs as GpuOperatorArgs
from gpufleet.k8s.args import GpuWorkloadArgs as GpuWorkloadArgs
from gpufleet.k8s.args import NcclTestArgs as NcclTestArgs
from gpufleet.k8s.args import NvidiaDevicePluginArgs as NvidiaDevicePluginArgs
from gpufleet.k8s.device_plugins import DevicePlugins as DevicePlugins
from gpufleet.k8s.device_plugins import ServedGroups as ServedGroups
from gpufleet.k8s.gpu_operator import GpuOperator as GpuOperator
from gpufleet.k8s.gpu_workload import GpuWorkload as GpuWorkload
from gpufleet.k8s.nccl_test import NcclTest as NcclTest
