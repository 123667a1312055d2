"""data/botocore_inputs.json (src/gpufleet/catalog/generate/botocore_inputs.py): the create calls' input
shapes of botocore's models, regenerated from the installed botocore, and judging every request as the
whole models do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpufleet.apis import aws
from gpufleet.catalog import catalog
from gpufleet.catalog.generate import botocore_inputs as generator

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def test_the_committed_file_is_what_the_generator_reads_from_the_installed_botocore():
    assert generator.main(["--check"]) == 0


def _checked_resources() -> list[tuple[str, dict]]:
    found = []
    for path in sorted(GOLDEN.glob("*.plan.json")):
        for resource in json.loads(path.read_text())["resources"]:
            if resource["type"] in aws.CHECKED_TYPES:
                found.append((resource["type"], resource["inputs"]))
    return found


def _broken(inputs: dict) -> dict:
    """Every string input past any bound, enum or pattern, and a member no shape has."""
    return {**{k: ("x" * 5000 + " !") if isinstance(v, str) else v for k, v in inputs.items()}, "noSuchMember": 1}


def _requests(monkeypatch, whole: bool) -> list[aws.Request]:
    with monkeypatch.context() as patched:
        if whole:
            patched.setattr(aws, "_lean_model", lambda service: None)
        return [
            aws.to_request(kind, given, strict=strict)
            for kind, inputs in _checked_resources()
            for given in (inputs, _broken(inputs))
            for strict in (True, False)
        ]


def test_every_shipped_plan_is_judged_by_the_lean_models_as_by_the_whole_ones(monkeypatch):
    assert {kind for kind, _ in _checked_resources()} >= {"aws:ecs/taskDefinition:TaskDefinition", "aws:ec2/launchTemplate:LaunchTemplate"}
    lean = _requests(monkeypatch, whole=False)
    assert any(r.problems for r in lean)  # the broken inputs are refused: the shapes' bounds are there
    assert lean == _requests(monkeypatch, whole=True)


def test_the_lean_model_is_read_where_it_was_generated_from_the_installed_botocore(monkeypatch):
    assert aws._lean_model("ec2") is not None
    assert "CreateLaunchTemplate" in aws._lean_model("ec2").operation_names
    other = json.loads(json.dumps(catalog.botocore_inputs()))
    other["generated"]["botocore"] = "0.0.0"
    monkeypatch.setattr(catalog, "botocore_inputs", lambda: other)
    aws._lean_model.cache_clear()
    try:
        assert aws._lean_model("ec2") is None  # another botocore's shapes: the whole model judges
    finally:
        aws._lean_model.cache_clear()


@pytest.mark.parametrize("service", sorted(generator.OPERATIONS))
def test_a_member_named_documentation_keeps_its_place(service):
    # Only documentation strings are dropped: the kept shapes have every member botocore's have.
    whole = aws._loader().load_service_model(service, "service-2")["shapes"]
    for name, shape in catalog.botocore_inputs()["services"][service]["shapes"].items():
        assert sorted(shape.get("members", {})) == sorted(whole[name].get("members", {}))
