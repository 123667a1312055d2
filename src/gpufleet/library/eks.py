"""Amazon EKS: an accelerated managed node group with EFA joining a cluster you run (EksClusterRef),
Karpenter and its GPU or Neuron NodePools (or EKS Auto Mode's), the whole fleet, and their args.

`from gpufleet.library.eks import ...`: its public names, re-exported (gpufleet.library keeps every name flat as
well)."""

from gpufleet.eks.args import AutoModeArgs as AutoModeArgs
from gpufleet.eks.args import EfaArgs as EfaArgs
from gpufleet.eks.args import EksFleetArgs as EksFleetArgs
from gpufleet.eks.args import NodeGroupArgs as NodeGroupArgs
from gpufleet.eks.args import TaintArgs as TaintArgs
from gpufleet.eks.eks_fleet import EksFleet as EksFleet
from gpufleet.eks.node_group import AcceleratedNodeGroup as AcceleratedNodeGroup
from gpufleet.eks.node_group import EksClusterRef as EksClusterRef
from gpufleet.eks.resolved import ResolvedNodeGroup as ResolvedNodeGroup
from gpufleet.karpenter.args import GpuSelectorArgs as GpuSelectorArgs
from gpufleet.karpenter.args import KarpenterArgs as KarpenterArgs
from gpufleet.karpenter.args import NeuronSelectorArgs as NeuronSelectorArgs
from gpufleet.karpenter.args import NodePoolArgs as NodePoolArgs
from gpufleet.karpenter.args import PoolEfaArgs as PoolEfaArgs
from gpufleet.karpenter.args import ReservationArgs as ReservationArgs
from gpufleet.karpenter.controller import Karpenter as Karpenter
from gpufleet.karpenter.node_pool import KarpenterNodePool as KarpenterNodePool
