"""The network of a fleet: existing subnets, or a VPC to create in named zones.

`from gpufleet.library.network import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.network.args import NetworkArgs, NewVpcArgs

__all__ = ["NetworkArgs", "NewVpcArgs"]
