"""src/gpufleet/engine/patches/analyze_once.py: Analyze with declared types answered without a call
gives pulumi_policy's own answers, and does not call a policy on a type it declares it skips."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy
from pulumi_policy.policy import _PolicyAnalyzerServicer

from gpufleet.catalog import tokens
from gpufleet.engine.patches import analyze_once
from gpufleet.policies import ack, api, ecs, ecs_managed, ecs_sharing, eks, k8s, lifecycle, neuron, registry, security
from gpufleet.policies.registry import Policies
from gpufleet.simulate.ecs_placement import member_of
from tests.conftest import shipped_plan
from tests.policy_helpers import gpu_container, launch_template, task_definition


def _struct(value: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(value)
    return s


def _request(r: dict) -> analyzer_pb2.AnalyzeRequest:
    return analyzer_pb2.AnalyzeRequest(type=r["type"], urn=r["urn"], name=r["name"], properties=_struct(r["inputs"]))


@pytest.fixture(scope="module")
def requests() -> list[analyzer_pb2.AnalyzeRequest]:
    resources = [r for stack in ("ecs-gpu", "ecs-neuron", "eks-p5-efa", "ack-shared-gpu") for r in shipped_plan(stack)["resources"]]
    # Violations too, so equal answers compare diagnostics and not only silence.
    resources += [
        task_definition("too-many", [gpu_container("a", 3), gpu_container("b", 2)], member_of("g5.12xlarge")),
        task_definition("unpinned", [gpu_container("a", 1, env={})]),
        launch_template("open", "g5.xlarge", metadataOptions={"httpTokens": "optional"}),
    ]
    late = {"urn": "urn:pulumi:s::p::test:index:Late::late", "type": "test:index:Late", "name": "late", "inputs": {"late": tokens.UNKNOWN}}
    return [_request(r) for r in [*resources, late]]


def _reads_an_unknown(args, report) -> None:
    if args.resource_type == "test:index:Late":
        report(str(args.props["late"]))


def _policies() -> list:
    return [
        ResourceValidationPolicy(name="late", description="reads an unknown", validate=_reads_an_unknown),
        ResourceValidationPolicy(
            name="off", description="disabled", validate=_reads_an_unknown, enforcement_level=EnforcementLevel.DISABLED
        ),
        ResourceValidationPolicy(name="fixing", description="remediate level", validate=lambda args, report: report("x")),
        ResourceValidationPolicy(name="remediates-only", description="no validate", remediate=lambda args: None),
        StackValidationPolicy(name="stack", description="not a resource policy", validate=lambda args, report: report("x")),
        *ecs.POLICIES,
        *ecs_sharing.POLICIES,
        *neuron.POLICIES,
        *eks.POLICIES,
        *k8s.POLICIES,
        *ack.POLICIES,
        *security.POLICIES,
        *api.POLICIES,
        *ecs_managed.POLICIES,
        *lifecycle.POLICIES,
    ]


def _servicer() -> _PolicyAnalyzerServicer:
    return _PolicyAnalyzerServicer("t", "0.1.0", _policies(), EnforcementLevel.ADVISORY, None, "", None, None, None, None, None)


def _configured(servicer: _PolicyAnalyzerServicer) -> _PolicyAnalyzerServicer:
    """The CLI's Configure: one policy turned off, one raised to remediate."""
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    request.policyConfig["ec2-imdsv2-required"].enforcementLevel = analyzer_pb2.DISABLED
    request.policyConfig["fixing"].enforcementLevel = analyzer_pb2.REMEDIATE
    servicer.Configure(request, None)
    return servicer


def _answers(servicer, requests) -> list[bytes]:
    return [servicer.Analyze(q, None).SerializeToString(deterministic=True) for q in requests]


def test_the_answers_are_pulumi_policys_own(requests, monkeypatch):
    monkeypatch.setattr(_PolicyAnalyzerServicer, "Analyze", _PolicyAnalyzerServicer.Analyze)
    before = [_answers(_servicer(), requests), _answers(_configured(_servicer()), requests)]
    assert analyze_once.install() is True
    assert _PolicyAnalyzerServicer.Analyze is analyze_once.analyze
    servicer = _servicer()
    after = [_answers(servicer, requests)]
    after.append(_answers(_configured(servicer), requests))  # the same servicer: its levels changed since
    assert after == before
    answers = [analyzer_pb2.AnalyzeResponse.FromString(a) for a in after[1]]
    skipped = {(n.policy_name, n.reason) for a in answers for n in a.not_applicable}
    assert ("remediates-only", "Policy does not implement validate") in skipped
    assert any(reason.startswith("not a ") for _, reason in skipped)
    diagnostics = [d for a in answers for d in a.diagnostics]
    assert {d.enforcementLevel for d in diagnostics if d.policyName == "fixing"} == {analyzer_pb2.MANDATORY}
    assert not any(d.policyName in ("off", "ec2-imdsv2-required", "stack") for d in diagnostics)
    assert any("can't run policy 'late'" in d.message for d in diagnostics)


