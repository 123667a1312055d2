"""The untainted system node group of a cluster gpufleet creates: where CoreDNS, the MPI operator
and the NCCL test's launcher run, since every accelerated group is tainted."""

from __future__ import annotations

from typing import cast

import pulumi
import pulumi_aws as aws

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.eks.args import SystemNodeGroupArgs
from gpufleet.eks.node_group import base_template
from gpufleet.eks.resolved import system_ami_type

SYSTEM_GROUP = "system"
# The EKS name of the group is this prefix and a suffix the provider picks (see SystemNodeGroup).
SYSTEM_NAME_PREFIX = f"{SYSTEM_GROUP}-"


def system_labels() -> dict[str, str]:
    return {"gpufleet.io/node-role": SYSTEM_GROUP}


class SystemNodeGroup(pulumi.ComponentResource):
    """An on-demand managed node group on the AL2023 standard AMI of its architecture, no taints,
    with the same hardened launch template as the accelerated groups (IMDSv2, hop limit 1, encrypted)."""

    def __init__(
        self,
        name: str,
        args: SystemNodeGroupArgs,
        *,
        cluster_name: pulumi.Input[str],
        node_role_arn: pulumi.Input[str],
        subnet_ids: pulumi.Input[list[str]],
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`cat`: the catalog its type and AMI types come from (absent: the process's own)."""
        super().__init__("gpufleet:eks:SystemNodeGroup", name, None, opts)
        cat = cat or catalog.load()
        # A validated system group's type has a standard AMI type.
        ami_type = cast(str, system_ami_type(cat.get(args.instance_type), cat.facts.eks))
        child = pulumi.ResourceOptions(parent=self)
        self.launch_template = aws.ec2.LaunchTemplate(
            name,
            name=name,
            update_default_version=True,
            opts=child,
            **base_template(cat.facts.eks.standard_ami_types[ami_type], args.root_volume_gib, 1, SYSTEM_GROUP),
        )
        self.node_group = aws.eks.NodeGroup(
            name,
            cluster_name=cluster_name,
            # A prefix, not a name: a replacement creates the new group before the old one goes,
            # so CoreDNS and the controllers always have a node.
            node_group_name_prefix=SYSTEM_NAME_PREFIX,
            node_role_arn=node_role_arn,
            subnet_ids=subnet_ids,
            instance_types=[args.instance_type],
            ami_type=ami_type,
            capacity_type="ON_DEMAND",
            scaling_config={"min_size": args.min_size, "desired_size": args.desired_size, "max_size": args.max_size},
            labels=system_labels(),
            launch_template={"id": self.launch_template.id, "version": self.launch_template.latest_version.apply(str)},
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["scalingConfig.desiredSize"]),
        )
        self.register_outputs({"nodeGroupArn": self.node_group.arn})
