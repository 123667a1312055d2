"""IAM roles of an EKS fleet: the cluster's (new clusters) and the nodes'."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpufleet.catalog.catalog import Catalog
from gpufleet.nodes.roles import managed_policy, trusting


class ServiceRole(pulumi.ComponentResource):
    """A role a service assumes, with exactly the AWS managed policies named in the curated facts."""

    def __init__(
        self,
        name: str,
        service: str,
        policies: list[str],
        description: str,
        opts: pulumi.ResourceOptions | None = None,
        actions: list[str] | None = None,
    ):
        super().__init__("gpufleet:eks:ServiceRole", name, None, opts)
        # The partition (aws, aws-cn, aws-us-gov) comes from the provider, never from a hand rule.
        partition = aws.get_partition(opts=pulumi.InvokeOptions(parent=self)).partition
        self.role = aws.iam.Role(
            name, assume_role_policy=trusting(service, actions), description=description, opts=pulumi.ResourceOptions(parent=self)
        )
        self.attachments = [managed_policy(f"{name}-{policy}", self.role, policy, partition, self) for policy in policies]
        self.register_outputs({"roleArn": self.role.arn})


def cluster_role(name: str, opts: pulumi.ResourceOptions, cat: Catalog, auto_mode: bool = False) -> ServiceRole:
    """The cluster's role; with EKS Auto Mode, its compute, storage, load balancing and networking policies too."""
    eks = cat.facts.eks
    if auto_mode:
        build = eks.auto_mode.build
        return ServiceRole(
            f"{name}-cluster",
            "eks.amazonaws.com",
            build.cluster_policies,
            "EKS Auto Mode cluster (gpufleet)",
            opts,
            build.cluster_trust_actions,
        )
    return ServiceRole(f"{name}-cluster", "eks.amazonaws.com", eks.cluster_policies.values, "EKS cluster (gpufleet)", opts)


def node_role(name: str, opts: pulumi.ResourceOptions, cat: Catalog, auto_mode: bool = False) -> ServiceRole:
    """The nodes' role; with EKS Auto Mode, the minimal policies its nodes need."""
    eks = cat.facts.eks
    policies = eks.auto_mode.build.node_policies if auto_mode else eks.node_policies.values
    return ServiceRole(f"{name}-nodes", "ec2.amazonaws.com", policies, "EKS accelerated nodes (gpufleet)", opts)
