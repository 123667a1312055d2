"""Add GPU capacity to an ECS cluster and VPC you already run: instances on the ECS GPU-optimized AMI
(resolved from SSM), a capacity provider with managed scaling, and a service whose task asks for
GPUs and is pinned to the provider's instance type."""

import json

import pulumi
import pulumi_aws as aws

from gpufleet.library import CapacityProviderArgs, EcsClusterRef, GpuCapacityProvider, InstanceRole

config = pulumi.Config()
cluster_name = config.require("clusterName")

# Egress only: the ECS agent and the tasks dial out.
instances = aws.ec2.SecurityGroup(
    "gpu-instances",
    vpc_id=config.require("vpcId"),
    description="ECS GPU instances: egress only",
    egress=[{"protocol": "-1", "from_port": 0, "to_port": 0, "cidr_blocks": ["0.0.0.0/0"]}],
)
role = InstanceRole("gpu-instances", session_manager=False)
gpus = GpuCapacityProvider(
    "g6",
    CapacityProviderArgs(name="g6", instance_type="g6.12xlarge", min_size=0, desired_size=1, max_size=4),
    EcsClusterRef(
        name=cluster_name,
        subnet_ids=config.require_object("subnetIds"),
        security_group_id=instances.id,
        instance_profile_arn=role.profile.arn,
    ),
)
# The cluster's whole provider list: the ones it has, and the new one.
providers = aws.ecs.ClusterCapacityProviders(
    "ml-services",
    cluster_name=cluster_name,
    capacity_providers=[*config.require_object("existingCapacityProviders"), gpus.capacity_provider.name],
)

inference = aws.ecs.TaskDefinition(
    "inference",
    family="inference",
    requires_compatibilities=["EC2"],
    container_definitions=json.dumps([{
        "name": "server",
        "image": "public.ecr.aws/docker/library/python:3.12",
        "memory": 16384,
        "essential": True,
        "resourceRequirements": [{"type": "GPU", "value": "4"}],
        # ECS does not set it: without it, images not built on NVIDIA's CUDA images see no driver.
        "environment": [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility,compute"}],
    }]),
    placement_constraints=[{"type": "memberOf", "expression": "attribute:ecs.instance-type == g6.12xlarge"}],
)
aws.ecs.Service(
    "inference",
    name="inference",
    cluster=cluster_name,
    task_definition=inference.arn,
    desired_count=1,
    capacity_provider_strategies=[{"capacity_provider": gpus.capacity_provider.name, "weight": 1}],
    opts=pulumi.ResourceOptions(depends_on=[providers]),
)

pulumi.export("capacityProvider", gpus.capacity_provider.name)
