"""One Karpenter NodePool and its EC2NodeClass (and, for EFA outside reservations, the cluster
placement group its node class selects), as `manifests.py` writes them."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.karpenter import manifests
from gpufleet.karpenter.args import NodePoolArgs

NODE_POOL_API, NODE_CLASS_API = "karpenter.sh/v1", f"{manifests.NODE_CLASS_GROUP}/v1"


class KarpenterNodePool(pulumi.ComponentResource):
    """A GPU or Neuron NodePool: requirements, taint, labels, limits and disruption derived from the
    pool's args; its EC2NodeClass with the pinned AMI alias, the nodes' role, the given subnet and
    security-group selector terms, and EFA interfaces card by card. Create it with the cluster's
    Kubernetes provider, after Karpenter's chart (which brings the CRDs)."""

    def __init__(
        self,
        name: str,
        pool: NodePoolArgs,
        node_role_name: pulumi.Input[str],
        subnet_terms: list[Mapping],
        security_group_terms: list[Mapping],
        auto_mode: bool = False,
        shared_gpus: int = 1,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`auto_mode`: an EKS Auto Mode cluster's pool, of an eks.amazonaws.com/v1 NodeClass;
        `shared_gpus`: what each GPU counts for where NodeOverlays give Karpenter time-slicing's count;
        `cat`: the catalog its types and facts come from (absent: the process's own)."""
        super().__init__("gpufleet:karpenter:NodePool", name, None, opts)
        cat = cat or catalog.load()
        child = pulumi.ResourceOptions(parent=self)
        ref = manifests.node_class_ref(pool, cat, auto_mode)
        if auto_mode:
            node_class = manifests.auto_node_class_spec(pool, node_role_name, subnet_terms, security_group_terms)
            api_version = f"{ref['group']}/{cat.facts.eks.auto_mode.build.node_class_version}"
        else:
            placement_group = None
            if manifests.places_in_group(pool):
                placement_group = aws.ec2.PlacementGroup(name, strategy="cluster", opts=child).name
            node_class = manifests.node_class_spec(
                pool, node_role_name, subnet_terms, security_group_terms, cat, manifests.efa_interfaces(pool, cat), placement_group
            )
            api_version = NODE_CLASS_API
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-class",
            api_version=api_version,
            kind=ref["kind"],
            metadata=manifests.node_class_metadata(pool),
            spec=node_class,
            opts=child,
        )
        spec = manifests.node_pool_spec(pool, cat, manifests.limits(pool, cat, auto_mode, shared_gpus), auto_mode)
        self.node_pool = k8s.apiextensions.CustomResource(
            name,
            api_version=NODE_POOL_API,
            kind="NodePool",
            metadata={"name": pool.name},
            spec=spec,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.node_class]),
        )
        self.register_outputs({"nodePool": pool.name})
