"""policies/conversion.py: converting each resource once gives the pack's servicer the same answers."""

from __future__ import annotations

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy.policy import EnforcementLevel, _PolicyAnalyzerServicer

import pulumi_policy.policy as pulumi_policy_module
from policies import conversion, ecs, eks, k8s, neuron, security
from tests.conftest import preview_plan


def _struct(value: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(value)
    return s


@pytest.fixture(scope="module")
def requests() -> list:
    found = []
    for stack in ("ecs-gpu", "ecs-neuron", "eks-p5-efa", "eks-trn1", "eks-g5-timeslice"):
        for r in preview_plan(stack)["resources"]:
            found.append(analyzer_pb2.AnalyzeRequest(type=r["type"], urn=r["urn"], name=r["name"], properties=_struct(r["inputs"])))
    return found


def _answers(servicer, requests) -> tuple[list[bytes], bytes]:
    each = [servicer.Analyze(q, None).SerializeToString() for q in requests]
    stack = analyzer_pb2.AnalyzeStackRequest(
        resources=[analyzer_pb2.AnalyzerResource.FromString(q.SerializeToString()) for q in requests]
    )
    return each, servicer.AnalyzeStack(stack, None).SerializeToString()


def test_same_answers_with_each_resource_converted_once(requests, monkeypatch):
    servicer = _PolicyAnalyzerServicer(
        "gpufleet-guard", "0.1.0", [*ecs.POLICIES, *neuron.POLICIES, *eks.POLICIES, *k8s.POLICIES, *security.POLICIES], EnforcementLevel.ADVISORY,
        None, "", None, None, None, None, None,
    )
    before = _answers(servicer, requests)
    for name in ("json_format", "deserialize_properties", "unknown_checking_proxy"):  # undone after the test
        monkeypatch.setattr(pulumi_policy_module, name, getattr(pulumi_policy_module, name))
    assert conversion.install() is True
    calls = []
    real = json_format.MessageToDict
    monkeypatch.setattr(json_format, "MessageToDict", lambda m, *a, **k: calls.append(id(m)) or real(m, *a, **k))
    after = _answers(servicer, requests)
    assert after == before
    # One real conversion per distinct property set: none again per policy, none in AnalyzeStack.
    assert len(calls) == len({q.properties.SerializeToString(deterministic=True) for q in requests})
    assert conversion.install() is False  # already installed: pulumi_policy's json_format is ours


def test_conversions_are_shared_by_content_only():
    once = conversion._ConvertOnce()
    a, same, other = _struct({"x": 1, "y": [1, 2]}), _struct({"y": [1, 2], "x": 1}), _struct({"x": 2})
    assert once.MessageToDict(a) == {"x": 1.0, "y": [1.0, 2.0]}
    assert once.MessageToDict(same) is once.MessageToDict(a)  # equal content, another message
    assert once.MessageToDict(other) == {"x": 2.0}
    empty_struct, empty_list = struct_pb2.Struct(), struct_pb2.ListValue()  # same bytes, other types
    assert once.MessageToDict(empty_struct) == {} and once.MessageToDict(empty_list) == []
