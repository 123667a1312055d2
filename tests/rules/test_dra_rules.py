"""rules/dra.py: the verdict on a pod's claims, as the pack and the stack spec both ask it."""

from __future__ import annotations

import pytest

from gpufleet.rules import dra

PENDING = "0/2 nodes are available: 2 cannot allocate all claims."


def test_claims_no_node_satisfies_are_mandatory_when_nothing_is_unknown():
    verdict = dra.claims_unsatisfied("Pod default/p", True, 1, PENDING, [])
    assert verdict == dra.Verdict(
        "Pod default/p: 1 pod(s) stay Pending: a resource claim no node of the plan satisfies: " + PENDING, mandatory=True
    )


def test_a_gap_lowers_it_to_advisory_naming_the_gap():
    verdict = dra.claims_unsatisfied("Pod default/p", True, 1, PENDING, ["a Karpenter NodePool could launch a node"])
    assert verdict is not None and not verdict.mandatory
    assert verdict.message.endswith("; not certain: a Karpenter NodePool could launch a node")


@pytest.mark.parametrize(
    "message",
    [
        "0/1 nodes are available: 1 resourceclaim not available on the node.",
        "0/1 nodes are available: request gpu: device class gpu.nvidia.com does not exist.",
    ],
)
def test_each_of_the_plugins_words_is_a_finding(message):
    assert dra.claims_unsatisfied("Pod default/p", True, 1, message, []) is not None


@pytest.mark.parametrize(
    ("has_claims", "pending", "message"),
    [
        (False, 1, PENDING),  # no claims: k8s-pods-schedulable's
        (True, 0, PENDING),  # placed
        (True, 1, "0/1 nodes are available: 1 Insufficient cpu."),  # not the claims
    ],
)
def test_other_pending_pods_are_not_this_rules(has_claims, pending, message):
    assert dra.claims_unsatisfied("Pod default/p", has_claims, pending, message, []) is None
