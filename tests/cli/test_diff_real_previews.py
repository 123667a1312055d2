"""`gpufleet diff` and `gpufleet check` on real `pulumi preview --json` outputs, not documents we laid
out ourselves: a public program's previews (tests/fixtures/pulumi_previews/SOURCE.md says where
each came from). They carry no accelerators, so what is tested is the reading: the engine's ops,
the two-preview noise filter, and a changed text that reads as the lines that changed."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, run_cli

REAL = ROOT / "tests" / "fixtures" / "pulumi_previews"
FUNCTION = ("aws:lambda/function:Function", "docsHandler")


def _steps(name: str) -> list[dict]:
    return json.loads((REAL / f"sample-preview-{name}.json").read_text())["steps"]


def _names(entries: list[dict]) -> list[tuple[str, str]]:
    return [(e["type"], e["name"]) for e in entries]


def _diff(*files: str) -> tuple[int, dict]:
    code, out, err = run_cli("diff", *(str(REAL / f"sample-preview-{f}.json") for f in files), "--json")
    assert "Traceback" not in err, err
    return code, json.loads(out)


def test_the_fixture_pair_really_differs_by_suffixes_and_unknowns():
    """The pair's new states differ in 14 resources, though the program changed one: what the
    filter has to remove is really there."""
    creates = {s["urn"]: s["newState"].get("inputs") for s in _steps("creates")}
    update = {s["urn"]: s["newState"].get("inputs") for s in _steps("update")}
    assert creates.keys() == update.keys()
    assert sum(creates[u] != update[u] for u in creates) == 14


def test_two_real_previews_report_the_one_update_the_engine_reported():
    code, d = _diff("creates", "update")
    assert code == 3
    assert _names(d["resources"]["updated"]) == [FUNCTION]
    assert d["resources"]["added"] == d["resources"]["removed"] == d["resources"]["replaced"] == []
    assert {p["path"].split(".")[0] for p in d["resources"]["updated"][0]["properties"]} == {"code"}
    assert d["affected"] == d["refusedDeletes"] == d["drains"] == []


def test_one_real_preview_follows_its_steps():
    steps = _steps("update")
    assert [s["op"] for s in steps].count("update") == 1
    code, d = _diff("update")
    assert code == 3
    assert _names(d["resources"]["updated"]) == [FUNCTION]
    [function] = [s for s in steps if s["op"] == "update"]
    # What is listed lies under the properties the engine named.
    assert {p["path"].split(".")[0] for p in d["resources"]["updated"][0]["properties"]} <= set(function["diffReasons"])


def test_a_changed_source_text_reads_as_the_lines_that_changed():
    code, out, _ = run_cli("diff", str(REAL / "sample-preview-update.json"))
    assert code == 3
    lines = [line.strip() for line in out.splitlines()]
    assert 'code.assets.__index.js.text: text of 13 lines -> 14 lines (+ console.log("hi");)' in lines
    assert "with({ this: undefined, arguments: undefined }) {" not in lines
    assert "No accelerated groups on either side." in lines


def test_one_real_preview_of_deletes_lists_each_delete():
    steps = _steps("deletes")
    deleted = sorted((s["oldState"]["type"], s["urn"].rsplit("::", 1)[-1]) for s in steps if s["op"] == "delete")
    code, d = _diff("deletes")
    assert code == 3 and len(deleted) == 14
    assert sorted(_names(d["resources"]["removed"])) == deleted
    # None of these is a delete the cloud refuses while something depends on it.
    assert d["refusedDeletes"] == [] and d["resources"]["updated"] == []


def test_a_preview_of_a_new_stack_reads_as_everything_added():
    steps = _steps("creates")
    assert {s["op"] for s in steps} == {"create"} and not any("oldState" in s for s in steps)
    code, d = _diff("creates")
    assert code == 3
    expected = sorted((s["newState"]["type"], s["urn"].rsplit("::", 1)[-1]) for s in steps if s["newState"]["type"] != "pulumi:pulumi:Stack")
    assert sorted(_names(d["resources"]["added"])) == expected
    assert d["resources"]["removed"] == d["resources"]["updated"] == []


def test_a_new_stack_preview_with_one_update_step_is_refused(tmp_path):
    """A step other than create with no old state is not a new stack: one plan alone is refused."""
    document = json.loads((REAL / "sample-preview-creates.json").read_text())
    document["steps"][1]["op"] = "update"
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(document))
    code, _, err = run_cli("diff", str(path))
    assert code == 2 and "one plan alone is read only as `pulumi preview --json`" in err


@pytest.mark.parametrize("name", ["creates", "update", "deletes"])
def test_check_reads_a_real_preview(name):
    steps = _steps(name)
    code, out, err = run_cli("check", str(REAL / f"sample-preview-{name}.json"))
    assert code == 0, err
    existing = sum(1 for s in steps if s.get("newState"))
    assert f"(pulumi-preview, {existing} resources)" in out and "no violations" in out


def test_a_stack_without_accelerators_gets_no_empty_picture():
    code, out, _ = run_cli("diff", str(REAL / "sample-preview-update.json"), "--format", "markdown")
    assert code == 3 and "```mermaid" not in out and "No accelerated groups on either side." in out
