"""ECS Managed Instances rules over any program's capacity providers and the roles they pass."""

from __future__ import annotations

from pulumi_policy import ReportViolation, ResourceValidationArgs, StackValidationArgs

from gpufleet.catalog import catalog, tokens
from gpufleet.policies.inputs import depended_on, get, provider_region
from gpufleet.policies.registry import Policies
from gpufleet.rules import managed_instances

POLICIES = Policies(__name__)


@POLICIES.resource("ecs-managed-instances-match", only=tokens.ECS_CAPACITY_PROVIDER)
def _validate_requirements_match(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if get(args.props, "managedInstancesProvider") is None:
        return
    region = provider_region(args, "aws", "AWS_REGION", "AWS_DEFAULT_REGION")
    reason = managed_instances.no_match_problem(managed_instances.requirements_of(args.props), region, catalog.load())
    if reason:
        report(reason, None)


@POLICIES.stack("ecs-managed-instances-role-name")
def _validate_instance_role_name(args: StackValidationArgs, report: ReportViolation) -> None:
    """With the AWS managed infrastructure policy, ECS may pass only roles named ecsInstanceRole*
    (ECS developer guide, "Amazon ECS Managed Instances instance profile"): another name fails at
    task launch, not at create, and autonamed roles (CloudFormation's, Pulumi's) never match."""
    attachments = [r for r in args.resources if r.resource_type == tokens.IAM_ROLE_POLICY_ATTACHMENT]
    for cp in args.resources:
        if cp.resource_type != tokens.ECS_CAPACITY_PROVIDER or get(cp.props, "managedInstancesProvider") is None:
            continue
        infrastructure = {r.urn for r in depended_on(cp, tokens.IAM_ROLE)}
        managed_policy = any(
            str(get(a.props, "policyArn") or "").endswith(f"/{managed_instances.INFRASTRUCTURE_POLICY}")
            and infrastructure & {r.urn for r in depended_on(a, tokens.IAM_ROLE)}
            for a in attachments
        )
        if not managed_policy:
            continue  # a custom infrastructure policy may pass any role name
        for profile in depended_on(cp, tokens.IAM_INSTANCE_PROFILE):
            for role in depended_on(profile, tokens.IAM_ROLE):
                name = get(role.props, "name")
                if not isinstance(name, str) or not name.startswith(managed_instances.INSTANCE_ROLE_PREFIX):
                    report(
                        f"capacity provider {cp.name!r} passes instance role {name or '(autonamed)'!r} through its instance profile, but "
                        f"its infrastructure role's {managed_instances.INFRASTRUCTURE_POLICY} passes only roles named "
                        f"{managed_instances.INSTANCE_ROLE_PREFIX}*: tasks fail at launch",
                        role.urn,
                    )
