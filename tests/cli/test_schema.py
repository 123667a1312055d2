"""`gpufleet schema`: the JSON Schema of the stack file, from the pydantic models with the field docs
as descriptions; every shipped stack validates, broken ones do not."""

from __future__ import annotations

import json

import jsonschema
import pytest
from ruamel.yaml import YAML

from tests.conftest import ROOT, run_cli

STACKS = sorted(p for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


@pytest.fixture(scope="module")
def schema() -> dict:
    code, out, _ = run_cli("schema")
    assert code == 0
    document = json.loads(out)
    jsonschema.Draft202012Validator.check_schema(document)
    return document


def _load(path):
    return YAML(typ="safe", pure=True).load(path.read_text())


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_every_shipped_stack_validates(schema, path):
    jsonschema.validate(_load(path), schema)


def test_there_are_stacks_of_every_platform():
    names = {p.name for p in STACKS}
    assert {"Pulumi.ecs-gpu.yaml", "Pulumi.eks-p5-efa.yaml", "Pulumi.ack-shared-gpu.yaml", "Pulumi.gke-a100-mig.yaml"} <= names


@pytest.mark.parametrize(
    "stack,edit,where",
    [
        ("eks-p5-efa", lambda c: c["gpufleet:eks"]["nodeGroups"][0].__setitem__("instanceTyp", "p5.48xlarge"), "instanceTyp"),
        ("ack-shared-gpu", lambda c: c["gpufleet:ack"]["workloads"][0].__setitem__("kind", "CronJob"), "CronJob"),
        ("ack-shared-gpu", lambda c: c["gpufleet:ack"]["nodePools"][0].__setitem__("sharingMode", "mps"), "mps"),
        ("ecs-gpu", lambda c: c.__setitem__("gpufleet:regoin", "us-east-1"), "regoin"),
    ],
)
def test_a_broken_stack_does_not(schema, stack, edit, where):
    document = _load(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    edit(document["config"])
    with pytest.raises(jsonschema.ValidationError) as err:
        jsonschema.validate(document, schema)
    assert where in str(err.value)


def test_field_docs_become_descriptions(schema):
    pool = schema["$defs"]["AckNodePoolArgs"]["properties"]["sharingMode"]
    assert "core_mem" in pool["description"] and pool["enum"] == ["core_mem", "cgpu"]
