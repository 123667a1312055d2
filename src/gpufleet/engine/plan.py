"""The JSON plan (design.md contract): the resources of a preview, its outputs, policy and summary."""

from __future__ import annotations

import os
from typing import Any

from gpufleet.engine.recorded import ProgramRun, RecordedResource
from gpufleet.plans import cost as plan_cost
from gpufleet.plans import placement as plan_placement
from gpufleet.plans.index import Resource, from_plan
from gpufleet.stack.summary import SUMMARY_OUTPUT

PLAN_VERSION = 1


def tree_order(resources: list[RecordedResource]) -> list[RecordedResource]:
    """Parents before children, siblings by URN: the same order on every run, whatever order the
    asynchronous registrations arrived in."""
    children: dict[str, list[RecordedResource]] = {}
    for r in resources:
        children.setdefault(r.parent, []).append(r)
    ordered: list[RecordedResource] = []

    def visit(parent: str) -> None:
        for r in sorted(children.get(parent, []), key=lambda r: r.urn):
            ordered.append(r)
            visit(r.urn)

    visit("")
    return ordered


def plan_resource(r: RecordedResource) -> dict:
    entry: dict[str, Any] = {
        "urn": r.urn,
        "type": r.type,
        "name": r.name,
        "parent": r.parent or None,
        "custom": r.custom,
        "inputs": r.inputs,
    }
    # Same keys as the resource states of `pulumi preview --json`, present only when non-empty.
    for key, value in (
        ("provider", r.provider),
        ("dependencies", r.dependencies),
        ("propertyDependencies", r.property_dependencies),
        ("replaceOnChanges", r.replace_on_changes),
        ("deleteBeforeReplace", r.delete_before_replace),
    ):
        if value:
            entry[key] = value
    return entry


def plan_entries(run: ProgramRun) -> list[dict]:
    """The plan's resource entries, parents first."""
    return [plan_resource(r) for r in tree_order(run.resources)]


def build_plan(
    run: ProgramRun,
    project: str = "gpufleet",
    entries: list[dict] | None = None,
    placed: dict | None = None,
    typed: list[Resource] | None = None,
) -> dict:
    """The plan of `run`: its resources' `entries` (made here unless the caller made them for the
    pack, and `typed` too, read from those entries as the pack judged them), and the placement
    `placed` the pack judged them by (simulated here when no pack wrote one)."""
    resources = tree_order(run.resources)
    # The stack output `accelerators` (what `pulumi stack output accelerators` shows) is the plan's
    # summary: carried there once, not again under `outputs`.
    outputs = {k: v for k, v in run.outputs.items() if k != SUMMARY_OUTPUT}
    summary = dict(run.outputs.get(SUMMARY_OUTPUT) or {})
    entries = plan_entries(run) if entries is None else entries
    typed = from_plan({"resources": entries}) if typed is None else typed
    placement = _with_gaps(placed if placed is not None else plan_placement.placement(typed).as_dict(), run.gaps)
    return {
        "version": PLAN_VERSION,
        "project": project,
        "stack": run.stack,
        "resources": entries,
        "outputs": outputs,
        # Filled by the policy pack's verdict when one runs (`--no-policy` leaves it empty).
        "policy": {"pack": None, "violations": []},
        "summary": {
            "resourceCount": len(resources),
            "customResourceCount": sum(1 for r in resources if r.custom),
            **summary,
        },
        # Where every pod and task lands, read from the resources as the policy pack reads them.
        "placement": placement,
        # What the groups cost, priced from the catalog's dated snapshot (null where unknown).
        "cost": plan_cost.plan_cost(typed, placement, plan_cost.plan_hints(summary, os.environ)),
    }


def _with_gaps(placement: dict, gaps: list[str]) -> dict:
    """The engine's own gaps (a provider function answered unknown) join the placement's."""
    placement["gaps"] = [*placement["gaps"], *sorted(set(gaps))]  # the program's calls arrive in any order
    return placement
