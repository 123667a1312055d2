"""Amazon EKS as gpufleet's stack file, program and summary reach it (src/gpufleet/platform/record.py)."""

from __future__ import annotations

from gpufleet.platform.record import Platform
from gpufleet.platform.summary_rows import group


def _build(fleet, region, opts, cat):
    from gpufleet.eks.eks_fleet import EksFleet

    eks = EksFleet(fleet.cluster.name, fleet, region, opts=opts, cat=cat)
    return {"eksClusterName": eks.cluster_name}


def _repair(ng, cat) -> str:
    """What repairs the group's nodes, in the summary's words."""
    return (
        cat.facts.eks.node_health.repair
        if ng.repair.enabled
        else "none: nodeRepairConfig is off (a node that lost a GPU stays in the group)"
    )


def _summary(fleet, region, cat):
    from gpufleet.eks.resolved import resolve
    from gpufleet.k8s.nccl_test import nccl_size

    groups = []
    for ng in fleet.node_groups:
        resolved = resolve(ng, cat)
        details = {"purchase": ng.capacity_type, "amiType": resolved.ami_type, "repair": _repair(ng, cat)}
        groups.append(group(resolved.instance, "eks", ng.name, (ng.min_size, ng.desired_size, ng.max_size), details, resolved.efa_count))
    from gpufleet.eks.resolved import auto_mode
    from gpufleet.karpenter import manifests

    auto = auto_mode(fleet)
    for pool in fleet.node_pools:
        # At most maxNodes of the largest type it admits (what its limits are made of); none at rest.
        types = manifests.admitted(pool, cat, auto)
        if not types:
            continue
        largest = max(types, key=lambda it: (manifests.accelerators_of(it), it.vcpus, it.name))
        details = {
            "purchase": "/".join(pool.capacity_types),
            "provisioner": "EKS Auto Mode" if auto else "Karpenter",
            "typesAdmitted": len(types),
        }
        if not auto:
            details["amiAlias"] = f"{pool.ami_family}@{pool.ami_version}"
        else:
            details["repair"] = cat.facts.eks.node_health.auto_mode_repair
        efa = len([i for i in manifests.efa_interfaces(pool, cat, auto) if i.interface_type == "efa-only"]) if pool.efa is not None else 0
        groups.append(group(largest, "eks", pool.name, (0, 0, pool.max_nodes), details, efa))
    part = {"groups": groups}
    if fleet.kubernetes is not None and fleet.kubernetes.nccl_test is not None:
        name = fleet.kubernetes.nccl_test.node_group
        part["ncclTest"] = nccl_size(resolve(next(ng for ng in fleet.node_groups if ng.name == name), cat).nccl_target)
    return part


PLATFORM = Platform(
    "eks",
    "An EKS cluster with accelerated managed node groups (EFA); absent provisions none.",
    _build,
    _summary,
    aws=True,
    placement=True,
)
