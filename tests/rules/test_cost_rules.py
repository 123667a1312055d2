"""The cost rules (src/gpufleet/rules/cost.py) over a small snapshot of known rows: which price a
purchase option takes, how sizes multiply, and where a budget ceiling starts to hold."""

from __future__ import annotations

import datetime

import pytest

from gpufleet.catalog.prices import PriceSnapshot, Quote, accelerator_key
from gpufleet.rules import cost

SNAPSHOT = PriceSnapshot(
    "2026-11-26",
    {"aws": {"repository": "r", "path": "p", "commit": "c"}},
    {
        "aws": {"us-east-1": {"p5.48xlarge": Quote(55.04, {"use1-az1": 55.04, "use1-az2": 47.2054}), "m6i.large": Quote(0.096, {})}},
        "gcp": {
            "us-central1": {
                "a2-highgpu-2g": Quote(1.47895, {"us-central1-a": 0.7395, "us-central1-b": 0.8}),
                accelerator_key("A100", 2): Quote(5.86782, {"us-central1-a": 2.8682}),
            }
        },
        "azure": {},
    },
    {"aws": {"us-east-1": ["p5e.48xlarge"]}},
)


def test_on_demand_takes_the_regional_price():
    price = cost.instance_price(SNAPSHOT, "aws", "us-east-1", "p5.48xlarge", "ON_DEMAND")
    assert (price.purchase, price.dollars) == ("on-demand", 55.04)


def test_spot_takes_the_highest_zone_of_the_region_unless_zones_are_named():
    assert cost.instance_price(SNAPSHOT, "aws", "us-east-1", "p5.48xlarge", "SPOT").dollars == 55.04
    assert cost.instance_price(SNAPSHOT, "aws", "us-east-1", "p5.48xlarge", "SPOT", ("use1-az2",)).dollars == 47.2054
    assert cost.instance_price(SNAPSHOT, "aws", "us-east-1", "p5.48xlarge", "SPOT", ("use1-az2", "use1-az1", "use1-az9")).dollars == 55.04
    assert cost.instance_price(SNAPSHOT, "aws", "us-east-1", "m6i.large", "spot").dollars is None  # no spot row


def test_spot_or_on_demand_is_priced_at_on_demand():
    price = cost.instance_price(SNAPSHOT, "aws", "us-east-1", "p5.48xlarge", "spot/on-demand")
    assert price.dollars == 55.04 and "the most it pays" in price.basis


def test_a_machine_type_priced_whole_adds_no_gpu_row():
    whole = PriceSnapshot(
        "2026-07-30",
        {"g": {"date": "2026-07-30"}},
        {
            "gcp": {
                "us-central1": {
                    "a3-highgpu-8g": Quote(88.49, {"us-central1": 50.6}, "g", "g", True),
                    accelerator_key("H100", 8): Quote(33.6),
                }
            }
        },
        {},
    )
    price = cost.instance_price(whole, "gcp", "us-central1", "a3-highgpu-8g", "ON_DEMAND", (), ("H100", 8))
    assert price.dollars == 88.49 and price.sources == ("g",) and "its GPUs included" in price.basis
    assert cost.instance_price(whole, "gcp", "us-central1", "a3-highgpu-8g", "SPOT", (), ("H100", 8)).dollars == 50.6


def test_gcp_gpus_add_to_the_machine_type():
    on_demand = cost.instance_price(SNAPSHOT, "gcp", "us-central1", "a2-highgpu-2g", "ON_DEMAND", (), ("A100", 2))
    spot = cost.instance_price(SNAPSHOT, "gcp", "us-central1", "a2-highgpu-2g", "SPOT", ("us-central1-a",), ("A100", 2))
    assert on_demand.dollars == round(1.47895 + 5.86782, 6) and spot.dollars == round(0.7395 + 2.8682, 6)
    assert cost.instance_price(SNAPSHOT, "gcp", "us-central1", "a2-highgpu-2g", "ON_DEMAND", (), ("A100", 4)).dollars is None


