"""A Deployment or Job whose container asks for nvidia.com/gpu on one GPU node pool: requests equal
limits (GPUs are limits-only extended resources, 003), the pool's labels selected, the pool's GPU
taint tolerated. GKE and AKS fleets build their workloads with it. On a DRA node group the container
claims its devices through a ResourceClaim (template) instead (dra_claims.py)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.k8s.args import GpuWorkloadArgs
from gpufleet.k8s.dra_claims import POD_CLAIM, Claim, claim_object


def pod_template(
    wl: GpuWorkloadArgs,
    node_selector: dict[str, str],
    tolerations: list[dict],
    restart: str,
    cat: Catalog,
    annotations: dict[str, str] | None = None,
    claim: Claim | None = None,
) -> dict:
    """`claim`: on a DRA node group, the workload's claim, which the container uses instead of nvidia.com/gpu."""
    resource = cat.facts.eks.accelerator_resources.nvidia
    amount = str(wl.gpus)
    resources: dict = {"claims": [{"name": POD_CLAIM}]} if claim else {"requests": {resource: amount}, "limits": {resource: amount}}
    container: dict = {"name": wl.name, "image": wl.image, "resources": resources}
    if wl.command:
        container["command"] = list(wl.command)
    spec: dict = {"containers": [container], "nodeSelector": node_selector, "tolerations": tolerations, "restartPolicy": restart}
    if claim:
        spec["resourceClaims"] = [claim.pod_reference()]
    metadata: dict = {"labels": {"app": wl.name}}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"metadata": metadata, "spec": spec}


def workload_object(
    wl: GpuWorkloadArgs,
    node_selector: dict[str, str],
    tolerations: list[dict],
    cat: Catalog,
    annotations: dict[str, str] | None = None,
    claim: Claim | None = None,
) -> tuple[str, dict]:
    """The Deployment or Job (type token, metadata and spec) the component creates, which the
    spec's placement check simulates too."""
    metadata = {"name": wl.name, "labels": {"app": wl.name}}
    if wl.kind == "Deployment":
        spec = {
            "replicas": wl.replicas,
            "selector": {"matchLabels": {"app": wl.name}},
            "template": pod_template(wl, node_selector, tolerations, "Always", cat, annotations, claim),
        }
        return tokens.K8S_DEPLOYMENT, {"metadata": metadata, "spec": spec}
    spec = {
        "parallelism": wl.replicas,
        "completions": wl.replicas,
        "template": pod_template(wl, node_selector, tolerations, "Never", cat, annotations, claim),
    }
    return tokens.K8S_JOB, {"metadata": metadata, "spec": spec}


class GpuWorkload(pulumi.ComponentResource):
    """A Deployment or Job on one GPU pool: give it the pool's node selector and the tolerations of
    the pool's taints, and the cluster's Kubernetes provider."""

    def __init__(
        self,
        name: str,
        wl: GpuWorkloadArgs,
        node_selector: dict[str, str],
        tolerations: list[dict],
        annotations: dict[str, str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
        claim: Claim | None = None,
    ):
        """`annotations`: the pod template's (karpenter.sh/do-not-disrupt for a Job on a NodePool);
        `cat`: the catalog that names the GPU resource it requests (absent: the process's own);
        `claim`: on a DRA node group, the claim it creates and its pods use instead of nvidia.com/gpu."""
        super().__init__("gpufleet:k8s:GpuWorkload", name, None, opts)
        cat = cat or catalog.load()
        after = [self._claim(name, claim, cat)] if claim else []
        token, obj = workload_object(wl, node_selector, tolerations, cat, annotations, claim)
        kind = k8s.apps.v1.Deployment if token == tokens.K8S_DEPLOYMENT else k8s.batch.v1.Job
        self.workload = kind(name, metadata=obj["metadata"], spec=obj["spec"], opts=pulumi.ResourceOptions(parent=self, depends_on=after))
        self.register_outputs({})

    def _claim(self, name: str, claim: Claim, cat: Catalog) -> pulumi.Resource:
        """The ResourceClaimTemplate (or shared ResourceClaim) the pods name: created before them."""
        obj = claim_object(claim, cat.facts.dra)
        kind = k8s.resource.v1.ResourceClaimTemplate if claim.kind == "ResourceClaimTemplate" else k8s.resource.v1.ResourceClaim
        return kind(f"{name}-claim", metadata=obj["metadata"], spec=obj["spec"], opts=pulumi.ResourceOptions(parent=self))
