"""A recording whose objects have fields of another type than the API writes is refused before
anything reads it (verify/shapes.py, in the plan readers' shape language): exit 2, one message
naming the file, the object, the field, the value and what was expected; never a traceback from a
reader half-way through. So is a recording nested or bracketed past what a recording holds, and
the ECS list-* output (ARNs) in place of the describe-* objects."""

from __future__ import annotations

import json

import pytest

from gpufleet.verify import recorded
from tests.conftest import ROOT
from tests.verify import fleets
from tests.verify.test_verify_input import _refused
from tests.verify.test_verify_kube import PLAN

ECS_PLAN = str(ROOT / "tests" / "golden" / "ecs-gpu.plan.json")


def _cluster() -> list[dict]:
    return fleets.p5_cluster(fleets.p5_fleet_nodes())


def _first(items: list[dict], kind: str) -> dict:
    return next(i for i in items if i.get("kind", "Node") == kind and "metadata" in i)


def _node(items):
    return next(i for i in items if "allocatable" in (i.get("status") or {}))


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda items: _node(items)["metadata"].__setitem__("labels", ["p5"]), 'metadata.labels = ["p5"]: must be an object'),
        (
            lambda items: _node(items)["metadata"]["labels"].__setitem__("node.kubernetes.io/instance-type", 5),
            "metadata.labels.node.kubernetes.io/instance-type = 5: must be a string",
        ),
        (lambda items: _node(items)["status"].__setitem__("allocatable", "lots"), 'status.allocatable = "lots": must be an object'),
        (
            lambda items: _node(items)["status"]["allocatable"].__setitem__("nvidia.com/gpu", True),
            "status.allocatable.nvidia.com/gpu = true: must be a quantity",
        ),
        (
            lambda items: _node(items)["status"].__setitem__("conditions", [["Ready"]]),
            'status.conditions[0] = ["Ready"]: must be an object',
        ),
        (lambda items: _first(items, "DaemonSet")["status"].__setitem__("numberReady", "2"), 'status.numberReady = "2": must be a number'),
        (
            lambda items: _first(items, "DaemonSet")["spec"]["selector"].__setitem__("matchLabels", ["a"]),
            'spec.selector.matchLabels = ["a"]: must be an object',
        ),
        (lambda items: _first(items, "Pod")["spec"].__setitem__("nodeName", ["n"]), 'spec.nodeName = ["n"]: must be a string'),
        (
            lambda items: _first(items, "Pod")["metadata"].__setitem__("ownerReferences", {"kind": "DaemonSet"}),
            'metadata.ownerReferences = {"kind": "DaemonSet"}: must be a list',
        ),
        (
            lambda items: _first(items, "Pod").__setitem__("status", {"containerStatuses": [{"restartCount": "many"}]}),
            'status.containerStatuses[0].restartCount = "many": must be a number',
        ),
        (
            lambda items: _first(items, "Pod").__setitem__("status", {"containerStatuses": [{"state": {"waiting": "yes"}}]}),
            'status.containerStatuses[0].state.waiting = "yes": must be an object',
        ),
        (lambda items: _first(items, "Pod").__setitem__("status", {"conditions": "Ready"}), 'status.conditions = "Ready": must be a list'),
    ],
)
def test_a_kubernetes_field_of_another_type_is_named(tmp_path, edit, said):
    items = _cluster()
    edit(items)
    folder = fleets.write_case(tmp_path / "case", items)
    err = _refused(PLAN, "--from", str(folder))
    assert f"{folder / 'cluster.json'}: items[" in err and said in err, err


def test_the_object_is_named_by_kind_and_name(tmp_path):
    items = _cluster()
    node = _node(items)
    node["metadata"]["labels"] = "p5"
    folder = fleets.write_case(tmp_path / "case", items)
    index = items.index(node)
    assert f"items[{index}] (Node {node['metadata']['name']}): metadata.labels" in _refused(PLAN, "--from", str(folder))


def test_a_single_object_file_is_checked_too(tmp_path):
    node = fleets.p5_fleet_nodes()[0]
    node = {"kind": "Node", **node, "status": {**node["status"], "allocatable": ["cpu"]}}
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "node.json").write_text(json.dumps(node))
    assert f"{folder / 'node.json'} (Node {node['metadata']['name']}): status.allocatable" in _refused(PLAN, "--from", str(folder))


def _ecs_case(tmp_path, instances, tasks=()):
    return fleets.write_case(
        tmp_path / "ecs",
        ecs={"container-instances": {"containerInstances": instances, "failures": []}, "tasks": {"tasks": list(tasks), "failures": []}},
    )


