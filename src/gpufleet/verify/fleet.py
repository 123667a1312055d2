"""What exists, as the APIs return it: Kubernetes objects and ECS descriptions as plain dicts, the
same whether read live or from a recording (`kubectl ... -o json`, `aws ecs describe-*`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.simulate.dra_objects import ResourceSlice


@dataclass
class KubeFleet:
    nodes: list[dict] | None = None  # None: not read (a recording without them)
    pods: list[dict] | None = None
    daemonsets: list[dict] | None = None
    slices: list[ResourceSlice] | None = None  # resource.k8s.io ResourceSlices, read by the allocator's parser
    claims: list[dict] | None = None  # resource.k8s.io ResourceClaims


@dataclass
class EcsFleet:
    container_instances: list[dict] | None = None
    tasks: list[dict] | None = None


@dataclass
class Observed:
    kube: KubeFleet | None = None
    ecs: EcsFleet | None = None
    nccl_log: str | None = None  # the launcher's log
    nccl_log_source: str | None = None  # the file or pod it came from
    where: str = ""  # how it was read, for the report
    gaps: list[str] = field(default_factory=list)
