"""What the AWS APIs refuse beyond their shapes, service quotas, and the Kubernetes syntax of node
labels and taints: each rule is a predicate of src/gpufleet/catalog (api_rules, quotas, k8s_rules),
the functions the stack spec calls."""

from __future__ import annotations

from collections.abc import Mapping

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.apis import aws as aws_api
from gpufleet.apis import aws_rules as api_rules
from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.policies.ecs_task import read_task
from gpufleet.policies.inputs import depended_on, get, items, plain
from gpufleet.policies.k8s import containers, pod_specs
from gpufleet.policies.registry import Policies
from gpufleet.rules import images
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules.quotas import quota_problem

POLICIES = Policies(__name__)


@POLICIES.resource("aws-api-model", only=aws_api.CHECKED_TYPES)
def _validate_api_model(args: ResourceValidationArgs, report: ReportViolation) -> None:
    # Not strict: another program's inputs with no member of the create call map to other calls.
    request = aws_api.to_request(args.resource_type, plain(args.props, aws_api.UNKNOWN), strict=False)
    for problem in request.problems:
        report(f"{request.service} {problem}", None)


@POLICIES.resource("container-image-reference")
def _validate_image_reference(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type == tokens.ECS_TASK_DEFINITION:
        for c in read_task(args.props, catalog.load()).containers:
            reason = images.ecs_image_problem(c.get("image"))
            if reason:
                report(f"container {c.get('name', '?')!r}: {reason}", None)
        return
    for where, pod in pod_specs(args.resource_type, args.props):
        for c in containers(pod):
            reason = images.reference_problem(get(c, "image"))
            if reason:
                report(f"{where}: container {c.get('name', '?')!r}: {reason}", None)


@POLICIES.resource("ecs-essential-container", on=tokens.ECS_TASK_DEFINITION)
def _validate_essential(args: ResourceValidationArgs, report: ReportViolation) -> None:
    reason = api_rules.essential_container_problem(read_task(args.props, catalog.load()).containers)
    if reason:
        report(reason, None)


@POLICIES.resource("ecs-service-launch-type", on=tokens.ECS_SERVICE)
def _validate_launch_type(args: ResourceValidationArgs, report: ReportViolation) -> None:
    reason = api_rules.service_launch_type_problem(get(args.props, "launchType"), items(get(args.props, "capacityProviderStrategies")))
    if reason:
        report(reason, None)


@POLICIES.resource("ec2-launch-template-security-groups", on=tokens.LAUNCH_TEMPLATE)
def _validate_template_groups(args: ResourceValidationArgs, report: ReportViolation) -> None:
    reason = api_rules.launch_template_security_groups_problem(plain(args.props))
    if reason:
        report(reason, None)


@POLICIES.resource("eks-node-group-launch-template", on=tokens.EKS_NODE_GROUP)
def _validate_node_group_template(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for reason in api_rules.node_group_template_problems(plain(args.props)):
        report(reason, None)


@POLICIES.stack("eks-capacity-block")
def _validate_capacity_blocks(args: StackValidationArgs, report: ReportViolation) -> None:
    for group in args.resources:
        if group.resource_type != tokens.EKS_NODE_GROUP:
            continue
        templates = depended_on(group, tokens.LAUNCH_TEMPLATE)
        for reason in api_rules.capacity_block_problems(plain(group.props), plain(templates[0].props) if templates else None):
            report(f"capacity block node group {group.name!r}: {reason}", group.urn)


def _auto_mode_unknown(resource) -> str | None:
    """A cluster whose Auto Mode settings are known only after apply."""
    props, auto_mode = plain(resource.props, tokens.UNKNOWN), catalog.load().facts.eks.auto_mode
    values = [api_rules.at(props, path) for path in auto_mode.capabilities] + [props.get("bootstrapSelfManagedAddons")]
    return "its Auto Mode settings are not known before apply" if tokens.UNKNOWN in values else None


@POLICIES.resource("eks-auto-mode-capabilities", on=tokens.EKS_CLUSTER, unjudged=_auto_mode_unknown)
def _validate_auto_mode(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for reason in api_rules.auto_mode_problems(plain(args.props), catalog.load().facts.eks.auto_mode):
        report(f"EKS cluster {args.name!r} {reason}", None)


def _quota_findings(args: StackValidationArgs, cat: Catalog):
    """(problem, urn) of every quota the plan passes."""
    quotas = cat.facts.quotas
    found = []
    for r in args.resources:
        if r.resource_type == tokens.ECS_TASK_DEFINITION:
            found.append((quota_problem("ecsContainersPerTaskDefinition", len(read_task(r.props, cat).containers), quotas), r.urn))
        elif r.resource_type == tokens.ECS_CLUSTER_CAPACITY_PROVIDERS:
            providers = items(get(r.props, "capacityProviders"))
            found.append((quota_problem("ecsCapacityProvidersPerCluster", len(providers), quotas), r.urn))
            sizes = [get(g.props, "maxSize") for cp in depended_on(r, tokens.ECS_CAPACITY_PROVIDER) for g in depended_on(cp, tokens.ASG)]
            found.append(
                (quota_problem("ecsContainerInstancesPerCluster", int(sum(s for s in sizes if isinstance(s, (int, float)))), quotas), r.urn)
            )
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


@POLICIES.stack("aws-service-quotas")
def _validate_quotas(args: StackValidationArgs, report: ReportViolation) -> None:
    for problem, urn in _quota_findings(args, catalog.load()):
        if problem.mandatory:
            report(problem.message, urn)


@POLICIES.stack("aws-service-quotas-adjustable")
def _validate_adjustable_quotas(args: StackValidationArgs, report: ReportViolation) -> None:
    for problem, urn in _quota_findings(args, catalog.load()):
        if not problem.mandatory:
            report(problem.message, urn)


@POLICIES.resource("k8s-node-labels", only=(tokens.EKS_NODE_GROUP, tokens.ACK_NODE_POOL))
def _validate_node_labels(args: ResourceValidationArgs, report: ReportViolation) -> None:
    facts = catalog.load().facts.kubernetes
    if args.resource_type == tokens.EKS_NODE_GROUP:
        labels = plain(get(args.props, "labels")) or {}
        taints = [t for t in plain(get(args.props, "taints")) or [] if isinstance(t, Mapping)]
    else:  # an ACK node pool
        labels = {
            label.get("key"): label.get("value")
            for label in plain(get(args.props, "labels")) or []
            if isinstance(label, Mapping) and isinstance(label.get("key"), str)
        }
        taints = [t for t in plain(get(args.props, "taints")) or [] if isinstance(t, Mapping)]
    for where, _, reason in k8s_rules.node_label_problems(labels if isinstance(labels, Mapping) else {}, taints, facts):
        report(f"{'.'.join(map(str, where))}: {reason}", None)
