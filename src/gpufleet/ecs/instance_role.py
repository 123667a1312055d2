"""IAM role and instance profile for ECS container instances."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from gpufleet.nodes.roles import managed_policy, trusting

# AWS managed policies, by path under arn:<partition>:iam::aws:policy/.
ECS_INSTANCE_POLICY = "service-role/AmazonEC2ContainerServiceforEC2Role"
SSM_CORE_POLICY = "AmazonSSMManagedInstanceCore"


class InstanceRole(pulumi.ComponentResource):
    """The role ECS container instances assume (`ec2.amazonaws.com`), with exactly the managed
    policy the agent needs to register and run tasks, plus Session Manager access when asked."""

    def __init__(self, name: str, session_manager: bool, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpufleet:ecs:InstanceRole", name, None, opts)
        self._name = name
        # The partition (aws, aws-cn, aws-us-gov) comes from the provider, never from a hand rule.
        self._partition = aws.get_partition(opts=pulumi.InvokeOptions(parent=self)).partition
        self.role = self._role()
        policies = [ECS_INSTANCE_POLICY] + ([SSM_CORE_POLICY] if session_manager else [])
        self.attachments = [self._attachment(p) for p in policies]
        self.profile = self._profile()
        self.register_outputs({"roleArn": self.role.arn, "instanceProfileArn": self.profile.arn})

    def _role(self) -> aws.iam.Role:
        return aws.iam.Role(
            self._name,
            assume_role_policy=trusting("ec2.amazonaws.com"),
            description="ECS container instances (gpufleet)",
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _attachment(self, policy: str) -> aws.iam.RolePolicyAttachment:
        return managed_policy(f"{self._name}-{policy.rsplit('/', 1)[-1]}", self.role, policy, self._partition, self)

    def _profile(self) -> aws.iam.InstanceProfile:
        return aws.iam.InstanceProfile(
            self._name,
            role=self.role.name,
            # Instances launched before the policy is attached would fail to register.
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.attachments),
        )
