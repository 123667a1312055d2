"""A corpus program's preview held to its review (expected.yaml): shared by the Python and the
TypeScript corpora."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.one_reading import assert_read_alike


def assert_reviewed_and_sourced(folder: Path, programs: list[str], expected: dict) -> None:
    """Every program has its review and a SOURCE.md naming where it came from, at which commit, under
    which licence."""
    assert len(programs) >= 12 and sorted(expected) == programs
    for name in programs:
        source = (folder / "third_party" / name / "SOURCE.md").read_text()
        for field in ("Repository:", "Path:", "Commit:", "Licence:"):
            assert field in source, (name, field)
        assert expected[name]["why"].strip(), name


def assert_as_reviewed(expected: dict, code: int, out: str, err: str, tmp_path: Path, name: str) -> dict:
    """No hang, no traceback and no exit 2 for want of an offline answer; the reviewed exit code and
    mandatory findings; every capacity in the cost block, priced or named unpriced with why; one
    reading of each group through every door; and `check` on the saved plan gives the same verdict."""
    assert "Traceback" not in err and "did not finish within" not in err, err[-3000:]
    assert "the program may need a concrete value" not in err, err[-3000:]
    assert code == expected["exit"], err[-3000:]
    plan = json.loads(out)
    mandatory = sorted(f"{v['policy']} {v['urn'].rsplit('::', 1)[-1]}" for v in plan["policy"]["violations"] if v["level"] == "mandatory")
    assert mandatory == sorted(expected.get("mandatory") or [])
    if "pending" in expected:  # the pods and tasks that stay Pending, as a real cluster would leave them
        placement = plan["placement"]
        pending = [p["pod"] for p in placement["pods"] if p.get("pending")] + [
            t["task"] for t in placement.get("tasks") or [] if t["status"] == "pending"
        ]
        assert sorted(pending) == sorted(expected["pending"]), placement
    if "advisory" in expected:  # the pods whose verdict the simulation does not decide alone (each says why)
        assert sorted(p["pod"] for p in plan["placement"]["pods"] if p.get("notes")) == sorted(expected["advisory"]), plan["placement"]
    for gap in expected.get("gaps") or []:  # what the plan lacks for a verdict, each the start of one of placement.gaps
        assert any(g.startswith(gap) for g in plan["placement"]["gaps"]), (gap, plan["placement"]["gaps"])
    cost = plan["cost"]
    if "costGroups" in expected:
        assert sorted(g["group"] for g in cost["groups"]) == sorted(expected["costGroups"])
    priced = {g["group"] for g in cost["groups"] if g["hourly"]["max"] is not None}
    named = {u["group"]: u["reason"] for u in cost["unpriced"]}
    assert all(g["group"] in priced or named.get(g["group"]) for g in cost["groups"]), cost
    # The same type, sizes, region and EFA count out of the placement, the cost, the diff and the pack.
    assert_read_alike(plan, tmp_path, name)
    saved = tmp_path / "plan.json"
    saved.write_text(out)
    checked, policy, _ = run_cli("check", str(saved), "--json")
    assert checked == code and json.loads(policy) == plan["policy"]
    return plan
