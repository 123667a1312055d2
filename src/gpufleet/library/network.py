"""The network of a fleet: existing subnets, or a VPC to create in named zones.

`from gpufleet.library.network import ...`: its public names, re-exported (gpufleet.library keeps every name flat as
well)."""

from gpufleet.network.args import NetworkArgs as NetworkArgs
from gpufleet.network.args import NewVpcArgs as NewVpcArgs
