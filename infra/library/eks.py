"""Amazon EKS: an accelerated managed node group with EFA joining a cluster you run (EksClusterRef),
the whole fleet, and their args.

`from gpufleet.library.eks import ...`: its public names (gpufleet.library keeps every name flat as
well)."""

from gpufleet.components.eks.args import EfaArgs, EksFleetArgs, NodeGroupArgs, TaintArgs
from gpufleet.components.eks.eks_fleet import EksFleet
from gpufleet.components.eks.node_group import AcceleratedNodeGroup, EksClusterRef

__all__ = ["AcceleratedNodeGroup", "EfaArgs", "EksClusterRef", "EksFleet", "EksFleetArgs", "NodeGroupArgs", "TaintArgs"]
