"""One accelerated EKS managed node group: its launch template (IMDSv2, encrypted root, EFA
interfaces card by card), EFA security group and placement group, and the node group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pulumi
import pulumi_aws as aws

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import AcceleratedAmiType, StandardAmiType
from gpufleet.eks.args import NodeGroupArgs
from gpufleet.eks.resolved import ResolvedNodeGroup, places_in_group, repair_config, resolve
from gpufleet.nodes.hardening import ebs, metadata_options


def volumes(ami: AcceleratedAmiType | StandardAmiType, size_gib: int) -> list[dict]:
    """Encrypted gp3 volumes of the AMI's layout; the size goes where images and pods live (the data
    volume where the AMI has one, else the root volume, which then keeps its snapshot's size)."""

    data = getattr(ami, "data_device_name", None)
    if data is not None:
        return [{"device_name": ami.root_device_name, "ebs": ebs(None)}, {"device_name": data, "ebs": ebs(size_gib)}]
    return [{"device_name": ami.root_device_name, "ebs": ebs(size_gib)}]


def base_template(ami: AcceleratedAmiType | StandardAmiType, size_gib: int, hop_limit: int, name: str) -> dict:
    """What every gpufleet node's launch template sets: IMDSv2 only, encrypted gp3 volumes, a Name tag."""
    return {
        "metadata_options": metadata_options(hop_limit),
        "block_device_mappings": volumes(ami, size_gib),
        "tag_specifications": [{"resource_type": "instance", "tags": {"Name": name, "gpufleet-node-group": name}}],
    }


@dataclass(frozen=True)
class EksClusterRef:
    """The cluster a node group joins, as your program knows it: what gpufleet cannot know of your
    account. `subnet_ids` are the group's subnets unless its args name them (`subnet_ids`)."""

    name: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    subnet_ids: pulumi.Input[list[str]] | None = None


def group_subnets(args: NodeGroupArgs, cluster: EksClusterRef, placed: bool) -> pulumi.Input[list[str]]:
    """The group's subnets, given once: by its args or by the cluster reference. `zones` place a
    group in a VPC the stack file creates, which a `placed` group's fleet turned into the
    reference's subnets; a group of your own has no such VPC, so zones there would be ignored."""
    if args.zones is not None and not placed:
        raise ValueError(
            f"zones = {list(args.zones)}: zones place a group in a VPC the stack file creates; give its subnets (subnet_ids, or EksClusterRef.subnet_ids)"
        )
    if args.subnet_ids and cluster.subnet_ids is not None:
        raise ValueError(
            f"subnetIds = {list(args.subnet_ids)}: the group's subnets are given twice (its args and EksClusterRef.subnet_ids); give them once"
        )
    if args.subnet_ids:
        return list(args.subnet_ids)
    if cluster.subnet_ids is None:
        raise ValueError(
            f"subnetIds of node group {args.name!r}: missing; give them in its args (subnet_ids) or in EksClusterRef.subnet_ids"
        )
    return cluster.subnet_ids


