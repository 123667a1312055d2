"""Alibaba ACK: shared-GPU node pools, the workloads that share a GPU, the whole fleet, and their
args.

`from gpufleet.library.ack import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.ack.ack_fleet import AckFleet
from gpufleet.ack.args import AckFleetArgs, AckNodePoolArgs, AckTaintArgs, AckWorkloadArgs, AutoscalingArgs
from gpufleet.ack.node_pool import SharedGpuNodePool
from gpufleet.ack.shared_gpu_workload import SharedGpuWorkload

__all__ = [
    "AckFleet",
    "AckFleetArgs",
    "AckNodePoolArgs",
    "AckTaintArgs",
    "AckWorkloadArgs",
    "AutoscalingArgs",
    "SharedGpuNodePool",
    "SharedGpuWorkload",
]
