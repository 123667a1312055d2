"""An ECS Managed Instances capacity provider: the infrastructure role ECS assumes to launch and retire
instances, the instance role and profile the instances run with, and the capacity provider with its
instance requirements, bound to one cluster."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpufleet.catalog.catalog import InstanceType
from gpufleet.ecs.args import ManagedInstanceProviderArgs, RangeArgs
from gpufleet.ecs.cluster_ref import EcsClusterRef
from gpufleet.nodes.roles import managed_policy, trusting
from gpufleet.rules.managed_instances import INFRASTRUCTURE_POLICY, INSTANCE_POLICY, INSTANCE_ROLE_PREFIX


def instance_role_name(provider_name: str) -> str:
    """`ecsInstanceRole-<provider>`: the prefix the infrastructure policy's iam:PassRole admits; IAM
    role names have at most 64 characters."""
    return f"{INSTANCE_ROLE_PREFIX}-{provider_name}"[:64]


def _range(r: RangeArgs | None, floor: int | None = None) -> dict | None:
    if r is None and floor is None:
        return None
    low = r.min if r is not None and r.min is not None else floor
    return {k: v for k, v in (("min", low), ("max", r.max if r is not None else None)) if v is not None}


class ManagedInstancesCapacityProvider(pulumi.ComponentResource):
    """ECS launches instances of an admitted type as tasks need them; the provider belongs to its cluster."""

    def __init__(
        self,
        name: str,
        args: ManagedInstanceProviderArgs,
        cluster: EcsClusterRef,
        *,
        provider_name: str,
        candidates: list[InstanceType],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`candidates` are the types the requirements admit (checks.managed_candidates): unset vCPU and
        memory floors become the smallest candidate's, which the API requires and which exclude none."""
        super().__init__("gpufleet:ecs:ManagedInstancesCapacityProvider", name, None, opts)
        self._name = name
        self._args = args
        self.provider_name = provider_name
        self._partition = aws.get_partition(opts=pulumi.InvokeOptions(parent=self)).partition
        self.infrastructure_role = self._role(f"{name}-infrastructure", "ecs.amazonaws.com", INFRASTRUCTURE_POLICY, None)
        self.instance_role = self._role(f"{name}-instance", "ec2.amazonaws.com", INSTANCE_POLICY, instance_role_name(provider_name))
        self.instance_profile = aws.iam.InstanceProfile(
            f"{name}-instance",
            name=instance_role_name(provider_name),
            role=self.instance_role[0].name,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.instance_role[1]]),
        )
        self.capacity_provider = aws.ecs.CapacityProvider(
            name,
            name=provider_name,
            cluster=cluster.name,
            managed_instances_provider={
                "infrastructure_role_arn": self.infrastructure_role[0].arn,
                "propagate_tags": "CAPACITY_PROVIDER",
                "instance_launch_template": {
                    "ec2_instance_profile_arn": self.instance_profile.arn,
                    "network_configuration": {"subnets": cluster.subnet_ids, "security_groups": [cluster.security_group_id]},
                    "storage_configuration": {"storage_size_gib": args.storage_gib},
                    "capacity_option_type": "SPOT" if args.purchase == "spot" else "ON_DEMAND",
                    "instance_requirements": self._requirements(candidates),
                },
            },
            # ECS checks the roles when the provider is created: attach the policies first.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.infrastructure_role[1], self.instance_profile]),
        )
        self.register_outputs(
            {
                "capacityProviderName": self.capacity_provider.name,
                "infrastructureRoleArn": self.infrastructure_role[0].arn,
                "instanceProfileArn": self.instance_profile.arn,
            }
        )

    def _role(self, name: str, service: str, policy: str, role_name: str | None) -> tuple[aws.iam.Role, aws.iam.RolePolicyAttachment]:
        role = aws.iam.Role(
            name,
            name=role_name,
            assume_role_policy=trusting(service),
            description=f"ECS Managed Instances {self.provider_name} (gpufleet)",
            opts=pulumi.ResourceOptions(parent=self),
        )
        return role, managed_policy(f"{name}-{policy}", role, policy, self._partition, self)

    def _requirements(self, candidates: list[InstanceType]) -> dict:
        a = self._args
        requirements = {
            "vcpu_count": _range(a.vcpu_count, min(it.vcpus for it in candidates)),
            "memory_mib": _range(a.memory_mib, min(it.memory_mib for it in candidates)),
            "accelerator_count": _range(a.accelerator_count),
            "accelerator_total_memory_mib": _range(a.accelerator_total_memory_mib),
            "accelerator_manufacturers": list(a.accelerator_manufacturers) or None,
            "accelerator_names": list(a.accelerator_names) or None,
            "allowed_instance_types": list(a.instance_types) or None,
        }
        return {k: v for k, v in requirements.items() if v is not None}
