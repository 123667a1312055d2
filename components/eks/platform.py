"""Amazon EKS as gpufleet's stack file, program and summary reach it (components/platform.py)."""

from __future__ import annotations

from gpufleet.components.platform import Platform
from gpufleet.components.summary_rows import group


def _build(fleet, region, opts):
    from gpufleet.components.eks.eks_fleet import EksFleet

    eks = EksFleet(fleet.cluster.name, fleet, region, opts=opts)
    return {"eksClusterName": eks.cluster_name}


def _summary(fleet, region, cat):
    from gpufleet.components.eks.resolved import resolve
    from gpufleet.components.k8s.nccl_test import nccl_size

    groups = []
    for ng in fleet.node_groups:
        resolved = resolve(ng, cat)
        details = {"purchase": ng.capacity_type, "amiType": resolved.ami_type}
        groups.append(group(resolved.instance, "eks", ng.name, (ng.min_size, ng.desired_size, ng.max_size), details, resolved.efa_count))
    part = {"groups": groups}
    if fleet.kubernetes is not None and fleet.kubernetes.nccl_test is not None:
        name = fleet.kubernetes.nccl_test.node_group
        part["ncclTest"] = nccl_size(resolve(next(ng for ng in fleet.node_groups if ng.name == name), cat).nccl_target)
    return part


PLATFORM = Platform(
    "eks",
    "An EKS cluster with accelerated managed node groups (EFA); absent provisions none.",
    _build, _summary, aws=True, placement=True,
)
