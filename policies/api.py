"""What the AWS APIs refuse beyond their shapes, service quotas, and the Kubernetes syntax of node
labels and taints: each rule is a predicate of components/catalog (api_rules, quotas, k8s_rules),
the functions the stack spec calls."""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, StackValidationArgs, StackValidationPolicy

from gpufleet.components.apis import aws_rules as api_rules, aws as aws_api
from gpufleet.components.catalog import catalog
from gpufleet.components.rules import k8s as k8s_rules
from gpufleet.components.rules.quotas import quota_problem
from gpufleet.policies.ecs_task import EcsTask

from gpufleet.policies.inputs import depended_on, get, items, plain
from gpufleet.components.catalog import tokens


def _validate_api_model(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type not in aws_api.CHECKED_TYPES:
        return
    # Not strict: another program's inputs with no member of the create call map to other calls.
    request = aws_api.to_request({"type": args.resource_type, "inputs": plain(args.props, aws_api.UNKNOWN)}, strict=False)
    for problem in request.problems:
        report(f"{request.service} {problem}")


def _validate_essential(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.ECS_TASK_DEFINITION:
        return
    reason = api_rules.essential_container_problem(EcsTask(args.props).containers)
    if reason:
        report(reason)


def _validate_launch_type(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.ECS_SERVICE:
        return
    reason = api_rules.service_launch_type_problem(get(args.props, "launchType"), items(get(args.props, "capacityProviderStrategies")))
    if reason:
        report(reason)


def _validate_template_groups(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.LAUNCH_TEMPLATE:
        return
    reason = api_rules.launch_template_security_groups_problem(plain(args.props))
    if reason:
        report(reason)


def _validate_node_group_template(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != tokens.EKS_NODE_GROUP:
        return
    for reason in api_rules.node_group_template_problems(plain(args.props)):
        report(reason)


def _validate_capacity_blocks(args: StackValidationArgs, report: ReportViolation) -> None:
    for group in args.resources:
        if group.resource_type != tokens.EKS_NODE_GROUP:
            continue
        templates = depended_on(group, tokens.LAUNCH_TEMPLATE)
        for reason in api_rules.capacity_block_problems(plain(group.props), plain(templates[0].props) if templates else None):
            report(f"capacity block node group {group.name!r}: {reason}", group.urn)


def _quota_findings(args: StackValidationArgs):
    """(problem, urn) of every quota the plan passes."""
    quotas = catalog.load().facts.quotas
    found = []
    for r in args.resources:
        if r.resource_type == tokens.ECS_TASK_DEFINITION:
            found.append((quota_problem("ecsContainersPerTaskDefinition", len(EcsTask(r.props).containers), quotas), r.urn))
        elif r.resource_type == tokens.ECS_CLUSTER_CAPACITY_PROVIDERS:
            providers = items(get(r.props, "capacityProviders"))
            found.append((quota_problem("ecsCapacityProvidersPerCluster", len(providers), quotas), r.urn))
            sizes = [get(g.props, "maxSize") for cp in depended_on(r, tokens.ECS_CAPACITY_PROVIDER) for g in depended_on(cp, tokens.ASG)]
            found.append((quota_problem("ecsContainerInstancesPerCluster", int(sum(s for s in sizes if isinstance(s, (int, float)))), quotas), r.urn))
        elif r.resource_type == tokens.EKS_NODE_GROUP:
            size = get(r.props, "scalingConfig", "maxSize")
            if isinstance(size, (int, float)):
                found.append((quota_problem("eksNodesPerManagedNodeGroup", int(size), quotas), r.urn))
    per_cluster: dict[str, list] = {}
    for group in (r for r in args.resources if r.resource_type == tokens.EKS_NODE_GROUP):
        cluster = get(group.props, "clusterName")
        per_cluster.setdefault(cluster if isinstance(cluster, str) else "", []).append(group)
    for groups in per_cluster.values():
        found.append((quota_problem("eksManagedNodeGroupsPerCluster", len(groups), quotas), groups[-1].urn))
    return [(p, urn) for p, urn in found if p is not None]


def _validate_quotas(args: StackValidationArgs, report: ReportViolation) -> None:
    for problem, urn in _quota_findings(args):
        if problem.mandatory:
            report(problem.message, urn)


def _validate_adjustable_quotas(args: StackValidationArgs, report: ReportViolation) -> None:
    for problem, urn in _quota_findings(args):
        if not problem.mandatory:
            report(problem.message, urn)


def _validate_node_labels(args: ResourceValidationArgs, report: ReportViolation) -> None:
    facts = catalog.load().facts.kubernetes
    if args.resource_type == tokens.EKS_NODE_GROUP:
        labels = plain(get(args.props, "labels")) or {}
        taints = [t for t in plain(get(args.props, "taints")) or [] if isinstance(t, Mapping)]
    elif args.resource_type == tokens.ACK_NODE_POOL:
        labels = {l.get("key"): l.get("value") for l in plain(get(args.props, "labels")) or [] if isinstance(l, Mapping) and isinstance(l.get("key"), str)}
        taints = [t for t in plain(get(args.props, "taints")) or [] if isinstance(t, Mapping)]
    else:
        return
    for where, _, reason in k8s_rules.node_label_problems(labels if isinstance(labels, Mapping) else {}, taints, facts):
        report(f"{'.'.join(map(str, where))}: {reason}")


POLICIES = [
    ResourceValidationPolicy(
        name="aws-api-model",
        description="ECS task definitions, services and capacity providers, launch templates, Auto Scaling groups, EKS clusters "
        "and node groups, IAM roles, VPCs, subnets and security groups are create requests the API's model (botocore) accepts: "
        "types, required members, enums, lengths, ranges and patterns.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_api_model,
        remediation_steps="Fix the named member as the AWS API reference for the request describes it.",
    ),
    ResourceValidationPolicy(
        name="ecs-essential-container",
        description="An ECS task definition has at least one essential container.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_essential,
        remediation_steps="Mark the container whose exit ends the task essential: true.",
    ),
    ResourceValidationPolicy(
        name="ecs-service-launch-type",
        description="An ECS service sets a launch type or a capacity provider strategy, not both.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_launch_type,
        remediation_steps="Omit launchType when the service uses a capacity provider strategy.",
    ),
    ResourceValidationPolicy(
        name="ec2-launch-template-security-groups",
        description="A launch template with network interfaces puts its security groups on the interfaces, not on the template.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_template_groups,
        remediation_steps="Move vpcSecurityGroupIds into each network interface's securityGroups.",
    ),
    ResourceValidationPolicy(
        name="eks-node-group-launch-template",
        description="A managed node group with a launch template sets neither diskSize nor remoteAccess.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_node_group_template,
        remediation_steps="Set the volume size (blockDeviceMappings) and SSH keys in the launch template instead.",
    ),
    StackValidationPolicy(
        name="eks-capacity-block",
        description="A CAPACITY_BLOCK node group names its type in the launch template only, and the template targets the block.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_capacity_blocks,
        remediation_steps="Drop instanceTypes; set instanceType, instanceMarketOptions.marketType capacity-block and the reservation target in the launch template.",
    ),
    StackValidationPolicy(
        name="aws-service-quotas",
        description="Counts stay within the service quotas AWS does not raise: capacity providers per ECS cluster, containers per task "
        "definition, container instances per ECS cluster.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_quotas,
        remediation_steps="Split the fleet into more clusters or task definitions.",
    ),
    StackValidationPolicy(
        name="aws-service-quotas-adjustable",
        description="Counts past the default of adjustable service quotas: managed node groups per EKS cluster, nodes per node group.",
        enforcement_level=EnforcementLevel.ADVISORY,
        validate=_validate_adjustable_quotas,
        remediation_steps="Request a quota increase (Service Quotas console) before deploying.",
    ),
    ResourceValidationPolicy(
        name="k8s-node-labels",
        description="Node labels and taints of EKS node groups and ACK pools are valid Kubernetes keys and values, and labels the "
        "kubelet may set on its Node (no kubernetes.io or k8s.io namespace but its own).",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=_validate_node_labels,
        remediation_steps="Use your own label domain (example.com/role) and values of at most 63 letters, digits, '-', '_' or '.'.",
    ),
]
