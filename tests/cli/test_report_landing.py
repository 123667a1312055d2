"""What the report says of a pod Karpenter provisions: the type named, and the rule the simulation
named it by (the cheapest of the types that hold the pods, or the smallest where one has no price)."""

from __future__ import annotations

import pytest

from gpufleet.cli import report

CHEAPEST = "cheapest of 2 types holding them (g6e.16xlarge on-demand 7.57719 $/h in us-east-1)"
SMALLEST = "smallest of 10 types holding them (no prices: no spot price for g5.4xlarge in us-east-1)"


@pytest.mark.parametrize("chosen", [CHEAPEST, SMALLEST])
def test_the_type_named_says_the_rule_that_chose_it(chosen):
    launch = {"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 2, "placed": 3, "candidates": 10, "chosen": chosen}
    assert report._landing({"status": "provisioned", "provisioned": [launch]}) == (
        f"provisioned by NodePool gpu as g5.xlarge (2 nodes), 3 placed; {chosen}"
    )
