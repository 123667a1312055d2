"""src/gpufleet/engine/patches/servicer_memo.py: doing once what pulumi_policy repeats per policy gives the same answers."""

from __future__ import annotations

import os
import threading

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy.policy import EnforcementLevel, _PolicyAnalyzerServicer

import pulumi_policy.policy as pulumi_policy_module
from gpufleet.engine.patches import servicer_memo
from gpufleet.policies import ack, ecs, eks, k8s, neuron, placement, security
from gpufleet.simulate.ecs_placement import member_of
from tests.conftest import shipped_plan
from tests.policy_helpers import gpu_container, launch_template, task_definition


def _struct(value: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(value)
    return s


@pytest.fixture(scope="module")
def requests() -> list:
    found = []
    for stack in ("ecs-gpu", "ecs-neuron", "eks-p5-efa", "eks-trn1", "eks-g5-timeslice", "ack-shared-gpu"):
        resources = shipped_plan(stack)["resources"]
        by_urn = {r["urn"]: r for r in resources}
        for r in resources:
            request = analyzer_pb2.AnalyzeRequest(type=r["type"], urn=r["urn"], name=r["name"], properties=_struct(r["inputs"]))
            provider = by_urn.get(r.get("provider") or "")
            if provider is not None:  # the ACK fleet's resources name their own provider
                request.provider.CopyFrom(analyzer_pb2.AnalyzerProviderResource(
                    type=provider["type"], urn=provider["urn"], name=provider["name"], properties=_struct(provider["inputs"])
                ))
            found.append(request)
    # Violations too, so equal answers compare diagnostics and not only silence.
    violating = [
        task_definition("too-many", [gpu_container("a", 3), gpu_container("b", 2)], member_of("g5.12xlarge")),
        task_definition("unpinned", [gpu_container("a", 1, env={})]),
        launch_template("open", "g5.xlarge", metadataOptions={"httpTokens": "optional"}),
    ]
    for r in violating:
        found.append(analyzer_pb2.AnalyzeRequest(type=r["type"], urn=r["urn"], name=r["name"], properties=_struct(r["inputs"])))
    assert any(q.HasField("provider") for q in found)
    return found


def _answers(servicer, requests) -> tuple[list[bytes], bytes]:
    each = [servicer.Analyze(q, None).SerializeToString() for q in requests]
    stack = analyzer_pb2.AnalyzeStackRequest(
        resources=[analyzer_pb2.AnalyzerResource.FromString(q.SerializeToString()) for q in requests]
    )
    return each, servicer.AnalyzeStack(stack, None).SerializeToString()


def _undo_install(monkeypatch) -> None:
    """install() rewrites pulumi_policy's module and servicer class: restored after the test."""
    for name in ("json_format", "deserialize_properties", "unknown_checking_proxy"):
        monkeypatch.setattr(pulumi_policy_module, name, getattr(pulumi_policy_module, name))
    for name in ("_get_resource_options", "_get_provider_resource", "_configure_runtime_settings"):
        monkeypatch.setattr(_PolicyAnalyzerServicer, name, getattr(_PolicyAnalyzerServicer, name))


def test_same_answers_with_each_resource_converted_once(requests, monkeypatch):
    servicer = _PolicyAnalyzerServicer(
        "gpufleet-guard", "0.1.0", [*ecs.POLICIES, *neuron.POLICIES, *eks.POLICIES, *k8s.POLICIES, *ack.POLICIES, *security.POLICIES], EnforcementLevel.ADVISORY,
        None, "", None, None, None, None, None,
    )
    before = _answers(servicer, requests)
    _undo_install(monkeypatch)
    assert servicer_memo.install() is True
    calls = []
    real = json_format.MessageToDict
    monkeypatch.setattr(json_format, "MessageToDict", lambda m, *a, **k: calls.append(id(m)) or real(m, *a, **k))
    after = _answers(servicer, requests)
    assert after == before
    assert sum(len(analyzer_pb2.AnalyzeResponse.FromString(a).diagnostics) for a in before[0]) >= 4
    # One real conversion per distinct property set (a resource's or its provider's): none again per
    # policy, none in AnalyzeStack.
    distinct = {q.properties.SerializeToString(deterministic=True) for q in requests}
    distinct |= {q.provider.properties.SerializeToString(deterministic=True) for q in requests if q.HasField("provider")}
    assert len(calls) == len(distinct)
    assert servicer_memo.install() is False  # already installed: pulumi_policy's json_format is ours


def test_conversions_are_shared_by_content_only():
    once = servicer_memo._ConvertOnce()
    a, same, other = _struct({"x": 1, "y": [1, 2]}), _struct({"y": [1, 2], "x": 1}), _struct({"x": 2})
    assert once.MessageToDict(a) == {"x": 1.0, "y": [1.0, 2.0]}
    assert once.MessageToDict(same) is once.MessageToDict(a)  # equal content, another message
    assert once.MessageToDict(other) == {"x": 2.0}
    empty_struct, empty_list = struct_pb2.Struct(), struct_pb2.ListValue()  # same bytes, other types
    assert once.MessageToDict(empty_struct) == {} and once.MessageToDict(empty_list) == []


def test_runtime_settings_are_applied_once_per_thread_and_environment(monkeypatch):
    applied = []
    monkeypatch.setattr(_PolicyAnalyzerServicer, "_configure_runtime_settings", lambda self: applied.append(os.environ.get("PULUMI_CONFIG")))
    _undo_install(monkeypatch)
    assert servicer_memo.install() is True
    configure = _PolicyAnalyzerServicer._configure_runtime_settings
    monkeypatch.setenv("PULUMI_CONFIG", '{"aws:region": "us-east-1"}')
    configure(None)
    configure(None)
    assert applied == ['{"aws:region": "us-east-1"}']
    monkeypatch.setenv("PULUMI_CONFIG", '{"aws:region": "us-west-2"}')  # another environment: applied again
    configure(None)
    assert applied[-1] == '{"aws:region": "us-west-2"}' and len(applied) == 2
    # The settings are context variables: another worker thread applies them for itself.
    worker = threading.Thread(target=configure, args=(None,))
    worker.start()
    worker.join()
    assert len(applied) == 3


def test_per_request_results_are_kept_by_the_request_object_only():
    made = []
    once = servicer_memo._per_request(lambda self, request: made.append(request) or len(made))
    first = analyzer_pb2.AnalyzeRequest(urn="a")
    assert once("servicer", first) == once("servicer", first) == 1
    assert once("servicer", analyzer_pb2.AnalyzeRequest(urn="a")) == 2  # equal content, another request
    assert once("other servicer", first) == 3


def test_a_stack_of_twenty_thousand_resources_is_converted_once(monkeypatch):
    """The memo holds every resource of the largest plans: bounded at 16,384, a 53,000-resource
    AnalyzeStack converted the stack again for every stack policy and passed its deadline."""
    from pulumi_policy import StackValidationPolicy

    seen: list[int] = []
    policies = [
        StackValidationPolicy(name=f"count-{i}", description="counts the stack", validate=lambda args, report: seen.append(len(args.resources)))
        for i in range(3)
    ]
    servicer = _PolicyAnalyzerServicer("t", "0.1.0", policies, EnforcementLevel.ADVISORY, None, "", None, None, None, None, None)
    _undo_install(monkeypatch)
    assert servicer_memo.install() is True
    calls = []
    real = json_format.MessageToDict
    monkeypatch.setattr(json_format, "MessageToDict", lambda m, *a, **k: calls.append(1) or real(m, *a, **k))
    n = 20_000
    stack = analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(type="aws:s3/bucket:Bucket", urn=f"urn:pulumi:s::p::aws:s3/bucket:Bucket::b{i}", name=f"b{i}", properties=_struct({"bucket": f"b{i}"}))
            for i in range(n)
        ]
    )
    servicer.AnalyzeStack(stack, None)
    assert seen == [n, n, n]
    assert len(calls) == n


