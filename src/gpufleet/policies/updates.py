"""Update rules: a plan that replaces or removes a group carrying running capacity (directly, or
through what it reads: its Auto Scaling group, subnets, security group or cluster) drains it, and says
what drains.

CrossGuard's analyzer sees the stack as it will be, never the operation that gets it there, so the
policy needs the deployed stack as its config: `deployed`, the resources of the plan that is live
(a gpufleet plan's `resources`, as `gpufleet diff` passes them). Without it there is nothing to
compare, and the policy says nothing. The replacement rules are the diff's
(src/gpufleet/plans/replacement.py), the capacity the deployed plan's groups
(src/gpufleet/plans/groups.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import cast

from pulumi_policy import ReportViolation, StackValidationArgs

from gpufleet.apis.values import whole_numbers
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.catalog.wording import counted
from gpufleet.plans import replacement
from gpufleet.plans.groups import CARRIED, accelerated_groups
from gpufleet.plans.index import Resource, from_plan
from gpufleet.policies.inputs import plain, typed
from gpufleet.policies.registry import Policies

POLICIES = Policies(__name__)


def _deployed(config: Mapping) -> dict[str, Resource]:
    rows = whole_numbers(config.get("deployed") or [])
    plan = [r for r in rows if isinstance(r, Mapping) and isinstance(r.get("urn"), str) and isinstance(r.get("type"), str)]
    return {replacement.key(r.urn): r for r in from_plan({"resources": plan})}


@POLICIES.stack("update-drains-capacity")
def _validate_drains(args: StackValidationArgs, report: ReportViolation) -> None:
    old = _deployed(args.get_config())
    if not old:
        return  # no deployed stack given: an update cannot be told from a first create
    new = {
        # Unknown values as the plan writes them, so a deployed plan's markers compare equal.
        replacement.key(r.urn): dataclasses.replace(typed(r), props=whole_numbers(plain(r.props, UNKNOWN)))
        for r in args.resources
    }
    going = replacement.direct(old, new)
    replacement.cascade(going, old, new)
    for group in accelerated_groups(list(old.values())).values():
        total = group.totals()
        if not any(total.values()):
            continue  # no accelerators (or no instances) to drain
        gkey = replacement.key(group.urn)
        if gkey not in going:
            continue
        what = ", ".join(counted(total[k], noun) for k, noun in CARRIED if total[k])
        desired = cast(int, group.sizes.get("desired"))  # not None: totals() counted instances from it
        instances = counted(desired, f"running {group.instance_type} instance")
        stop = "drains and its jobs stop" if desired == 1 else "drain and their jobs stop"
        report(
            f"{group.platform} {group.name} is {going[gkey]} by this update: its {instances} with {what} {stop}",
            new[gkey].urn if gkey in new else None,
        )
