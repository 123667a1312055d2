"""Google GKE: a GPU node pool (MIG, time-sharing or MPS, the driver), the whole fleet, and their
args.

`from gpufleet.library.gke import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.gke.args import GkeAcceleratorArgs, GkeFleetArgs, GkeNodePoolArgs, GpuSharingArgs
from gpufleet.gke.gke_fleet import GkeFleet
from gpufleet.gke.node_pool import GkeGpuNodePool

__all__ = ["GkeAcceleratorArgs", "GkeFleet", "GkeFleetArgs", "GkeGpuNodePool", "GkeNodePoolArgs", "GpuSharingArgs"]
