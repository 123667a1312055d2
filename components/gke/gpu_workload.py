"""A Deployment or Job whose container asks for nvidia.com/gpu on a GKE GPU pool: requests equal
limits (GPUs are limits-only extended resources, 003), the pool's labels selected, GKE's GPU taint
tolerated."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.catalog import catalog
from gpufleet.components.gke.args import GkeWorkloadArgs


def gpu_toleration() -> dict:
    """Tolerates GKE's nvidia.com/gpu=present:NoSchedule (003's example: operator Exists)."""
    taint = catalog.load().facts.gke.gpu_taint
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def pod_template(wl: GkeWorkloadArgs, node_selector: dict[str, str], restart: str) -> dict:
    resource = catalog.load().facts.eks.accelerator_resources.nvidia
    amount = str(wl.gpus)
    container: dict = {"name": wl.name, "image": wl.image, "resources": {"requests": {resource: amount}, "limits": {resource: amount}}}
    if wl.command:
        container["command"] = list(wl.command)
    spec = {"containers": [container], "nodeSelector": node_selector, "tolerations": [gpu_toleration()], "restartPolicy": restart}
    return {"metadata": {"labels": {"app": wl.name}}, "spec": spec}


class GpuWorkload(pulumi.ComponentResource):
    """A Deployment or Job on one GPU pool (`workload_selector(pool, gpus)` gives the selector). Give
    it the cluster's Kubernetes provider."""

    def __init__(self, name: str, wl: GkeWorkloadArgs, node_selector: dict[str, str], opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpufleet:gke:GpuWorkload", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        metadata = {"name": wl.name, "labels": {"app": wl.name}}
        if wl.kind == "Deployment":
            self.workload = k8s.apps.v1.Deployment(
                name,
                metadata=metadata,
                spec={"replicas": wl.replicas, "selector": {"matchLabels": {"app": wl.name}}, "template": pod_template(wl, node_selector, "Always")},
                opts=child,
            )
        else:
            self.workload = k8s.batch.v1.Job(
                name,
                metadata=metadata,
                spec={"parallelism": wl.replicas, "completions": wl.replicas, "template": pod_template(wl, node_selector, "Never")},
                opts=child,
            )
        self.register_outputs({})
