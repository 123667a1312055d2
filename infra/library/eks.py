"""Amazon EKS: an accelerated managed node group with EFA joining a cluster you run (EksClusterRef),
Karpenter and its GPU or Neuron NodePools (or EKS Auto Mode's), the whole fleet, and their args.

`from gpufleet.library.eks import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.components.eks.args import AutoModeArgs, EfaArgs, EksFleetArgs, NodeGroupArgs, TaintArgs
from gpufleet.components.eks.eks_fleet import EksFleet
from gpufleet.components.eks.node_group import AcceleratedNodeGroup, EksClusterRef
from gpufleet.components.karpenter.args import GpuSelectorArgs, KarpenterArgs, NeuronSelectorArgs, NodePoolArgs, PoolEfaArgs, ReservationArgs
from gpufleet.components.karpenter.controller import Karpenter
from gpufleet.components.karpenter.node_pool import KarpenterNodePool

__all__ = [
    "AcceleratedNodeGroup", "AutoModeArgs", "EfaArgs", "EksClusterRef", "EksFleet", "EksFleetArgs", "GpuSelectorArgs", "Karpenter", "KarpenterArgs",
    "KarpenterNodePool", "NeuronSelectorArgs", "NodeGroupArgs", "NodePoolArgs", "PoolEfaArgs", "ReservationArgs", "TaintArgs",
]
