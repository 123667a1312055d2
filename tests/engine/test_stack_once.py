"""src/gpufleet/engine/patches/stack_once.py: AnalyzeStack with the resources built once answers as pulumi_policy's own."""

from __future__ import annotations

import json

import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy
from pulumi_policy.policy import _PolicyAnalyzerServicer

from gpufleet.engine.patches import stack_once
from gpufleet.policies import ack, eks, k8s, placement
from tests.conftest import shipped_plan


def _struct(value: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(value)
    return s


def _stack_request(resources: list[dict]) -> analyzer_pb2.AnalyzeStackRequest:
    by_urn = {r["urn"]: r for r in resources}
    found = []
    for r in resources:
        message = analyzer_pb2.AnalyzerResource(
            type=r["type"], urn=r["urn"], name=r["name"], properties=_struct(r["inputs"]), parent=r.get("parent") or "",
            dependencies=r.get("dependencies") or [],
        )
        for key, urns in (r.get("propertyDependencies") or {}).items():
            message.propertyDependencies[key].urns.extend(urns)
        provider = by_urn.get(r.get("provider") or "")
        if provider is not None:
            message.provider.CopyFrom(analyzer_pb2.AnalyzerProviderResource(
                type=provider["type"], urn=provider["urn"], name=provider["name"], properties=_struct(provider["inputs"])
            ))
        found.append(message)
    return analyzer_pb2.AnalyzeStackRequest(resources=found)


def _links(args, report) -> None:
    """Reports what each resource is linked to, so equal answers mean equal links."""
    for r in args.resources:
        seen = {
            "parent": r.parent.urn if r.parent else None,
            "dependencies": [d.urn for d in r.dependencies],
            "propertyDependencies": {k: [d.urn for d in v] for k, v in sorted(r.property_dependencies.items())},
            "provider": r.provider.urn if r.provider else None,
            "keys": sorted(r.props),
        }
        report(json.dumps(seen, sort_keys=True), r.urn)


def _reads_an_unknown(args, report) -> None:
    for r in args.resources:
        if r.resource_type == "test:index:Late":
            report(str(r.props["late"]))


def _no_gpus_here(args, report) -> None:
    args.not_applicable("no GPU in this stack" if len(args.resources) > 1 else None)


def _policies() -> list:
    return [
        StackValidationPolicy(name="skips", description="not applicable", validate=_no_gpus_here),
        StackValidationPolicy(name="skips-silently", description="not applicable", validate=lambda args, report: args.not_applicable()),
        StackValidationPolicy(name="links", description="reports links", validate=_links),
        StackValidationPolicy(name="off", description="disabled", validate=_links, enforcement_level=EnforcementLevel.DISABLED),
        StackValidationPolicy(name="fixing", description="remediate level", validate=_links, enforcement_level=EnforcementLevel.REMEDIATE),
        StackValidationPolicy(name="late", description="reads an unknown", validate=_reads_an_unknown),
        ResourceValidationPolicy(name="per-resource", description="not a stack policy", validate=lambda args, report: report("x")),
        *eks.POLICIES, *k8s.POLICIES, *ack.POLICIES, *placement.POLICIES,
    ]


@pytest.fixture(scope="module")
def stack() -> analyzer_pb2.AnalyzeStackRequest:
    resources = [r for name in ("eks-p5-efa", "ack-shared-gpu") for r in shipped_plan(name)["resources"]]
    late = {"urn": "urn:pulumi:s::p::test:index:Late::late", "type": "test:index:Late", "name": "late",
            "inputs": {"late": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}}
    request = _stack_request([*resources, late])
    assert any(r.parent for r in request.resources) and any(r.dependencies for r in request.resources)
    assert any(r.propertyDependencies for r in request.resources) and any(r.HasField("provider") for r in request.resources)
    return request


def _servicer() -> _PolicyAnalyzerServicer:
    return _PolicyAnalyzerServicer("t", "0.1.0", _policies(), EnforcementLevel.ADVISORY, None, "", None, None, None, None, None)


def test_the_answer_is_pulumi_policys_own(stack, monkeypatch):
    monkeypatch.setattr(_PolicyAnalyzerServicer, "AnalyzeStack", _PolicyAnalyzerServicer.AnalyzeStack)
    before = _servicer().AnalyzeStack(stack, None)
    assert stack_once.install() is True
    assert _PolicyAnalyzerServicer.AnalyzeStack is stack_once.analyze_stack
    after = _servicer().AnalyzeStack(stack, None)
    assert after.SerializeToString(deterministic=True) == before.SerializeToString(deterministic=True)
    by_policy: dict[str, list] = {}
    for d in after.diagnostics:
        by_policy.setdefault(d.policyName, []).append(d)
    # Every resource reported with its links; the disabled policy silent; REMEDIATE reported as mandatory.
    assert len(by_policy["links"]) == len(by_policy["fixing"]) == len(stack.resources)
    assert "off" not in by_policy and "per-resource" not in by_policy
    assert {d.enforcementLevel for d in by_policy["fixing"]} == {analyzer_pb2.MANDATORY}
    assert "can't run policy 'late'" in by_policy["late"][0].message
    assert [(n.policy_name, n.reason) for n in after.not_applicable] == [("skips", "no GPU in this stack"), ("skips-silently", "")]
    linked = [json.loads(d.message.split("\n", 1)[1]) for d in by_policy["links"]]
    assert any(s["parent"] for s in linked) and any(s["dependencies"] for s in linked)
    assert any(s["propertyDependencies"] for s in linked) and any(s["provider"] for s in linked)


def test_the_stack_is_built_once_for_all_its_policies(stack, monkeypatch):
    monkeypatch.setattr(_PolicyAnalyzerServicer, "AnalyzeStack", _PolicyAnalyzerServicer.AnalyzeStack)
    assert stack_once.install() is True
    built = []
    real = stack_once.PolicyResource
    monkeypatch.setattr(stack_once, "PolicyResource", lambda *a: built.append(a[2]) or real(*a))
    servicer = _servicer()
    stack_policies = sum(1 for p in _policies() if isinstance(p, StackValidationPolicy))
    assert stack_policies > 10
    servicer.AnalyzeStack(stack, None)
    assert sorted(built) == sorted(r.urn for r in stack.resources)


def test_another_pulumi_policy_keeps_its_own_analyze_stack(monkeypatch):
    def AnalyzeStack(self, request, _context):  # noqa: N802 - a changed method of the same name
        return None

    monkeypatch.setattr(_PolicyAnalyzerServicer, "AnalyzeStack", AnalyzeStack)
    assert stack_once.install() is False
    assert _PolicyAnalyzerServicer.AnalyzeStack is AnalyzeStack


@pytest.mark.parametrize("unreadable", [None, eval("lambda self, request, _context: None")], ids=["not a function", "no source"])
def test_a_method_whose_source_cannot_be_read_is_left_alone(monkeypatch, unreadable):
    monkeypatch.setattr(_PolicyAnalyzerServicer, "AnalyzeStack", unreadable)
    assert stack_once.install() is False
    assert _PolicyAnalyzerServicer.AnalyzeStack is unreadable