@pytest.mark.parametrize(
    "cloud, region, name, purchase, said",
    [
        ("aws", "us-east-1", "p5.48xlarge", "CAPACITY_BLOCK", "Capacity Block"),
        ("aws", "us-east-1", "p5.48xlarge", "reserved", "reservation"),
        (None, "cn-hangzhou", "ecs.gn6i-c24g1.24xlarge", "PrePaid", "subscription"),
        (None, "cn-hangzhou", "ecs.gn6i-c24g1.24xlarge", "PostPaid", "Alibaba"),
        ("aws", None, "p5.48xlarge", "ON_DEMAND", "region is not known"),
        ("aws", "us-east-1", "p5e.48xlarge", "ON_DEMAND", "lists it without an on-demand price"),
        ("aws", "us-west-2", "p5.48xlarge", "ON_DEMAND", "the snapshot has no price for it"),
    ],
)
def test_what_the_snapshot_cannot_price_is_unknown_never_zero(cloud, region, name, purchase, said):
    price = cost.instance_price(SNAPSHOT, cloud, region, name, purchase)
    assert price.dollars is None and said in price.basis
    assert cost.group_cost(price, {"min": 1, "desired": 2, "max": 3})["hourly"] == {"min": None, "desired": None, "max": None}


def test_a_group_s_cost_at_each_size():
    price = cost.instance_price(SNAPSHOT, "aws", "us-east-1", "p5.48xlarge", "ON_DEMAND")
    found = cost.group_cost(price, {"min": 1, "desired": 2, "max": 4.0}, 8)
    assert found["hourly"] == {"min": 55.04, "desired": 110.08, "max": 220.16}
    assert found["monthly"] == {"min": 40179.2, "desired": 80358.4, "max": 160716.8}
    assert found["idleMonthly"] == 40179.2 and found["perAcceleratorHour"] == 6.88
    assert cost.group_cost(price, {"min": None, "desired": 1.5, "max": -1})["hourly"] == {"min": None, "desired": None, "max": None}
    assert cost.group_cost(price, {"min": 0, "desired": 0, "max": 0})["perAcceleratorHour"] is None


def test_nodes_cost_and_sums_of_known_amounts():
    price = cost.instance_price(SNAPSHOT, "aws", "us-east-1", "m6i.large", "ON_DEMAND")
    assert cost.nodes_cost(price, 3) == {"nodes": 3, "hourly": 0.288, "monthly": 210.24}
    assert cost.add([1.0, None, 2.5]) == 3.5 and cost.add([None]) is None


def test_ceilings_hold_above_their_value_only():
    assert cost.over_monthly_max(100.0, 100.0) is None and cost.over_monthly_max(100.01, 100.0)
    assert cost.over_monthly_max(None, 1.0) is None and cost.over_monthly_max(5.0, None) is None
    assert cost.over_idle(50.0, 50.0) is None and "idle" in cost.over_idle(50.5, 50.0)
    assert cost.over_accelerator_hour(2.0, "spot", {"spot": 2.0}) is None
    assert "spot" in cost.over_accelerator_hour(2.1, "spot", {"spot": 2.0})
    assert cost.over_accelerator_hour(9.0, "on-demand", {"spot": 2.0}) is None  # no ceiling for its option


def test_purchase_options_as_each_api_spells_them():
    assert cost.purchase_options(None) == ("on-demand",)
    assert cost.purchase_options("Regular") == ("on-demand",) and cost.purchase_options("Spot") == ("spot",)
    assert cost.purchase_options("spot/on-demand") == ("spot", "on-demand")


# Karpenter orders a NodeClaim's types by their cheapest offering (cheapest_offering): two zones' spot
# prices, a type with no spot row and a type with no row at all.
OFFERINGS = PriceSnapshot(
    "2026-07-20",
    {"s": {"repository": "r", "path": "p", "commit": "c", "date": "2026-07-20"}},
    {"aws": {"us-east-1": {"g5.xlarge": Quote(1.006, {"use1-az1": 0.5, "use1-az2": 0.3}, "s", "s"), "g6.xlarge": Quote(0.805, {}, "s")}}},
    {},
)


