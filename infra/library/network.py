"""The network of a fleet: existing subnets, or a VPC to create in named zones.

`from gpufleet.library.network import ...`: the public names only (gpufleet.library keeps every name
flat as well)."""

from __future__ import annotations

from gpufleet.components.network.args import NetworkArgs, NewVpcArgs

__all__ = [
    "NetworkArgs",
    "NewVpcArgs",
]
