"""IAM roles a service assumes (EC2 for nodes, EKS for a cluster, ECS for Managed Instances) with AWS
managed policies attached: the trust document and the attachment, written once."""

from __future__ import annotations

import json

import pulumi
import pulumi_aws as aws


def trusting(service: str, actions: list[str] | None = None) -> str:
    """The assume-role policy that lets `service` (ec2.amazonaws.com, ...) assume the role (`actions`:
    more than sts:AssumeRole, as EKS Auto Mode's cluster role needs sts:TagSession)."""
    action = list(actions) if actions else "sts:AssumeRole"
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": action}]})


def managed_policy(name: str, role: aws.iam.Role, policy: str, partition: str, parent: pulumi.Resource) -> aws.iam.RolePolicyAttachment:
    """AWS managed policy `policy` (its path below `policy/`) attached to the role; the partition
    (aws, aws-cn, aws-us-gov) is the provider's."""
    return aws.iam.RolePolicyAttachment(
        name, role=role.name, policy_arn=f"arn:{partition}:iam::aws:policy/{policy}", opts=pulumi.ResourceOptions(parent=parent)
    )
