"""Small edits of the shipped stacks' golden plans, diffed as `gpufleet diff --json` reads them: the
unit-level doors of the diff (milliseconds each, no preview)."""

from __future__ import annotations

import json
from pathlib import Path

from gpufleet.cli import plan_file
from gpufleet.cli.diff import diff_plans
from gpufleet.plans import cost
from gpufleet.plans.index import from_plan
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


def golden(stack: str) -> dict:
    return json.loads((GOLDEN / f"{stack}.plan.json").read_text())


def plan_cost(resources, *args, **kwargs) -> dict:
    """The cost block of raw plan entries, read through the plan view's one door."""
    return cost.plan_cost(from_plan({"resources": list(resources)}), *args, **kwargs)


def diff_json(tmp_path: Path, base: dict, head: dict) -> dict:
    """`gpufleet diff BASE HEAD --json` less the pack's findings (both plans are read as the CLI reads
    them, shape checks included; the pack is left out: it would cost a process start per diff)."""
    loaded = []
    for name, plan in (("base", base), ("head", head)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(plan))
        loaded.append(plan_file.load(path).resources)
    return json.loads(json.dumps(diff_plans(*loaded, [], []).as_json()))


def added(tmp_path: Path, plan: dict) -> dict[str, dict]:
    """The groups of `plan` as a new stack shows them (diffed against an empty plan): name -> group."""
    d = diff_json(tmp_path, {**plan, "resources": []}, plan)
    assert all(g["status"] == "added" and g["before"] is None for g in d["accelerators"]["groups"])
    return {g["group"]: g["after"] for g in d["accelerators"]["groups"]}


def notes(tmp_path: Path, base: dict, head: dict) -> dict[str, list[str]]:
    """What the diff says of each group that changed: name -> notes."""
    return {g["group"]: g["notes"] for g in diff_json(tmp_path, base, head)["accelerators"]["groups"]}


def edited(stack: str, name: str, type_suffix: str, edit) -> dict:
    """The golden plan of `stack` with `edit(resource)` applied to its resource `name` of a type ending `type_suffix`."""
    plan = golden(stack)
    [resource] = [r for r in plan["resources"] if r["name"] == name and r["type"].endswith(type_suffix)]
    edit(resource)
    return plan
