"""A Deployment or Job whose container asks for a slice of one GPU: `aliyun.com/gpu-mem` GiB and,
on core_mem pools, `aliyun.com/gpu-core.percentage` (004). It selects its pool by label."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.ack.args import AckWorkloadArgs
from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog


def gpu_share_limits(wl: AckWorkloadArgs, cat: Catalog) -> dict[str, str]:
    """Extended resources go in limits (Kubernetes sets the request equal), as 004's examples do."""
    ack = cat.facts.ack
    limits = {ack.memory_resource: str(wl.gpu_mem_gib)}
    if wl.gpu_core_percentage is not None:
        limits[ack.compute_resource] = str(wl.gpu_core_percentage)
    return limits


def pod_template(wl: AckWorkloadArgs, node_selector: dict[str, str], tolerations: list[dict], restart: str, cat: Catalog) -> dict:
    container = {"name": wl.name, "image": wl.image, "resources": {"limits": gpu_share_limits(wl, cat)}}
    if wl.command:
        container["command"] = list(wl.command)
    spec = {"containers": [container], "nodeSelector": node_selector, "restartPolicy": restart}
    if tolerations:
        spec["tolerations"] = tolerations
    return {"metadata": {"labels": {"app": wl.name}}, "spec": spec}


class SharedGpuWorkload(pulumi.ComponentResource):
    """A Deployment or Job whose pods share a GPU by memory (and compute percentage on core_mem
    pools): limits from the args, the pool's selector (`workload_selector(pool)`) and tolerations
    of its taint. Give it the cluster's Kubernetes provider."""

    def __init__(
        self,
        name: str,
        wl: AckWorkloadArgs,
        node_selector: dict[str, str],
        tolerations: list[dict],
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`cat`: the catalog that names the shared-GPU resources (absent: the process's own)."""
        cat = cat or catalog.load()
        # The type token keeps its first spelling: it is part of every child URN, so renaming it would
        # replace the running workloads of deployed stacks.
        super().__init__("gpufleet:k8s:SharedGpuWorkload", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        metadata = {"name": wl.name, "labels": {"app": wl.name}}
        if wl.kind == "Deployment":
            self.workload = k8s.apps.v1.Deployment(
                name,
                metadata=metadata,
                spec={
                    "replicas": wl.replicas,
                    "selector": {"matchLabels": {"app": wl.name}},
                    "template": pod_template(wl, node_selector, tolerations, "Always", cat),
                },
                opts=child,
            )
        else:
            self.workload = k8s.batch.v1.Job(
                name,
                metadata=metadata,
                spec={
                    "parallelism": wl.replicas,
                    "completions": wl.replicas,
                    "template": pod_template(wl, node_selector, tolerations, "Never", cat),
                },
                opts=child,
            )
        self.register_outputs({})
