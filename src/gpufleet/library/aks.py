"""Azure AKS: a GPU node pool (MIG profile, the driver), the whole fleet, and their args.

`from gpufleet.library.aks import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.aks.aks_fleet import AksFleet
from gpufleet.aks.args import AksFleetArgs, AksNodePoolArgs
from gpufleet.aks.node_pool import AksGpuNodePool

__all__ = ["AksFleet", "AksFleetArgs", "AksGpuNodePool", "AksNodePoolArgs"]
