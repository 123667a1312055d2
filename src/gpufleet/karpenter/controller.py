"""Karpenter installed on a cluster gpufleet creates, as its getting-started guide does
(catalog/cloudformation.py reads that guide's template unchanged): the nodes' role and its access
entry, the controller's role with the template's six policies through EKS Pod Identity, the
interruption queue with its policy and five EventBridge rules, and the pinned chart.

The chart's default affinity (karpenter.sh/nodepool DoesNotExist) keeps the controller off the nodes
it launches; its two replicas and their hostname anti-affinity need the system node group's two nodes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog, cloudformation
from gpufleet.catalog.catalog import Catalog
from gpufleet.karpenter.manifests import chart_values
from gpufleet.nodes.roles import trusting


def _policy_document(policy_name: str) -> Callable[[Mapping[str, str]], str]:
    """The controller's managed policy `policy_name`, a JSON document, from the template's values."""
    return lambda v: cloudformation.policy_documents(v)[policy_name]


class Karpenter(pulumi.ComponentResource):
    """Karpenter's AWS side and its chart, for one cluster (`node_role_name` goes in each EC2NodeClass)."""

    def __init__(
        self,
        name: str,
        cluster_name: pulumi.Input[str],
        region: str,
        k8s_provider: k8s.Provider,
        node_overlays: bool = False,
        depends_on: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        cat: Catalog | None = None,
    ):
        """`cat`: the catalog whose pinned chart and install facts it uses (absent: the process's own)."""
        super().__init__("gpufleet:karpenter:Karpenter", name, None, opts)
        cat = cat or catalog.load()
        install = cat.facts.karpenter.install
        invoke = pulumi.InvokeOptions(parent=self)
        partition = aws.get_partition(opts=invoke)
        account = aws.get_caller_identity_output(opts=invoke).account_id
        child = pulumi.ResourceOptions(parent=self)

        template_role = cloudformation.of_type("AWS::IAM::Role")["KarpenterNodeRole"]
        cluster = pulumi.Output.from_input(cluster_name)
        # The template's names (KarpenterNodeRole-<cluster>, a queue named as the cluster): the ARNs the
        # controller's policies name are then known before the role and the queue exist.
        role_name = cluster.apply(cloudformation.node_role_name)
        self.node_role = aws.iam.Role(
            f"{name}-nodes",
            name=role_name,
            path=template_role["Path"],
            assume_role_policy=trusting(f"ec2.{partition.dns_suffix}"),
            description="Karpenter nodes (gpufleet)",
            opts=child,
        )
        arns = cloudformation.resolve(template_role["ManagedPolicyArns"], {"AWS::Partition": partition.partition})
        attachments = [
            aws.iam.RolePolicyAttachment(f"{name}-nodes-{arn.rsplit('/', 1)[-1]}", role=self.node_role.name, policy_arn=arn, opts=child)
            for arn in arns
        ]
        self.access_entry = aws.eks.AccessEntry(
            f"{name}-nodes", cluster_name=cluster_name, principal_arn=self.node_role.arn, type=install.node_access_entry_type, opts=child
        )

        queue = cloudformation.of_type("AWS::SQS::Queue")["KarpenterInterruptionQueue"]
        queue_name = cluster.apply(lambda c: cloudformation.resolve(queue["QueueName"], {"ClusterName": c}))
        self.queue = aws.sqs.Queue(
            name,
            name=queue_name,
            message_retention_seconds=queue["MessageRetentionPeriod"],
            sqs_managed_sse_enabled=queue["SqsManagedSseEnabled"],
            opts=child,
        )
        queue_policy = cloudformation.of_type("AWS::SQS::QueuePolicy")["KarpenterInterruptionQueuePolicy"]["PolicyDocument"]
        aws.sqs.QueuePolicy(
            name,
            queue_url=self.queue.url,
            policy=self.queue.arn.apply(
                lambda arn: json.dumps(cloudformation.resolve(queue_policy, {"KarpenterInterruptionQueue.Arn": arn}))
            ),
            opts=child,
        )
        for rule_name, rule in cloudformation.of_type("AWS::Events::Rule").items():
            event_rule = aws.cloudwatch.EventRule(f"{name}-{rule_name}", event_pattern=json.dumps(rule["EventPattern"]), opts=child)
            for target in rule["Targets"]:
                aws.cloudwatch.EventTarget(
                    f"{name}-{rule_name}", rule=event_rule.name, target_id=target["Id"], arn=self.queue.arn, opts=child
                )

        self.controller_role = aws.iam.Role(
            f"{name}-controller",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": install.pod_identity_principal},
                            "Action": list(install.pod_identity_actions),
                        }
                    ],
                }
            ),
            description="Karpenter controller (gpufleet)",
            opts=child,
        )
        values = pulumi.Output.all(cluster, account, role_name, queue_name).apply(
            lambda v: {
                "ClusterName": v[0],
                "AWS::Partition": partition.partition,
                "AWS::Region": region,
                "AWS::AccountId": v[1],
                "KarpenterNodeRole.Arn": f"arn:{partition.partition}:iam::{v[1]}:role{template_role['Path']}{v[2]}",
                "KarpenterInterruptionQueue.Arn": f"arn:{partition.partition}:sqs:{region}:{v[1]}:{v[3]}",
            }
        )
        policies = [
            aws.iam.RolePolicy(
                f"{name}-{policy_name}",
                role=self.controller_role.id,
                policy=values.apply(_policy_document(policy_name)),
                opts=child,
            )
            for policy_name in cloudformation.of_type("AWS::IAM::ManagedPolicy")
        ]
        agent = aws.eks.Addon(
            f"{name}-pod-identity-agent", cluster_name=cluster_name, addon_name=install.pod_identity_agent_addon, opts=child
        )
        association = aws.eks.PodIdentityAssociation(
            name,
            cluster_name=cluster_name,
            namespace=install.namespace,
            service_account=install.service_account,
            role_arn=self.controller_role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[agent]),
        )
        chart = cat.facts.karpenter.chart
        self.release = k8s.helm.v3.Release(
            name,
            chart=chart.chart,
            version=chart.version,
            namespace=install.namespace,
            values=chart_values(cluster_name, self.queue.name, node_overlays, cat),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=k8s_provider,
                depends_on=[*(depends_on or []), association, *policies, *attachments, self.access_entry],
            ),
        )
        self.node_role_name = self.node_role.name
        self.register_outputs({"nodeRoleName": self.node_role.name, "interruptionQueue": self.queue.name})