@pytest.mark.parametrize(
    "region, name, capacity, dollars, basis",
    [
        ("us-east-1", "g5.xlarge", "spot", 0.3, "g5.xlarge spot 0.3 (lowest of the region's 2 zones) $/h in us-east-1"),
        ("us-east-1", "g5.xlarge", "on-demand", 1.006, "g5.xlarge on-demand 1.006 $/h in us-east-1"),
        ("us-east-1", "g6.xlarge", "spot", None, "no spot price for g6.xlarge in us-east-1"),
        ("us-east-1", "g6.xlarge", "on-demand", 0.805, "g6.xlarge on-demand 0.805 $/h in us-east-1"),
        ("us-east-1", "p5.48xlarge", "on-demand", None, "no on-demand price for p5.48xlarge in us-east-1"),
        ("us-east-1", "p5.48xlarge", "spot", None, "no spot price for p5.48xlarge in us-east-1"),
        (None, "g5.xlarge", "spot", None, "its region is not known before apply"),
        (
            "us-east-1",
            "g5.xlarge",
            "reserved",
            None,
            "reserved capacity is paid under its reservation; the snapshot has no reservation prices",
        ),
        (
            "us-east-1",
            "p5.48xlarge",
            "reserved",
            None,
            "reserved capacity is paid under its reservation; the snapshot has no reservation prices",
        ),
    ],
)
def test_cheapest_offering_is_the_on_demand_price_or_the_lowest_zone_s_spot_price(region, name, capacity, dollars, basis):
    price = cost.cheapest_offering(OFFERINGS, region, name, capacity)
    assert (price.purchase, price.dollars, price.basis) == (capacity, dollars, basis)
    assert price.sources == (("s",) if dollars is not None else ())


def test_named_zones_take_the_highest_of_them_and_say_which():
    price = cost.instance_price(OFFERINGS, "aws", "us-east-1", "g5.xlarge", "SPOT", ("use1-az2", "use1-az1"))
    assert (price.dollars, price.basis) == (0.5, "g5.xlarge spot 0.5 (highest of zones use1-az2, use1-az1) $/h in us-east-1")
    region = cost.instance_price(OFFERINGS, "aws", "us-east-1", "g5.xlarge", "SPOT")
    assert region.basis == "g5.xlarge spot 0.5 (highest of the region's 2 zones) $/h in us-east-1"


def test_a_host_row_and_its_attached_gpu_row_are_added_and_named():
    attached = PriceSnapshot(
        None,
        {"s": {"repository": "r", "path": "p", "commit": "c", "date": "2026-07-30"}},
        {"gcp": {"us-central1": {"n1-standard-8": Quote(0.38, {}, "s"), accelerator_key("T4", 2): Quote(0.7, {}, "s")}}},
        {},
    )
    price = cost.instance_price(attached, "gcp", "us-central1", "n1-standard-8", "ON_DEMAND", (), ("T4", 2))
    assert (price.dollars, price.basis) == (1.08, "n1-standard-8 on-demand 0.38 + 2 x T4 on-demand 0.7 $/h in us-central1")
    missing = cost.instance_price(attached, "gcp", "us-central1", "n1-standard-8", "ON_DEMAND", (), ("V100", 1))
    assert missing.basis == "1 x V100 in us-central1: the snapshot has no price for it (r p @c, 2026-07-30, no licence found)"


def test_a_cloud_the_snapshot_holds_no_rows_of_is_said_so():
    empty = PriceSnapshot(None, {}, {"aws": {}, "gcp": {"us-central1": {}}, "azure": {}}, {})
    assert cost.instance_price(empty, "gcp", "us-central1", "a2-highgpu-1g", None).basis == (
        "a2-highgpu-1g in us-central1: the snapshot has no price for it (no source)"
    )
    assert cost.instance_price(empty, "alibaba", "cn-hangzhou", "ecs.gn7i-c8g1.2xlarge", None).basis == (
        "the snapshot has no prices for this cloud (no public source: Alibaba Cloud)"
    )


def test_spot_first_then_a_price_less_option_takes_the_first():
    assert cost.instance_price(OFFERINGS, "aws", "us-east-1", "g5.xlarge", "spot/reserved").purchase == "spot"
    assert cost.instance_price(OFFERINGS, "aws", "us-east-1", "g5.xlarge", "reserved/spot").dollars is None


def test_a_price_is_frozen_and_sums_keep_four_places():
    price = cost.instance_price(OFFERINGS, "aws", "us-east-1", "g5.xlarge", "ON_DEMAND")
    with pytest.raises(AttributeError):
        price.dollars = 0.0  # type: ignore[misc]
    assert cost.add([0.12344, 0.00002]) == 0.1235


def test_every_undated_source_gets_its_own_advisory():
    undated = PriceSnapshot(None, {"a": {"read": "2026-11-26"}, "b": {"read": "2026-11-27"}}, {}, {})
    found = cost.prices_advisories(undated, ["a", "b"], datetime.date(2026, 11, 29))
    assert [f.split(":")[0] for f in found] == ["a", "b"]
