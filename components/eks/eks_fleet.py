"""An EKS fleet: network, cluster (new or existing), node role, accelerated node groups."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.catalog import catalog
from components.eks import checks
from components.eks.args import EksFleetArgs
from components.eks.iam import cluster_role, node_role
from components.eks.node_group import AcceleratedNodeGroup
from components.network.vpc import Vpc


class EksFleet(pulumi.ComponentResource):
    def __init__(self, name: str, args: EksFleetArgs, region: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpufleet:eks:EksFleet", name, None, opts)
        self._name, self._args, self._region = name, args, region
        self._vpc_id, self._subnet_ids, self._zone_subnets = self._network()
        self.cluster_name, self.cluster_security_group_id = self._cluster()
        self.node_role = node_role(name, self._child())
        self.node_groups = {
            ng.name: AcceleratedNodeGroup(
                f"{name}-{ng.name}",
                ng,
                cluster_name=self.cluster_name,
                cluster_security_group_id=self.cluster_security_group_id,
                node_role_arn=self.node_role.role.arn,
                subnet_ids=self._node_subnets(ng),
                vpc_id=self._vpc_id,
                ami_type=checks.ami_type(ng, catalog.load()),
                # Nodes register with the cluster under the role's policies: attach them first.
                opts=self._child(*self.node_role.attachments),
            )
            for ng in args.node_groups
        }
        self.register_outputs({"clusterName": self.cluster_name, "nodeGroups": [g.node_group.arn for g in self.node_groups.values()]})

    def _child(self, *depends_on: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, depends_on=list(depends_on))

    def _network(self):
        net = self._args.network
        if net.create is None:
            return net.vpc_id, list(net.subnet_ids), {}
        zones = list(checks.vpc_zones(self._args, catalog.load(), self._region)[: net.create.az_count])
        vpc = Vpc(self._name, net.create.cidr, zones, opts=self._child())
        return vpc.vpc_id, vpc.private_subnet_ids, dict(zip(zones, vpc.private_subnets))

    def _cluster(self) -> tuple[pulumi.Input[str], pulumi.Input[str]]:
        c = self._args.cluster
        if c.create is None:
            return c.name, c.security_group_id
        role = cluster_role(self._name, self._child())
        cluster = aws.eks.Cluster(
            self._name,
            name=c.name,
            version=c.create.version,
            role_arn=role.role.arn,
            vpc_config={
                "subnet_ids": self._subnet_ids,
                "endpoint_private_access": True,
                "endpoint_public_access": c.create.endpoint_public_access,
            },
            access_config={"authentication_mode": c.create.authentication_mode, "bootstrap_cluster_creator_admin_permissions": True},
            opts=self._child(*role.attachments),
        )
        self.cluster = cluster
        return cluster.name, cluster.vpc_config.cluster_security_group_id

    def _node_subnets(self, ng) -> pulumi.Input[list[str]]:
        if ng.subnet_ids:
            return list(ng.subnet_ids)
        zone = checks.efa_zone(ng, self._args, catalog.load(), self._region)
        if zone is not None and zone in self._zone_subnets:
            return [self._zone_subnets[zone].id]  # EFA: the one zone's subnet
        return self._subnet_ids
