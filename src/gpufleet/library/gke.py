"""Google GKE: a GPU node pool (MIG, time-sharing or MPS, the driver), the whole fleet, and their
args.

`from gpufleet.library.gke import ...`: its public names, re-exported (gpufleet.library keeps every name flat as
well)."""

from gpufleet.gke.args import GkeAcceleratorArgs as GkeAcceleratorArgs
from gpufleet.gke.args import GkeFleetArgs as GkeFleetArgs
from gpufleet.gke.args import GkeNodePoolArgs as GkeNodePoolArgs
from gpufleet.gke.args import GpuSharingArgs as GpuSharingArgs
from gpufleet.gke.gke_fleet import GkeFleet as GkeFleet
from gpufleet.gke.node_pool import GkeGpuNodePool as GkeGpuNodePool
