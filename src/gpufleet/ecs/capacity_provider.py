"""One GPU or Neuron instance type as ECS capacity: launch template, Auto Scaling group, capacity provider."""

from __future__ import annotations

import base64

import pulumi
import pulumi_aws as aws

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.ecs.args import CapacityProviderArgs
from gpufleet.ecs.cluster_ref import EcsClusterRef
from gpufleet.ecs.resolved import ResolvedCapacityProvider, capacity_provider_name, resolve
from gpufleet.nodes.hardening import ebs, metadata_options


class GpuCapacityProvider(pulumi.ComponentResource):
    """Launch template on the ECS GPU or Neuron AMI (IMDSv2 only, encrypted gp3 root, no public IP unless
    asked), an Auto Scaling group ECS manages (scale-in protected, `AmazonECSManaged`), and the
    capacity provider with managed scaling and managed termination protection."""

    def __init__(
        self,
        name: str,
        args: CapacityProviderArgs | ResolvedCapacityProvider,
        cluster: EcsClusterRef,
        *,
        provider_name: str | None = None,
        ami_id: pulumi.Input[str] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`provider_name` defaults to `<cluster name>-<args.name>` (capacity provider names are
        unique per account and region); `ami_id` to the type's ECS GPU or Neuron AMI in
        `args.ami_variant`, read from SSM through the resource's provider; `cat`: the catalog it
        resolves against (absent: the process's own)."""
        # The instances' user data names the cluster at preview, and they boot with the instance profile.
        if not isinstance(cluster.name, str):
            raise ValueError(
                f"EcsClusterRef.name = {cluster.name!r}: the instances' user data names the cluster; give its name as a string"
            )
        if cluster.instance_profile_arn is None:
            raise ValueError(
                "EcsClusterRef.instance_profile_arn: missing; Auto Scaling capacity runs with an instance profile (InstanceRole's profile.arn)"
            )
        cluster_name, instance_profile_arn = cluster.name, cluster.instance_profile_arn
        subnet_ids, security_group_id = cluster.subnet_ids, cluster.security_group_id
        super().__init__("gpufleet:ecs:GpuCapacityProvider", name, None, opts)
        self.resolved = resolve(args, cat or catalog.load())
        args = self.resolved.args
        self._name = name
        self._args = args
        self._cluster_name = cluster_name
        self.provider_name = provider_name or capacity_provider_name(cluster_name, args.name)
        if ami_id is None:
            ami_id = aws.ssm.get_parameter_output(name=self.resolved.ami_parameter, opts=pulumi.InvokeOptions(parent=self)).value
        self.launch_template = self._launch_template(ami_id, instance_profile_arn, security_group_id)
        self.group = self._auto_scaling_group(subnet_ids)
        self.capacity_provider = self._capacity_provider()
        self.register_outputs(
            {
                "capacityProviderName": self.capacity_provider.name,
                "launchTemplateId": self.launch_template.id,
                "autoScalingGroupArn": self.group.arn,
            }
        )

    def _launch_template(self, ami_id, instance_profile_arn, security_group_id) -> aws.ec2.LaunchTemplate:
        a = self._args
        tags = {"Name": self.provider_name, "gpufleet-capacity-provider": self.provider_name}
        return aws.ec2.LaunchTemplate(
            self._name,
            name=self.provider_name,
            image_id=ami_id,
            instance_type=a.instance_type,
            iam_instance_profile={"arn": instance_profile_arn},
            user_data=base64.b64encode(self.resolved.user_data(self._cluster_name).encode()).decode(),
            metadata_options=metadata_options(a.metadata_hop_limit),
            block_device_mappings=[{"device_name": self.resolved.root_device_name, "ebs": ebs(a.root_volume_gib)}],
            # Security groups go on the interface: a template with interfaces may not also set them.
            network_interfaces=[
                {
                    "device_index": 0,
                    "associate_public_ip_address": "true" if a.associate_public_ip else "false",
                    "delete_on_termination": "true",
                    "security_groups": [security_group_id],
                }
            ],
            tag_specifications=[
                {"resource_type": "instance", "tags": tags},
                {"resource_type": "volume", "tags": tags},
            ],
            update_default_version=True,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _auto_scaling_group(self, subnet_ids) -> aws.autoscaling.Group:
        a = self._args
        template = {"id": self.launch_template.id, "version": "$Latest"}
        spot = a.purchase == "spot"
        return aws.autoscaling.Group(
            self._name,
            name=self.provider_name,
            min_size=a.min_size,
            max_size=a.max_size,
            desired_capacity=a.desired_size,
            vpc_zone_identifiers=subnet_ids,
            # Managed termination protection only works when ECS can lift the protection itself.
            protect_from_scale_in=True,
            launch_template=None if spot else template,
            mixed_instances_policy=(
                {
                    "launch_template": {
                        "launch_template_specification": {
                            "launch_template_id": self.launch_template.id,
                            "version": "$Latest",
                        }
                    },
                    "instances_distribution": {
                        "on_demand_base_capacity": 0,
                        "on_demand_percentage_above_base_capacity": 0,
                        "spot_allocation_strategy": "price-capacity-optimized",
                    },
                }
                if spot
                else None
            ),
            capacity_rebalance=spot,
            tags=[
                {"key": "AmazonECSManaged", "value": "true", "propagate_at_launch": True},
                {"key": "Name", "value": self.provider_name, "propagate_at_launch": True},
            ],
            # ECS managed scaling owns the desired capacity once the group exists.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["desiredCapacity"]),
        )

    def _capacity_provider(self) -> aws.ecs.CapacityProvider:
        return aws.ecs.CapacityProvider(
            self._name,
            name=self.provider_name,
            auto_scaling_group_provider={
                "auto_scaling_group_arn": self.group.arn,
                "managed_termination_protection": "ENABLED",
                "managed_draining": "ENABLED",
                "managed_scaling": {"status": "ENABLED", "target_capacity": self._args.target_capacity},
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
