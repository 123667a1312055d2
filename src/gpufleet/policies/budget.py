"""Budget rules: what the plan's groups cost, priced from the catalog's snapshot by the functions the
preview and the diff use (src/gpufleet/plans/cost.py, src/gpufleet/rules/cost.py), held to the ceilings
the policy config gives. Without a ceiling there is nothing to hold: the policy says nothing.

A group whose price is unknown (a Capacity Block, reserved capacity, Alibaba Cloud, a region not known
before apply) is not priced: `rules-not-judged` names it, and the totals held are those of the
groups priced, said to be incomplete. A ceiling is never passed on a guess.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pulumi
from pulumi_policy import ReportViolation, StackValidationArgs

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.engine.patches.stack_config import per_stack
from gpufleet.plans import cost as plan_cost
from gpufleet.plans.index import Resource
from gpufleet.policies.inputs import typed
from gpufleet.policies.placement import placement_of
from gpufleet.policies.registry import Policies
from gpufleet.rules import cost as cost_rules

POLICIES = Policies(__name__)

_CEILINGS = ("maxMonthlyAtMax", "maxIdleMonthly", "maxPricePerAcceleratorHour")


def _resources(args: StackValidationArgs) -> list[Resource]:
    """The stack's resources, typed, and the providers they name (whose region prices them)."""
    resources = [typed(r) for r in args.resources]
    known = {r.urn for r in resources}
    providers = {r.provider.urn: r.provider for r in args.resources if r.provider is not None and r.provider.urn not in known}
    return resources + [typed(p) for p in providers.values()]


def _hints() -> dict[str, str]:
    """The stack's regions where a provider does not give one: the engine's (aws:region, then the
    environment the AWS provider reads)."""
    return plan_cost.plan_hints({}, os.environ, pulumi.Config("aws").get("region"))


def _cost(args: StackValidationArgs, cat: Catalog) -> dict:
    # The placement names the nodes the groups do not (a pulumi-eks component's): the same one the
    # placement policies judged, worked out once.
    return plan_cost.plan_cost(_resources(args), placement_of(args).as_dict(), _hints(), cat=cat)


def _ceilings(args: StackValidationArgs) -> dict:
    config = args.get_config() or {}
    return {k: config.get(k) for k in _CEILINGS if config.get(k) is not None}


# The stack judged last and its cost, when fleet-budget held ceilings: rules-not-judged (served after
# it, with its own config) names the groups it could not price.
_JUDGED: list = []
per_stack(_JUDGED.clear)


def _unpriced(args: StackValidationArgs) -> list[tuple[str, str]]:
    if not _JUDGED or _JUDGED[0] != [r.urn for r in args.resources]:
        return []
    return [(u["urn"], f"{u['group']} ({u['instanceType']}) has no price: {u['reason']}") for u in _JUDGED[1]["unpriced"]]


@POLICIES.stack("fleet-budget", unjudged=_unpriced)
def _validate_budget(args: StackValidationArgs, report: ReportViolation) -> None:
    _JUDGED.clear()
    ceilings = _ceilings(args)
    if not ceilings:
        return
    cost = _cost(args, catalog.load())
    _JUDGED[:] = [[r.urn for r in args.resources], cost]
    partial = "" if cost["complete"] else f" (at least: {len(cost['unpriced'])} group(s) of unknown price not counted)"
    prices = f"; {cost['prices']['stated']}"
    for found in (
        cost_rules.over_monthly_max(cost["total"]["monthly"]["max"], ceilings.get("maxMonthlyAtMax")),
        cost_rules.over_idle(cost["total"]["idleMonthly"], ceilings.get("maxIdleMonthly")),
    ):
        if found:
            report(found + partial + prices, None)
    per_hour = ceilings.get("maxPricePerAcceleratorHour")
    if isinstance(per_hour, Mapping):
        for g in cost["groups"]:
            found = cost_rules.over_accelerator_hour(g["perAcceleratorHour"], g["purchase"], dict(per_hour))
            if found:
                report(f"{g['platform']} {g['group']} ({g['instanceType']}): {found}{prices}", g["urn"])