@pytest.mark.parametrize(
    "field, value, said",
    [
        ("attributes", {"ecs.instance-type": "g5.12xlarge"}, "attributes = {"),
        (
            "registeredResources",
            [{"name": "GPU", "stringSetValue": "GPU-1"}],
            'registeredResources[0].stringSetValue = "GPU-1": must be a list',
        ),
        ("capacityProviderName", ["ml-gpu-inference"], 'capacityProviderName = ["ml-gpu-inference"]: must be a string'),
        ("status", 1, "status = 1: must be a string"),
    ],
)
def test_an_ecs_field_of_another_type_is_named(tmp_path, field, value, said):
    instance = fleets.container_instance(1, "ml-gpu-inference", "g5.12xlarge", 4)
    instance[field] = value
    folder = _ecs_case(tmp_path, [instance])
    err = _refused(ECS_PLAN, "--from", str(folder))
    assert f"containerInstances[0] (an ECS container instance {instance['containerInstanceArn']}): {said}" in err, err


def test_an_ecs_task_field_of_another_type_is_named(tmp_path):
    task = fleets.service_task(1, "llm-serve", "ml-gpu-inference")
    task["group"] = {"service": "llm-serve"}
    folder = _ecs_case(tmp_path, [fleets.container_instance(1, "ml-gpu-inference", "g5.12xlarge", 4)], [task])
    assert f"tasks[0] (an ECS task {task['taskArn']}): group = " in _refused(ECS_PLAN, "--from", str(folder))


def test_arns_in_place_of_objects_are_named(tmp_path):
    arn = fleets.container_instance(1, "ml-gpu-inference", "g5.12xlarge", 4)["containerInstanceArn"]
    folder = _ecs_case(tmp_path, [arn])
    err = _refused(ECS_PLAN, "--from", str(folder))
    assert f"containerInstances[0] is the string {arn!r}, an ARN, not the object `aws ecs describe-container-instances` prints" in err


@pytest.mark.parametrize("key, listing", [("containerInstanceArns", "list-container-instances"), ("taskArns", "list-tasks")])
def test_list_output_is_named_for_what_it_is(tmp_path, key, listing):
    folder = tmp_path / "ecs"
    folder.mkdir()
    (folder / "listed.json").write_text(json.dumps({key: ["arn:aws:ecs:us-west-2:123456789012:x/1"]}))
    err = _refused(ECS_PLAN, "--from", str(folder))
    assert f"the output of `aws ecs {listing}` ({key}: ARNs, not the objects)" in err and listing.replace("list-", "describe-") in err


def test_a_recording_nested_past_the_parser_is_refused(tmp_path):
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / "cluster.json").write_text('{"kind": "List", "items": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert "JSON nested more deeply than a recording is" in _refused(PLAN, "--from", str(folder))


def test_brackets_past_the_bound_are_counted_before_parsing(tmp_path, monkeypatch):
    # The bound itself (4,000,000) takes a 12 MB file to cross; the test lowers it, and the file is
    # the shape the fuzz found (a List of empty lists), so the count, not the parser, refuses it.
    monkeypatch.setattr(recorded, "MOST_CONTAINERS", 1000)
    folder = tmp_path / "wide"
    folder.mkdir()
    (folder / "cluster.json").write_text('{"kind": "List", "items": [' + ",".join(["[]"] * 1000) + "]}")
    with pytest.raises(recorded.BadInput, match=r"1002 JSON arrays and objects, more than a recording verify reads \(1000\)"):
        recorded.read(folder)


def test_the_shipped_recordings_pass_the_shapes():
    for folder in sorted(p for p in (ROOT / "tests" / "fixtures" / "verify").iterdir() if p.is_dir()):
        files = [f for f in folder.iterdir() if f.suffix == ".json"]
        for f in files:
            document = json.loads(f.read_text())
            if isinstance(document, dict) and document.get("kind") in recorded.KINDS:
                recorded.shapes.check(document["kind"], document, str(f))


def test_a_recording_nested_past_the_plan_readers_bound_is_refused(tmp_path):
    # 130 levels: under the parser's own limit, past the bound every JSON reader shares (catalog/bounds.py).
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / "cluster.json").write_text('{"kind": "List", "items": ' + "[" * 130 + "]" * 130 + "}")
    assert "JSON nested more than 128 deep, the bound a plan has too" in _refused(PLAN, "--from", str(folder))
