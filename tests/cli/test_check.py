"""`gpufleet check PLAN.json`: gpufleet plans and `pulumi preview --json` documents, same findings and
exit codes as preview."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, run_cli

PREVIEW_JSON = ROOT / "tests" / "fixtures" / "pulumi-preview.json"


def _check(path, *flags: str) -> tuple[int, dict | None, str]:
    code, out, err = run_cli("check", str(path), "--json", *flags)
    return code, (json.loads(out) if out else None), err


def _as_pulumi_preview(plan: dict) -> dict:
    """The same resources as `pulumi preview --json` lays them out (steps[].newState, provider refs with an id)."""
    steps = []
    for r in plan["resources"]:
        state = {k: r[k] for k in ("urn", "type", "custom", "inputs", "dependencies", "propertyDependencies") if k in r}
        state["parent"] = r["parent"] or ""
        if r.get("provider"):
            state["provider"] = r["provider"] + "::04da6b54-80e4-46f7-96ec-b56ff0331ba9"
        steps.append({"op": "create", "urn": r["urn"], "newState": state})
    return {"steps": steps, "changeSummary": {"create": len(steps)}}


def test_a_pulumi_preview_document_is_judged():
    code, policy, err = _check(PREVIEW_JSON)
    assert code == 1, err
    found = {(v["policy"], v["level"], v["urn"].rsplit("::", 1)[-1]) for v in policy["violations"]}
    assert found == {
        ("ecs-gpus-fit-instance", "mandatory", "trainer"),
        ("ec2-imdsv2-required", "mandatory", "gpu-nodes"),
        ("gpu-instance-no-public-ip", "advisory", "gpu-nodes"),
        ("gpu-node-no-open-ingress", "mandatory", "gpu-nodes"),
        # No capacity provider in this program: where the task runs is not in the plan, said, not passed.
        ("placement-unverified", "advisory", "trainer"),
    }
    # The deleted task definition has no new state: nothing of it is judged.
    assert not any("old-job" in v["urn"] for v in policy["violations"])


def test_check_agrees_with_preview_on_both_plan_formats(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"ecs-gpus-fit-instance": {"maxGpusPerTask": 4}}))
    code, out, _ = run_cli("preview", "ecs-gpu", "--json", "--policy-config", str(config))
    assert code == 1
    plan = json.loads(out)
    saved = tmp_path / "plan.json"
    saved.write_text(out)
    converted = tmp_path / "preview.json"
    converted.write_text(json.dumps(_as_pulumi_preview(plan)))
    for path in (saved, converted):
        code, policy, err = _check(path, "--policy-config", str(config))
        assert code == 1, err
        assert policy == plan["policy"]
    code, policy, _ = _check(saved)  # without the config: the shipped stack passes
    assert code == 0 and policy["violations"] == []


def test_human_output_names_the_format_and_the_fix():
    code, out, _ = run_cli("check", str(PREVIEW_JSON))
    assert code == 1
    assert "(pulumi-preview, 5 resources)" in out
    assert "3 mandatory, 2 advisory" in out
    assert "fix: Set metadataOptions: {httpTokens: required" in out


@pytest.mark.parametrize(
    "text,expected",
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"hello": 1}', "neither a gpufleet plan (no 'resources') nor `pulumi preview --json` output (no 'steps')"),
        ('{"version": 2, "resources": []}', "version = 2: gpufleet reads plan version 1"),
        ('{"version": 1, "resources": [{"type": "aws:ecs/cluster:Cluster"}]}', "resources[0].urn = null: a non-empty string is required"),
        ('{"steps": [{"op": "create", "newState": {"urn": "u", "type": 5}}]}', "steps[0].newState.type = 5"),
        ('{"steps": [{"op": "delete", "oldState": {}}]}', "steps[] carry no newState"),
    ],
)
def test_malformed_plans_are_exit_2(tmp_path, text, expected):
    path = tmp_path / "plan.json"
    path.write_text(text)
    code, policy, err = _check(path)
    assert code == 2 and policy is None
    assert expected in err and "Traceback" not in err


def test_an_unreadable_plan_is_exit_2(tmp_path):
    code, _, err = _check(tmp_path / "missing.json")
    assert code == 2 and "cannot read it" in err
