"""Azure AKS: a GPU node pool (MIG profile, the driver), the whole fleet, and their args.

`from gpufleet.library.aks import ...`: the public names only (gpufleet.library keeps every name
flat as well)."""

from __future__ import annotations

from gpufleet.components.aks.aks_fleet import AksFleet
from gpufleet.components.aks.args import AksFleetArgs, AksNodePoolArgs
from gpufleet.components.aks.node_pool import AksGpuNodePool

__all__ = [
    "AksFleet",
    "AksFleetArgs",
    "AksGpuNodePool",
    "AksNodePoolArgs",
]