class AcceleratedNodeGroup(pulumi.ComponentResource):
    """A managed node group on an accelerated AMI type with its own launch template; with EFA, the
    template's interfaces, the self-referencing security group and the placement (group or reservation)."""

    def __init__(
        self,
        name: str,
        args: NodeGroupArgs | ResolvedNodeGroup,
        cluster: EksClusterRef,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`args`: the group's args (resolved here: AMI type, labels, taints, EFA interfaces from the
        catalog), or the ResolvedNodeGroup the fleet resolved once (and placed: its zones are
        the reference's subnets). `cluster`: the cluster it joins. `cat`: the catalog it resolves
        against (absent: the process's own)."""
        super().__init__("gpufleet:eks:AcceleratedNodeGroup", name, None, opts)
        placed = isinstance(args, ResolvedNodeGroup)
        self._cat = cat = cat or catalog.load()
        self.resolved = group = resolve(args, cat)
        args = group.args
        subnet_ids = group_subnets(args, cluster, placed)
        cluster_name, cluster_security_group_id, node_role_arn, vpc_id = (
            cluster.name,
            cluster.security_group_id,
            cluster.node_role_arn,
            cluster.vpc_id,
        )
        self._name, self._args = name, args
        # What an NcclTest across these nodes needs (NcclTest(name, group.nccl_target, image)).
        self.nccl_target = group.nccl_target
        self.security_group = self._efa_security_group(vpc_id) if args.efa else None
        self.placement_group = aws.ec2.PlacementGroup(name, strategy="cluster", opts=self._child()) if places_in_group(args) else None
        # A validated group's type has an accelerated AMI type (eks-ami-type-supported).
        self.launch_template = self._launch_template(cluster_security_group_id, cast(str, group.ami_type))
        self.node_group = aws.eks.NodeGroup(
            name,
            cluster_name=cluster_name,
            node_group_name=args.name,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids,
            instance_types=None if args.capacity_type == "CAPACITY_BLOCK" else [args.instance_type],
            ami_type=group.ami_type,
            capacity_type=args.capacity_type,
            scaling_config={"min_size": args.min_size, "desired_size": args.desired_size, "max_size": args.max_size},
            labels=group.labels,
            taints=list(group.taints),
            node_repair_config=repair_config(args),
            launch_template={"id": self.launch_template.id, "version": self.launch_template.latest_version.apply(str)},
            # The cluster autoscaler owns the node count once the group exists. The group keeps the
            # stack's name (taints, selectors and dashboards name it), and EKS refuses a second group
            # of that name: a replacement deletes the old group first (its nodes drain, its capacity
            # is 0 until the new group is up; accelerated capacity rarely exists twice anyway).
            opts=self._child(ignore_changes=["scalingConfig.desiredSize"], delete_before_replace=True),
        )
        self.register_outputs({"nodeGroupArn": self.node_group.arn, "launchTemplateId": self.launch_template.id})

    def _child(self, **kwargs) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, **kwargs)

    def _efa_security_group(self, vpc_id) -> aws.ec2.SecurityGroup:
        # EFA traffic matches only security-group-id rules: an egress to 0.0.0.0/0 does not cover it.
        return aws.ec2.SecurityGroup(
            f"{self._name}-efa",
            vpc_id=vpc_id,
            description=f"EFA between the nodes of {self._args.name}: all traffic to and from itself",
            ingress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA from the group"}],
            egress=[
                {"protocol": "-1", "from_port": 0, "to_port": 0, "self": True, "description": "EFA to the group"},
                {"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"], "description": "other egress"},
            ],
            opts=self._child(),
        )

    def _launch_template(self, cluster_security_group_id, ami_type: str) -> aws.ec2.LaunchTemplate:
        a = self._args
        eks = self._cat.facts.eks
        template = base_template(eks.accelerated_ami_types[ami_type], a.root_volume_gib, a.metadata_hop_limit, a.name)
        if a.capacity_type == "CAPACITY_BLOCK":
            # EKS takes a capacity block's instance type from the launch template only (EKS user
            # guide, capacity blocks for managed node groups; eksctl and terraform-aws-eks do the same).
            template["instance_type"] = a.instance_type
        if a.efa is not None:
            # Security groups go on the interfaces: a template with interfaces may not also set them.
            # An EFA group has its security group (__init__).
            groups = [cast("aws.ec2.SecurityGroup", self.security_group).id, cluster_security_group_id]
            template["network_interfaces"] = [
                {
                    "device_index": i.device_index,
                    "network_card_index": i.network_card_index,
                    "interface_type": i.interface_type if i.interface_type != "interface" else None,
                    "security_groups": groups,
                    "delete_on_termination": "true",
                }
                for i in self.resolved.efa_interfaces
            ]
        if self.placement_group is not None:
            template["placement"] = {"group_name": self.placement_group.name}
        if a.capacity_reservation_id is not None:
            template["capacity_reservation_specification"] = {
                "capacity_reservation_target": {"capacity_reservation_id": a.capacity_reservation_id}
            }
            if a.capacity_type == "CAPACITY_BLOCK":
                template["instance_market_options"] = {"market_type": "capacity-block"}
        return aws.ec2.LaunchTemplate(self._name, name=self._name, update_default_version=True, opts=self._child(), **template)
