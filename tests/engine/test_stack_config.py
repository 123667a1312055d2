"""ConfigureStack, as the pack serves it (src/gpufleet/engine/patches/stack_config.py): the request's
stack and config are the ones judged, with nothing of a stack configured before, so one pack process
judges stack after stack (`preview --all`) as a process of its own per stack would."""

from __future__ import annotations

import os

import pulumi
import pulumi.runtime.config as runtime_config
import pulumi_policy.policy as policy
import pytest
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.engine.patches import stack_config


@pytest.fixture
def servicer(monkeypatch):
    """pulumi_policy's servicer with the mend in; the process's config and the forget list as they were after."""
    monkeypatch.setattr(stack_config, "_FORGET", [])
    for name, value in (("PULUMI_STACK", "first"), ("PULUMI_PROJECT", "gpufleet"), ("PULUMI_CONFIG", '{"gpufleet:first-only": "1"}')):
        monkeypatch.setenv(name, value)
    config = runtime_config.CONFIG.get()
    saved = dict(config)
    rule = ResourceValidationPolicy("any-rule", "a rule", lambda args, report: None)
    try:
        with stack_config.stack_config() as mended:
            assert mended
            yield policy._PolicyAnalyzerServicer("pack", "0.1.0", [rule], EnforcementLevel.ADVISORY)
    finally:
        config.clear()
        config.update(saved)


def _configure(servicer, stack: str, config: dict[str, str]) -> None:
    request = analyzer_pb2.AnalyzerStackConfigureRequest(stack=stack, project="gpufleet", dry_run=True)
    request.config.update(config)
    servicer.ConfigureStack(request, None)


def test_the_stack_the_pack_was_started_for_keeps_its_environment(servicer):
    pulumi.runtime.set_config("gpufleet:first-only", "1")
    _configure(servicer, "first", {"aws:region": "us-west-2"})
    assert os.environ["PULUMI_CONFIG"] == '{"gpufleet:first-only": "1"}'
    assert pulumi.Config("gpufleet").get("first-only") == "1" and pulumi.Config("aws").get("region") == "us-west-2"


def test_each_configured_stack_is_judged_alone(servicer):
    forgotten = []
    stack_config.per_stack(lambda: forgotten.append(os.environ["PULUMI_STACK"]))
    pulumi.runtime.set_config("gpufleet:first-only", "1")  # as pulumi_policy applies the variable
    _configure(servicer, "second", {"aws:region": "us-west-2"})
    assert (os.environ["PULUMI_STACK"], os.environ["PULUMI_DRY_RUN"]) == ("second", "true")
    assert "PULUMI_CONFIG" not in os.environ  # the first stack's would read as this one's
    assert pulumi.Config("aws").get("region") == "us-west-2"
    assert pulumi.Config("gpufleet").get("first-only") is None
    _configure(servicer, "third", {"gpufleet:region": "eu-west-1"})
    assert pulumi.Config("aws").get("region") is None and pulumi.Config("gpufleet").get("region") == "eu-west-1"
    assert forgotten == ["second", "third"]  # after the stack is set: what is forgotten belongs to the one before


def test_the_memos_of_the_stack_before_are_let_go():
    """The pack's memos (servicer_memo's maps, the rules' read-once readings, the stack judged last)
    are registered to be forgotten: each holds the resources of the stack it was filled by."""
    from gpufleet.engine.patches import servicer_memo
    from gpufleet.policies import budget, dra, karpenter, placement

    registered = stack_config._FORGET
    assert servicer_memo._forget in registered
    for kept in (karpenter._LAST, karpenter._STACK, budget._JUDGED):
        assert any(getattr(f, "__self__", None) is kept for f in registered)
    # once_per_stack's memos (the placement's, the DRA install's) register their own forgetting.
    for memo_of in (placement.placement_of, dra._read):
        assert memo_of.cache_clear in registered
    memo = servicer_memo._Kept()
    memo.put("a resource of the stack before", object())
    servicer_memo._forget()
    assert not memo
