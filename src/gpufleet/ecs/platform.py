"""Amazon ECS as gpufleet's stack file, program and summary reach it (src/gpufleet/platform/record.py)."""

from __future__ import annotations

from gpufleet.platform.record import Platform
from gpufleet.platform.summary_rows import group


def _build(fleet, region, opts, cat):
    from gpufleet.ecs.gpu_cluster import GpuCluster

    cluster = GpuCluster(fleet.cluster_name, fleet, region, opts=opts, cat=cat)
    return {"ecsClusterArn": cluster.cluster.arn}


def _summary(fleet, region, cat):
    from gpufleet.ecs import summary
    from gpufleet.ecs.resolved import resolve

    groups = []
    for cp in fleet.capacity_providers:
        details = {"purchase": cp.purchase, "amiVariant": cp.ami_variant}
        groups.append(group(resolve(cp, cat).instance, "ecs", cp.name, (cp.min_size, cp.desired_size, cp.max_size), details))
    part = {"groups": groups, "workloads": summary.workload_rows(fleet, region, cat)}
    if fleet.managed_instance_providers:
        part["managedInstances"] = [summary.managed_row(mp, region, cat) for mp in fleet.managed_instance_providers]
    return part


PLATFORM = Platform(
    "ecs",
    "An ECS cluster of GPU or Neuron instances; absent provisions none.",
    _build,
    _summary,
    aws=True,
)
