"""Alibaba ACK: shared-GPU node pools, the workloads that share a GPU, the whole fleet, and their
args.

`from gpufleet.library.ack import ...`: its public names, re-exported (gpufleet.library keeps every name flat as
well)."""

from gpufleet.ack.ack_fleet import AckFleet as AckFleet
from gpufleet.ack.args import AckFleetArgs as AckFleetArgs
from gpufleet.ack.args import AckNodePoolArgs as AckNodePoolArgs
from gpufleet.ack.args import AckTaintArgs as AckTaintArgs
from gpufleet.ack.args import AckWorkloadArgs as AckWorkloadArgs
from gpufleet.ack.args import AutoscalingArgs as AutoscalingArgs
from gpufleet.ack.node_pool import SharedGpuNodePool as SharedGpuNodePool
from gpufleet.ack.node_pool import workload_selector as workload_selector
from gpufleet.ack.shared_gpu_workload import SharedGpuWorkload as SharedGpuWorkload
