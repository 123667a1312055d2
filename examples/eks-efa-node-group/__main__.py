"""Add an EFA node group to an EKS cluster you already run, with the device plugins its nodes need and
an NCCL all-reduce job that proves the fabric. Everything of your account comes from config."""

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.library import AcceleratedNodeGroup, DevicePlugins, EfaArgs, EksClusterRef, NcclTest, NodeGroupArgs, served_groups

config = pulumi.Config()

p5 = NodeGroupArgs(
    name="p5-train",
    instance_type="p5.48xlarge",
    min_size=0,
    desired_size=2,
    max_size=2,
    # Interfaces laid out from the type's network cards; one zone; a cluster placement group.
    efa=EfaArgs(availability_zone=config.require("zone")),
)
# The cluster you run, as your account knows it; the group's one EFA subnet.
cluster_ref = EksClusterRef(
    name=config.require("clusterName"),
    security_group_id=config.require("clusterSecurityGroupId"),
    node_role_arn=config.require("nodeRoleArn"),
    vpc_id=config.require("vpcId"),
    subnet_ids=[config.require("subnetId")],
)
nodes = AcceleratedNodeGroup("p5-train", p5, cluster_ref)

cluster = k8s.Provider("ml-prod", context=config.require("kubeContext"))
# The NVIDIA and EFA plugins, tolerating the group's taints; they schedule once the nodes exist.
plugins = DevicePlugins(
    "accelerators",
    served_groups([p5]),
    opts=pulumi.ResourceOptions(provider=cluster, depends_on=[nodes.node_group]),
)
NcclTest("p5-train", nodes.nccl_target, config.require("ncclImage"), opts=pulumi.ResourceOptions(provider=cluster, depends_on=[plugins]))

pulumi.export("nodeGroupArn", nodes.node_group.arn)
