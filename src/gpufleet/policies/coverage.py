"""What the pack could not judge: each policy's own account of the resources it was not able to
decide before apply (a region, a zone or an instance type not known yet), so a compliance run never
reads a pass where no verdict was given (src/gpufleet/policies/registry.py, `unjudged=`)."""

from __future__ import annotations

from pulumi_policy import ReportViolation, StackValidationArgs

from gpufleet.policies.registry import Policies, not_judged

POLICIES = Policies(__name__)


@POLICIES.stack("rules-not-judged")
def _validate_not_judged(args: StackValidationArgs, report: ReportViolation) -> None:
    for policy, urn, reason in not_judged(args):
        report(f"{policy} was not judged: {reason}", urn)