def test_a_policy_is_not_called_on_a_type_it_declares_it_skips(requests, monkeypatch):
    monkeypatch.setattr(_PolicyAnalyzerServicer, "Analyze", _PolicyAnalyzerServicer.Analyze)
    monkeypatch.setattr(registry, "ALL", [])  # this module's policies stay out of the pack's
    assert analyze_once.install() is True
    policies = Policies("security")  # a module with rows in policies.yaml
    policies.resource("ec2-imdsv2-required", on=tokens.LAUNCH_TEMPLATE)(lambda args, report: report("judged"))
    [policy] = policies
    called: list[str] = []
    judge = policy.validate
    monkeypatch.setattr(policy, "validate", lambda args, report: called.append(args.resource_type) or judge(args, report), raising=False)
    servicer = _PolicyAnalyzerServicer("t", "0.1.0", [policy], EnforcementLevel.ADVISORY, None, "", None, None, None, None, None)
    answers = [servicer.Analyze(q, None) for q in requests]
    assert called and set(called) == {tokens.LAUNCH_TEMPLATE}
    others = [a for q, a in zip(requests, answers) if q.type != tokens.LAUNCH_TEMPLATE]
    expected = [("ec2-imdsv2-required", f"not a {tokens.LAUNCH_TEMPLATE}")]
    assert others and all([(n.policy_name, n.reason) for n in a.not_applicable] == expected for a in others)


def test_a_policy_that_judges_some_types_only_passes_the_others_without_a_call(requests, monkeypatch):
    monkeypatch.setattr(_PolicyAnalyzerServicer, "Analyze", _PolicyAnalyzerServicer.Analyze)
    monkeypatch.setattr(registry, "ALL", [])
    policies = Policies("security")
    policies.resource("ec2-imdsv2-required", only=tokens.LAUNCH_TEMPLATE)(lambda args, report: report(f"judged {args.resource_type}"))
    [policy] = policies
    called: list[str] = []
    judge = policy.validate
    monkeypatch.setattr(policy, "validate", lambda args, report: called.append(args.resource_type) or judge(args, report), raising=False)

    def answers() -> list[bytes]:
        servicer = _PolicyAnalyzerServicer("t", "0.1.0", [policy], EnforcementLevel.ADVISORY, None, "", None, None, None, None, None)
        return _answers(servicer, requests)

    unpatched = answers()  # pulumi_policy calls it on every resource: its wrapper passes the others
    assert len(called) == len(requests)
    called.clear()
    assert analyze_once.install() is True
    assert answers() == unpatched
    assert called and set(called) == {tokens.LAUNCH_TEMPLATE}
    replies = [analyzer_pb2.AnalyzeResponse.FromString(a) for a in unpatched]
    others = [a for q, a in zip(requests, replies) if q.type != tokens.LAUNCH_TEMPLATE]
    assert others and not any(a.not_applicable or a.diagnostics for a in others)


def test_another_pulumi_policy_keeps_its_own_analyze(monkeypatch):
    def analyze(self, request, _context):  # not the source the patch was written from
        return None

    monkeypatch.setattr(_PolicyAnalyzerServicer, "Analyze", analyze)
    assert analyze_once.install() is False
    assert _PolicyAnalyzerServicer.Analyze is analyze


def test_what_the_stack_will_read_is_prepared_as_each_resource_is_analysed(requests, monkeypatch):
    """Each resource of a type a preparation wants is handed over, its properties as the policies
    read them, once analysed; one that fails leaves the answer as it was."""
    monkeypatch.setattr(_PolicyAnalyzerServicer, "Analyze", _PolicyAnalyzerServicer.Analyze)
    assert analyze_once.install() is True
    before = _answers(_servicer(), requests)
    seen = []

    def failing(props):
        raise ValueError("not ready")

    monkeypatch.setattr(analyze_once, "_PREPARED", [(lambda t: t == tokens.ECS_TASK_DEFINITION, seen.append), (lambda t: True, failing)])
    assert _answers(_servicer(), requests) == before
    wanted = [q for q in requests if q.type == tokens.ECS_TASK_DEFINITION]
    assert len(seen) == len(wanted) > 0 and all("containerDefinitions" in props for props in seen)


def test_the_pack_makes_the_plan_view_s_inputs_plain_as_it_analyses():
    from gpufleet.plans.index import reads
    from gpufleet.policies import inputs

    assert (reads, inputs.plain_inputs) in analyze_once._PREPARED
