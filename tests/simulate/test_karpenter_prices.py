"""Which of a NodeClaim's types Karpenter launches, once the price snapshot prices them: the
capacity type first (reserved, spot, on-demand: getCapacityType, karpenter-provider-aws
pkg/providers/instance/instance.go @bde00654 L743-L759), then the cheapest type offered in it (the
NodeClaim's types ordered by their cheapest offering, kubernetes-sigs/karpenter
pkg/cloudprovider/types.go @6e7eab7a L336-L355; CreateFleet's lowest-price on-demand strategy,
instance/types.go @bde00654 L242-L246); the smallest, said so, where one of them has no price."""

from __future__ import annotations

import pytest

from gpufleet.catalog import prices
from gpufleet.plans.cost import plan_cost
from gpufleet.plans.index import from_plan
from tests.simulate.test_karpenter_offerings import AWS, CAPACITY, _node_class
from tests.simulate.test_karpenter_provisioning import _deployment, _placed, _pool, _types

SNAPSHOT = prices.load()
GPU = {"nvidia.com/gpu": "1"}


def _on_demand(name: str) -> float:
    quote = SNAPSHOT.quote("aws", "us-east-1", name)
    assert quote is not None
    return quote.on_demand


def _lowest_spot(name: str) -> float:
    quote = SNAPSHOT.quote("aws", "us-east-1", name)
    assert quote is not None and quote.spot
    return min(quote.spot.values())


def _capacity(*values: str) -> dict:
    return {"key": CAPACITY, "operator": "In", "values": list(values)}


def _launched(*resources: dict) -> dict:
    [launch] = _placed(*resources)["provisioned"]
    return launch


def test_the_larger_type_is_launched_where_the_snapshot_prices_it_lower():
    # g6e.16xlarge (64 vCPUs, one L40S) costs less on-demand than g6e.12xlarge (48 vCPUs, four).
    assert _on_demand("g6e.16xlarge") < _on_demand("g6e.12xlarge")
    pool = _pool("gpu", [_types(["g6e.12xlarge", "g6e.16xlarge"]), _capacity("on-demand")])
    launch = _launched(AWS, pool, _deployment("llm", 1, GPU))
    assert launch["instanceType"] == "g6e.16xlarge"
    assert launch["chosen"] == f"cheapest of 2 types holding them (g6e.16xlarge on-demand {_on_demand('g6e.16xlarge'):g} $/h in us-east-1)"


def test_without_the_region_the_smallest_is_named_and_said_unpriced():
    pool = _pool("gpu", [_types(["g6e.12xlarge", "g6e.16xlarge"]), _capacity("on-demand")])
    launch = _launched(pool, _deployment("llm", 1, GPU))
    assert launch["instanceType"] == "g6e.12xlarge"
    assert launch["chosen"] == "smallest of 2 types holding them (no prices: its region is not known before apply)"


def test_spot_first_ordered_by_each_type_s_lowest_spot_price():
    # g5.2xlarge's lowest zone is cheaper on spot than g5.xlarge's, though dearer on-demand.
    assert _lowest_spot("g5.2xlarge") < _lowest_spot("g5.xlarge") and _on_demand("g5.xlarge") < _on_demand("g5.2xlarge")
    types = _types(["g5.xlarge", "g5.2xlarge"])
    spot = _launched(AWS, _pool("gpu", [types, _capacity("spot", "on-demand")]), _deployment("llm", 1, GPU))
    assert spot["instanceType"] == "g5.2xlarge"
    assert "(g5.2xlarge spot " in spot["chosen"] and "lowest of the region's" in spot["chosen"]
    on_demand = _launched(AWS, _pool("gpu", [types, _capacity("on-demand")]), _deployment("llm", 1, GPU))
    assert on_demand["instanceType"] == "g5.xlarge"


def test_a_pod_requiring_on_demand_narrows_the_claim_to_on_demand_prices():
    pool = _pool("gpu", [_types(["g5.xlarge", "g5.2xlarge"]), _capacity("spot", "on-demand")])
    launch = _launched(AWS, pool, _deployment("llm", 1, GPU, node_selector={CAPACITY: "on-demand"}))
    assert launch["instanceType"] == "g5.xlarge" and "on-demand" in launch["chosen"]


def test_a_type_without_a_spot_price_leaves_the_smallest_named_with_the_type():
    assert not SNAPSHOT.quote("aws", "us-east-1", "g5.4xlarge").spot
    pool = _pool("gpu", [_types(["g5.2xlarge", "g5.4xlarge"]), _capacity("spot", "on-demand")])
    launch = _launched(AWS, pool, _deployment("llm", 1, GPU))
    assert launch["instanceType"] == "g5.2xlarge"
    assert launch["chosen"] == "smallest of 2 types holding them (no prices: no spot price for g5.4xlarge in us-east-1)"


def test_reserved_capacity_is_launched_first_and_has_no_price():
    node_class = _node_class({"capacityReservationSelectorTerms": [{"id": "cr-0123456789abcdef0"}]})
    pool = _pool("gpu", [_types(["g6e.12xlarge", "g6e.16xlarge"]), _capacity("reserved", "on-demand")])
    launch = _launched(AWS, node_class, pool, _deployment("llm", 1, GPU))
    assert launch["instanceType"] == "g6e.12xlarge"
    assert launch["chosen"].startswith("smallest of 2 types holding them (no prices: reserved capacity is paid under its reservation")


def test_a_generic_type_is_launched_before_a_cheaper_accelerated_one():
    # ExoticInstanceTypeFilter (filter.go @bde00654 L326-L368): a GPU type only where no other holds the pods.
    assert _on_demand("g6.xlarge") < _on_demand("m5.8xlarge")
    pool = _pool("any", [_types(["g6.xlarge", "m5.8xlarge"]), _capacity("on-demand")])
    assert _launched(AWS, pool, _deployment("web", 1, {"cpu": "1"}))["instanceType"] == "m5.8xlarge"


@pytest.fixture
def unpriced_launch() -> dict:
    # r9g is newer than Karpenter's price table: r9g.48xlarge has no price; x8g.48xlarge (as many
    # vCPUs, twice the memory: the pool's largest) has one, so the smallest, r9g, is launched unpriced.
    assert SNAPSHOT.quote("aws", "us-east-1", "r9g.48xlarge") is None
    pool = _pool("big", [_types(["r9g.48xlarge", "x8g.48xlarge"]), _capacity("on-demand")], limits={"cpu": "768"})
    plan = {"resources": [AWS, pool, _deployment("db", 1, {"cpu": "1"})]}
    resources = from_plan(plan)
    return plan_cost(resources, _placed(*plan["resources"]))


def test_the_cost_names_launched_nodes_without_a_price(unpriced_launch):
    [group] = unpriced_launch["groups"]
    assert group["pricePerHour"] == _on_demand("x8g.48xlarge") and group["hourly"]["max"] == round(4 * _on_demand("x8g.48xlarge"), 4)
    assert group["needed"]["byType"] == [
        {
            "instanceType": "r9g.48xlarge",
            "nodes": 1,
            "hourly": None,
            "monthly": None,
            "chosen": "smallest of 2 types holding them (no prices: no on-demand price for r9g.48xlarge in us-east-1)",
        }
    ]
    [unpriced] = unpriced_launch["unpriced"]
    assert (unpriced["group"], unpriced["instanceType"]) == ("big", "r9g.48xlarge") and not unpriced_launch["complete"]
    assert unpriced["reason"].startswith(
        "the 1 node Karpenter launches for the Pending pods: r9g.48xlarge in us-east-1: the snapshot has no price"
    )
