"""rules/dra.py: the verdict on a pod's claims, as the pack and the stack spec both ask it."""

from __future__ import annotations

import pytest

from gpufleet.rules import dra

PENDING = "0/2 nodes are available: 2 cannot allocate all claims."


def test_claims_no_node_satisfies_are_mandatory_where_the_placement_is_certain():
    verdict = dra.claims_unsatisfied("Pod default/p", True, 1, PENDING, True, [])
    assert verdict == dra.Verdict(
        "Pod default/p: 1 pod(s) stay Pending: a resource claim no node of the plan satisfies: " + PENDING, mandatory=True
    )


def test_an_uncertain_placement_lowers_it_to_advisory_naming_the_gap():
    verdict = dra.claims_unsatisfied("Pod default/p", True, 1, PENDING, False, ["a Karpenter NodePool could launch a node"])
    assert verdict is not None and not verdict.mandatory
    assert verdict.message.endswith("; not certain: a Karpenter NodePool could launch a node")


@pytest.mark.parametrize(
    ("claims_refused", "pending"),
    [
        (False, 1),  # Pending for something else (CPU, no claims): k8s-pods-schedulable's
        (True, 0),  # placed
    ],
)
def test_other_pending_pods_are_not_this_rules(claims_refused, pending):
    assert dra.claims_unsatisfied("Pod default/p", claims_refused, pending, PENDING, True, []) is None
