"""The ECS cluster capacity joins, as your program knows it: one typed record for what gpufleet cannot
know of your account, the same for Auto Scaling and Managed Instances capacity providers."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class EcsClusterRef:
    """`name` is the cluster's; `subnet_ids` and `security_group_id` are where the instances run.
    `instance_profile_arn` is the instance role's profile of Auto Scaling capacity (InstanceRole's
    `profile.arn`); Managed Instances bring their own and take none."""

    name: pulumi.Input[str]
    subnet_ids: pulumi.Input[list[str]]
    security_group_id: pulumi.Input[str]
    instance_profile_arn: pulumi.Input[str] | None = None