@pytest.mark.parametrize("changed", ["json_format", "deserialize_properties", "unknown_checking_proxy", "_get_provider_resource"])
def test_install_leaves_pulumi_policy_alone_when_its_internals_differ(monkeypatch, changed):
    _undo_install(monkeypatch)
    if changed.startswith("_"):
        monkeypatch.setattr(_PolicyAnalyzerServicer, changed, None)  # a method it no longer has
    else:
        monkeypatch.setattr(pulumi_policy_module, changed, lambda *a, **k: None)
    before = {name: getattr(pulumi_policy_module, name) for name in ("json_format", "deserialize_properties", "unknown_checking_proxy")}
    methods = {name: getattr(_PolicyAnalyzerServicer, name) for name in ("_get_resource_options", "_get_provider_resource", "_configure_runtime_settings")}
    assert servicer_memo.install() is False
    assert {name: getattr(pulumi_policy_module, name) for name in before} == before
    assert {name: getattr(_PolicyAnalyzerServicer, name) for name in methods} == methods


def test_same_input_same_result_is_made_once_and_a_call_with_options_is_not_kept():
    made = []
    once = servicer_memo._SameInputSameResult(lambda value, *args, **kwargs: made.append((value, args, kwargs)) or ("made", len(made)))
    value = {"a": 1}
    first = once(value)
    assert first == ("made", 1) and once(value) is first and len(made) == 1
    assert once({"a": 1}) == ("made", 2)  # an equal input of its own: kept by object, not content
    # Remediate passes options: each such call reaches the function with them, and is not kept.
    assert once(value, "option") == ("made", 3) and made[-1] == (value, ("option",), {})
    assert once(value, keep=True) == ("made", 4) and made[-1] == (value, (), {"keep": True})
    assert once(value) is first


