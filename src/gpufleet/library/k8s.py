"""In a Kubernetes cluster: the device plugins of the groups they serve, the NCCL test, the NVIDIA GPU
Operator and a GPU workload on one pool.

`from gpufleet.library.k8s import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.eks.resolved import served_groups
from gpufleet.k8s.args import GpuOperatorArgs, GpuWorkloadArgs, NcclTestArgs, NvidiaDevicePluginArgs
from gpufleet.k8s.device_plugins import DevicePlugins
from gpufleet.k8s.gpu_operator import GpuOperator
from gpufleet.k8s.gpu_workload import GpuWorkload
from gpufleet.k8s.nccl_test import NcclTest

__all__ = [
    "DevicePlugins",
    "GpuOperator",
    "GpuOperatorArgs",
    "GpuWorkload",
    "GpuWorkloadArgs",
    "NcclTest",
    "NcclTestArgs",
    "NvidiaDevicePluginArgs",
    "served_groups",
]
