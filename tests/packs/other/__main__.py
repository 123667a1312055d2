"""Someone else's pack: any Python CrossGuard pack runs through `--policy-pack`."""

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def _prefix(args, report):
    if args.resource_type == "aws:ecs/cluster:Cluster" and not str(args.props.get("name", "")).startswith("prod-"):
        report(f"cluster name {args.props.get('name')!r} does not start with prod-")


PolicyPack(
    "naming",
    [ResourceValidationPolicy("ecs-cluster-name-prefix", "ECS cluster names start with prod-.", _prefix, EnforcementLevel.MANDATORY)],
)
