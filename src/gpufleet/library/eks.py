"""Amazon EKS: an accelerated managed node group with EFA joining a cluster you run (EksClusterRef),
Karpenter and its GPU or Neuron NodePools (or EKS Auto Mode's), the whole fleet, and their args.

`from gpufleet.library.eks import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.eks.args import AutoModeArgs, EfaArgs, EksFleetArgs, NodeGroupArgs, TaintArgs
from gpufleet.eks.eks_fleet import EksFleet
from gpufleet.eks.node_group import AcceleratedNodeGroup, EksClusterRef
from gpufleet.karpenter.args import GpuSelectorArgs, KarpenterArgs, NeuronSelectorArgs, NodePoolArgs, PoolEfaArgs, ReservationArgs
from gpufleet.karpenter.controller import Karpenter
from gpufleet.karpenter.node_pool import KarpenterNodePool

__all__ = [
    "AcceleratedNodeGroup",
    "AutoModeArgs",
    "EfaArgs",
    "EksClusterRef",
    "EksFleet",
    "EksFleetArgs",
    "GpuSelectorArgs",
    "Karpenter",
    "KarpenterArgs",
    "KarpenterNodePool",
    "NeuronSelectorArgs",
    "NodeGroupArgs",
    "NodePoolArgs",
    "PoolEfaArgs",
    "ReservationArgs",
    "TaintArgs",
]
