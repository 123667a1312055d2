"""What the report says of a pod Karpenter provisions: the type named is the smallest that holds the
pods, said as such, since Karpenter launches the cheapest and gpufleet has no prices for it yet."""

from __future__ import annotations

from gpufleet.cli import report


def test_the_type_named_is_said_to_be_the_smallest_without_prices():
    launch = {"nodePool": "gpu", "instanceType": "g5.xlarge", "nodes": 2, "placed": 3, "candidates": 10}
    assert report._landing({"status": "provisioned", "provisioned": [launch]}) == (
        "provisioned by NodePool gpu as g5.xlarge (2 nodes), 3 placed; the smallest (no prices) of 10 types that hold them"
    )
