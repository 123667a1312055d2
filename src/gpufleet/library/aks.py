"""Azure AKS: a GPU node pool (MIG profile, the driver), the whole fleet, and their args.

`from gpufleet.library.aks import ...`: its public names, re-exported (gpufleet.library keeps every name flat as
well)."""

from gpufleet.aks.aks_fleet import AksFleet as AksFleet
from gpufleet.aks.args import AksFleetArgs as AksFleetArgs
from gpufleet.aks.args import AksNodePoolArgs as AksNodePoolArgs
from gpufleet.aks.node_pool import AksGpuNodePool as AksGpuNodePool
