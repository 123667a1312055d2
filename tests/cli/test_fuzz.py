"""Input that cannot break the tool: shipped stacks and saved plans, mutated (deleted fields, swapped
types, extreme and negative numbers, NaN, unicode and control characters, deep nesting, huge lists),
fed to `preview`, the plan readers and `diff`. Only the documented exit codes come out (0, 1, 2, 3
for diff), never a traceback; exit 2 names a field; a mutated stack gpufleet accepts yields AWS
requests that pass botocore's models. Fixed seed, a budget of well under a minute."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpufleet.plans import placement as plan_placement
from gpufleet.cli import plan_file
from gpufleet.cli.diff import diff_plans
from gpufleet.cli.diff_render import render
from gpufleet.stack.files import stack_names
from tests.aws_api import CHECKED_TYPES, plan_request
from tests.conftest import ROOT, run_cli


def _deep(levels: int):
    value: object = 1
    for _ in range(levels):
        value = {"k": [value]}
    return value


ODD = [None, "", "\u202e💥", "a\x07b", -1, 0, 2**31, 10**30, 1.5, math.nan, math.inf, True, [], {}, [0] * 500, _deep(60), "x" * 5000]
STACKS = stack_names(ROOT / "stacks")


def _paths(value, prefix=()) -> list[tuple]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*prefix, i))
    return found


def _mutate(doc, path: tuple, how: str, odd):
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    if how == "delete":
        del parent[key]
    elif how == "swap" and isinstance(parent[key], (dict, list)):
        parent[key] = json.dumps(parent[key]) if isinstance(parent[key], dict) else {"0": parent[key]}
    elif how == "swap":
        parent[key] = [parent[key]]
    else:
        parent[key] = copy.deepcopy(odd)
    return doc


@st.composite
def mutated_stacks(draw):
    stack = draw(st.sampled_from(STACKS))
    doc = YAML(typ="safe").load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc["config"])
        if not paths:
            break
        path = ("config", *draw(st.sampled_from(paths)))
        doc = _mutate(doc, path, draw(st.sampled_from(["delete", "replace", "swap"])), draw(st.sampled_from(ODD)))
    return stack, doc


def _write_yaml(path, doc) -> None:
    yaml = YAML(typ="safe")
    yaml.allow_unicode = True
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(doc, fh)


@seed(20261123)
@settings(max_examples=45, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
@given(case=mutated_stacks())
def test_mutated_stacks_give_documented_exits_and_acceptable_requests(case, tmp_path_factory):
    stack, doc = case
    path = tmp_path_factory.mktemp("fuzz") / f"Pulumi.{stack}.yaml"
    try:
        _write_yaml(path, doc)
    except Exception:  # a value YAML cannot hold is not an input a user can write
        return
    code, out, err = run_cli("preview", "--config-file", str(path), "--json", "--no-policy")
    assert code in (0, 1, 2), err
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        # A field and its value, or (for a file past the reader's bounds) the file's line and the bound.
        assert err.startswith("error: ") and (" = " in err or "not valid" in err or "needs" in err or ", the bound" in err), err
        return
    plan = json.loads(out)
    for r in plan["resources"]:
        if r["type"] in CHECKED_TYPES:
            assert plan_request(r).problems == [], (r["urn"], plan_request(r).problems)


PLANS = sorted(p.name for p in (ROOT / "tests" / "golden").glob("*.plan.json"))


@st.composite
def mutated_plans(draw):
    name = draw(st.sampled_from(PLANS))
    plan = json.loads((ROOT / "tests" / "golden" / name).read_text())
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(plan["resources"]) - 1))
        paths = _paths(plan["resources"][i])
        if not paths or not isinstance(plan["resources"], list):
            break
        path = ("resources", i, *draw(st.sampled_from(paths)))
        plan = _mutate(plan, path, draw(st.sampled_from(["delete", "replace", "swap"])), draw(st.sampled_from(ODD)))
    return name, plan


@seed(20261123)
@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=mutated_plans())
def test_mutated_plans_are_refused_by_field_or_read_without_a_crash(case, tmp_path_factory):
    name, plan = case
    path = tmp_path_factory.mktemp("plans") / name
    path.write_text(json.dumps(plan))
    try:
        saved = plan_file.load(path)
    except plan_file.PlanFileError as err:
        assert str(err).startswith(f"{path}: "), err  # the CLI prints it and exits 2
        return
    base = plan_file.load(ROOT / "tests" / "golden" / name)
    result = diff_plans(base.resources, saved.resources, [], [])
    render(result, "base", "head", markdown=True)
    plan_placement.placement(plan_placement.from_plan({"resources": saved.resources})).as_dict()


@pytest.mark.parametrize(
    "text, expected",
    [
        (b"\xff\xfe\x00", "not valid UTF-16"),
        (b'{"version": 1, "resources": [{"urn": "u", "type": "t", "inputs": {"x": NaN}}]}', "NaN is not a JSON number"),
        (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
        (b'{"version": 1, "resources": [{"urn": "u", "type": "t", "propertyDependencies": {"a": "b"}}]}', "propertyDependencies"),
        (b'{"version": 1, "resources": [{"urn": "u", "type": "t", "provider": 7}]}', "provider = 7: must be a provider reference string"),
        (b"caf\xe9", "not UTF-8"),
        # Found by the fuzz of issue 38: each once ended in exit 4, or in an exit 2 that blamed the pack.
        (b'{"version": 1, "resources": [{"urn": "u", "type": "t", "inputs": {"x": 1' + b"0" * 400 + b"}}]}", "resources[0].inputs.x: a number past what a Pulumi property value holds"),
        (b'{"version": 1, "resources": [{"urn": "u", "type": "t", "inputs": {"x": "a\\ud800"}}]}', "resources[0].inputs.x: not valid Unicode (a lone surrogate)"),
        (b'{"version": 1, "resources": [{"urn": "u", "type": "t", "inputs": {"a\\udc00": 1}}]}', "a key that is not valid Unicode"),
        (b'{"version": 1, "resources": [{"urn": "u", "type": "t", "inputs": {"x": ' + b"[" * 900 + b"]" * 900 + b"}}]}", "resources[0].inputs.x[0][0]"),
        (b'{"version": "' + b"9" * 3_000_000 + b'", "resources": []}', 'version = "99999999999999999999999999999999999999999999999999999999...: gpufleet reads plan version'),
        (b'{"steps": [{"op": "delete", "oldState": 5}]}', "steps[0].oldState = 5: must be an object"),
        (b'{"steps": [{"op": "same", "urn": "u", "diffReasons": 5}]}', "steps[0].diffReasons = 5: must be a list of property names"),
        (b'{"steps": [{"op": "same", "urn": "u", "replaceReasons": [3]}]}', "steps[0].replaceReasons = [3]: must be a list of property names"),
        (b'{"steps": [{"op": "same", "urn": "u", "detailedDiff": 5}]}', "steps[0].detailedDiff = 5: must be an object of property diffs"),
        (b'{"steps": [{"op": "same", "urn": "u", "detailedDiff": ["a"]}]}', 'steps[0].detailedDiff = ["a"]: must be an object of property diffs'),
        (b'{"steps": [{"op": 5, "urn": "u"}]}', "steps[0].op = 5: must be a step kind string"),
    ],
)
def test_broken_plans_are_exit_2_naming_the_field(tmp_path, text, expected):
    path = tmp_path / "plan.json"
    path.write_bytes(text)
    for argv in (("check", str(path)), ("diff", str(path), str(path))):
        code, _, err = run_cli(*argv)
        assert code == 2 and expected in err and "Traceback" not in err, err[:300]
        assert len(err) < 2000  # a value is quoted clipped, never in full


@pytest.mark.parametrize(
    "manifest, expected",
    [
        ("runtime: [python\n", "not a valid PulumiPolicy.yaml"),
        ("- runtime: python\n", "must be a mapping"),
        ("runtime:\n  name: python\n  options: venv\n", "runtime.options = 'venv': must be a mapping"),
    ],
)
def test_a_malformed_pack_manifest_is_exit_2(tmp_path, manifest, expected):
    (tmp_path / "PulumiPolicy.yaml").write_text(manifest)
    code, _, err = run_cli("preview", "ecs-gpu", "--policy-pack", str(tmp_path))
    assert code == 2 and expected in err and "Traceback" not in err, err


@pytest.mark.parametrize("policy", ["x", [1], {"instancesDistribution": 5}])
def test_a_spot_groups_purchase_options_of_the_wrong_kind_are_exit_2(tmp_path, policy):
    plan = json.loads((ROOT / "tests" / "golden" / "ecs-gpu.plan.json").read_text())
    [asg] = [r for r in plan["resources"] if r["type"] == "aws:autoscaling/group:Group"][:1]
    asg["inputs"]["mixedInstancesPolicy"] = policy
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    for argv in (("check", str(path)), ("diff", str(ROOT / "tests" / "golden" / "ecs-gpu.plan.json"), str(path))):
        code, _, err = run_cli(*argv)
        assert code == 2 and "inputs.mixedInstancesPolicy" in err and "must be an object" in err, err


def test_an_ack_size_in_digits_no_api_reads_is_no_size_not_a_crash(tmp_path):
    plan = json.loads((ROOT / "tests" / "golden" / "ack-shared-gpu.plan.json").read_text())
    for r in plan["resources"]:
        if r["type"] == "alicloud:cs/nodePool:NodePool":
            r["inputs"]["desiredSize"] = "²"  # str.isdigit() says yes; int() refuses it
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    code, out, err = run_cli("diff", str(ROOT / "tests" / "golden" / "ack-shared-gpu.plan.json"), str(path), "--json")
    assert code in (1, 3), err
    assert any(g["after"] and g["after"]["instances"]["desired"] is None for g in json.loads(out)["accelerators"]["groups"])