def test_a_conversion_with_options_is_not_taken_from_the_memo():
    once = servicer_memo._ConvertOnce()
    options = analyzer_pb2.AnalyzerResourceOptions(ignoreChanges=["tags"])
    assert once.MessageToDict(options) == {"ignoreChanges": ["tags"]}
    full = json_format.MessageToDict(options, always_print_fields_with_no_presence=True)
    assert full != {"ignoreChanges": ["tags"]}  # the option shows the fields left at their defaults
    assert once.MessageToDict(options, always_print_fields_with_no_presence=True) == full
    assert once.MessageToDict(options, True) == full
    assert once.MessageToDict(options) == {"ignoreChanges": ["tags"]}


def _stack_request(plan: dict) -> analyzer_pb2.AnalyzeStackRequest:
    resources = []
    for r in plan["resources"]:
        resource = analyzer_pb2.AnalyzerResource(type=r["type"], urn=r["urn"], name=r["name"], properties=_struct(r["inputs"]))
        for prop, urns in (r.get("propertyDependencies") or {}).items():
            resource.propertyDependencies[prop].urns.extend(urns)
        resources.append(resource)
    return analyzer_pb2.AnalyzeStackRequest(resources=resources)


def _placement_servicer(monkeypatch):
    """The placement policies' servicer, mended, with a count of the placements it runs, and the
    plan of a shipped EKS stack to send it."""
    import json as _json

    from gpufleet.plans import placement as plan_placement
    from tests.conftest import ROOT

    _undo_install(monkeypatch)
    assert servicer_memo.install() is True
    calls = []
    real = plan_placement.placement
    monkeypatch.setattr(plan_placement, "placement", lambda resources: calls.append(1) or real(resources))
    placement.placement_of.cache_clear()
    servicer = _PolicyAnalyzerServicer("t", "0.1.0", placement.POLICIES, EnforcementLevel.ADVISORY, None, "", None, None, None, None, None)
    return servicer, calls, _json.loads((ROOT / "tests" / "golden" / "eks-g5-timeslice.plan.json").read_text())


def test_the_placement_policies_place_a_stack_once_and_each_stack_anew(monkeypatch):
    """The four placement policies judge one placement of a stack (the simulator is the costly part);
    a stack that differs only in what its resources read is placed again."""
    servicer, calls, plan = _placement_servicer(monkeypatch)
    servicer.AnalyzeStack(_stack_request(plan), None)
    assert len(placement.POLICIES) == 4 and len(calls) == 1
    servicer.AnalyzeStack(_stack_request(plan), None)  # the same stack again: equal inputs, the same objects
    assert len(calls) == 1
    group = next(r for r in plan["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup")
    group["propertyDependencies"]["launchTemplate"] = []  # the same inputs, another dependency
    servicer.AnalyzeStack(_stack_request(plan), None)
    assert len(calls) == 2


@pytest.mark.parametrize("edit", ["urn", "input"], ids=["a-renamed-urn", "a-dependency-under-another-input"])
def test_the_placement_memo_is_keyed_by_urns_and_dependency_names(monkeypatch, edit):
    """A stack whose resources keep their inputs but change a URN, or name a dependency under another
    input, is placed again (slips found either key part unjudged)."""
    servicer, calls, plan = _placement_servicer(monkeypatch)
    servicer.AnalyzeStack(_stack_request(plan), None)
    assert len(calls) == 1
    if edit == "urn":
        group = next(r for r in plan["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup")
        group["urn"] += "-renamed"
    else:
        one = next(r for r in plan["resources"] if len(r.get("propertyDependencies") or {}) == 1 and all(r["propertyDependencies"].values()))
        [(key, urns)] = one["propertyDependencies"].items()
        one["propertyDependencies"] = {key + "Renamed": urns}
    servicer.AnalyzeStack(_stack_request(plan), None)
    assert len(calls) == 2
