"""A pack with a remediation: launch templates get IMDSv2 instead of a violation, when the policy
runs at the remediate level; another policy then analyses the remediated inputs."""

from collections.abc import Mapping, Sequence

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _require_tokens(args, report):
    if args.resource_type == LAUNCH_TEMPLATE and (args.props.get("metadataOptions") or {}).get("httpTokens") != "required":
        report("httpTokens is not required")


def _plain(value):
    if isinstance(value, Mapping):
        return {k: _plain(value[k]) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


def _set_tokens(args):
    if args.resource_type != LAUNCH_TEMPLATE:
        return None
    props = _plain(args.props)
    props["metadataOptions"] = {**(props.get("metadataOptions") or {}), "httpTokens": "required"}
    return props


PolicyPack(
    "remediating",
    [
        ResourceValidationPolicy("set-imdsv2", "Launch templates get IMDSv2.", _require_tokens, EnforcementLevel.MANDATORY, remediate=_set_tokens),
        ResourceValidationPolicy("imdsv2-checked", "Launch templates require IMDSv2.", _require_tokens, EnforcementLevel.MANDATORY),
    ],
)
