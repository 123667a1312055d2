"""The cost block of a plan (src/gpufleet/plans/cost.py) against the snapshot's own rows, computed by
hand here from the recorded sources (tests/fixtures/prices), and the report's lines."""

from __future__ import annotations

import csv
import datetime
import gzip
from pathlib import Path

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog import prices as price_catalog
from gpufleet.catalog.generate import prices as generator
from gpufleet.library.cost import group_cost
from gpufleet.rules import cost as cost_rules
from tests.plan_edits import golden, plan_cost

ROOT = Path(__file__).resolve().parents[2]
SLICES = ROOT / "tests" / "fixtures" / "prices" / "skypilot-catalog"
KARPENTER = ROOT / "tests" / "fixtures" / "prices" / "third_party" / "karpenter-provider-aws" / "zz_generated.pricing_aws.go"
CYCLENERD = ROOT / "tests" / "fixtures" / "prices" / "third_party" / "google-cloud-pricing-cost-calculator" / "pricing.yml.gz"
SHIPPED = sorted(p.name.removesuffix(".plan.json") for p in (ROOT / "tests" / "golden").glob("*.plan.json"))


def _rows(cloud: str, **match) -> list[dict]:
    with (SLICES / f"{cloud}-vms.csv").open() as fh:
        return [r for r in csv.DictReader(fh) if all(r[k] == v for k, v in match.items())]


def test_ecs_gpu_totals_match_a_hand_count_from_the_catalog_rows():
    # inference: g5.12xlarge on-demand, 1/1/4 instances; training: p4d.24xlarge spot, 0/0/2, priced
    # at the highest spot price of the region's zones (zone names map to zone ids per account).
    g5 = generator.read_karpenter(KARPENTER.read_text(), "table")[1]["us-east-1"]["g5.12xlarge"]
    p4d = max(float(r["SpotPrice"]) for r in _rows("aws", InstanceType="p4d.24xlarge", Region="us-east-1"))
    plan = golden("ecs-gpu")
    cost = plan_cost(plan["resources"], plan["placement"])
    hourly = {"min": g5 * 1, "desired": g5 * 1, "max": g5 * 4 + p4d * 2}
    assert cost["total"]["hourly"] == {k: round(v, 4) for k, v in hourly.items()}
    assert cost["total"]["monthly"]["max"] == round(round(hourly["max"], 4) * 730, 2)
    assert cost["total"]["idleMonthly"] == round(g5 * 730, 2)
    assert cost["complete"] and cost["prices"]["date"] == "2026-07-20"
    by_name = {g["group"]: g for g in cost["groups"]}
    assert by_name["ml-gpu-inference"]["perAcceleratorHour"] == round(g5 / 4, 4)
    assert by_name["ml-gpu-training"]["purchase"] == "spot" and by_name["ml-gpu-training"]["pricePerHour"] == p4d
    assert cost["byPurchase"]["spot"]["hourly"]["max"] == round(p4d * 2, 4)
    # The placement: llm-serve needs one inference instance; nothing runs on training.
    assert by_name["ml-gpu-inference"]["needed"]["nodes"] == 1 and by_name["ml-gpu-training"]["needed"]["nodes"] == 0
    # The plan written by the preview carries the same block.
    assert plan["cost"] == cost


def _gcp_in(region: str, machine_type: str) -> float:
    """The machine type's on-demand price in the region in the GCP source, its GPUs included."""
    text = gzip.decompress(CYCLENERD.read_bytes()).decode()
    return generator.read_cyclenerd(generator.parse_yaml(text, "pricing.yml"), "pricing.yml")[1][region][machine_type]["onDemand"]


def _gcp(machine_type: str) -> float:
    return _gcp_in("us-central1", machine_type)


def test_a_gke_pool_is_its_machine_type_priced_whole_with_its_gpus():
    whole = _gcp("a2-highgpu-2g")
    [pool] = plan_cost(golden("gke-a100-mig")["resources"])["groups"]
    assert pool["pricePerHour"] == round(whole, 6) and pool["hourly"]["desired"] == round(whole * 2, 4)
    assert "(its GPUs included)" in pool["basis"] and pool["sources"] == ["google-cloud-pricing-cost-calculator"]


def test_an_unknown_price_is_null_and_named_never_zero():
    cost = plan_cost(golden("eks-p5-efa")["resources"])
    [p5] = [g for g in cost["groups"] if g["instanceType"] == "p5.48xlarge"]
    assert p5["pricePerHour"] is None and p5["hourly"] == {"min": None, "desired": None, "max": None}
    assert [u["group"] for u in cost["unpriced"]] == ["p5"] and "Capacity Block" in cost["unpriced"][0]["reason"]
    assert not cost["complete"] and cost["total"]["hourly"]["desired"] == 0.192  # the system group alone, said incomplete
    [ack] = plan_cost(golden("ack-shared-gpu")["resources"])["unpriced"][:1]
    assert "Alibaba" in ack["reason"]


def test_karpenter_prices_the_nodes_it_launches_for_pending_pods():
    plan = golden("eks-auto-gpu")
    [pool] = plan_cost(plan["resources"], plan["placement"])["groups"]
    g6 = float(_rows("aws", InstanceType="g6.xlarge", Region="us-east-1")[0]["Price"])
    [launched] = pool["needed"]["byType"]
    assert launched == {
        "instanceType": "g6.xlarge",
        "nodes": 2,
        "hourly": round(g6 * 2, 4),
        "monthly": round(round(g6 * 2, 4) * 730, 2),
        "chosen": launched["chosen"],  # the rule the simulation named the type by (tests/simulate/test_karpenter_prices.py)
    }
    assert launched["chosen"].startswith("smallest of 10 types holding them (no prices: no spot price for ")
    assert "priced at on-demand" in pool["basis"]  # spot or on-demand: the most it pays


def test_an_existing_aks_cluster_s_pools_are_priced_at_the_location_the_stack_gives():
    plan = golden("aks-a100-mig")
    assert plan["summary"]["regions"] == {"azure": "eastus"}
    [pool] = plan["cost"]["groups"]
    assert pool["region"] == "eastus" and pool["pricePerHour"] == float(_rows("azure", InstanceType="Standard_NC24ads_A100_v4")[0]["Price"])
    assert plan_cost(plan["resources"])["unpriced"][0]["reason"] == "its region is not known before apply"


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_shipped_stack_s_plan_carries_its_cost_and_the_price_date(stack):
    cost = golden(stack)["cost"]
    used = list(cost["prices"]["sources"])
    # The date is the oldest of the sources the plan's prices come from; each older than 90 days on
    # the frozen day (2026-11-26), or undated, is an advisory.
    assert cost["prices"]["date"] == price_catalog.load().oldest(used)[0] and cost["prices"]["hoursPerMonth"] == 730
    assert cost["prices"]["stated"].startswith(f"prices of {cost['prices']['date'] or 'unknown date'} (") or not used
    assert cost["prices"]["advisories"] == cost_rules.prices_advisories(price_catalog.load(), used, datetime.date(2026, 11, 26))
    assert {g for group in cost["groups"] for g in group["sources"]} == set(used)
    # Karpenter's table is of 2026-07-20: 129 days old on the frozen day, said wherever it is used.
    assert any(a.startswith("karpenter-provider-aws: prices of 2026-07-20 are 129 days old") for a in cost["prices"]["advisories"]) == (
        "karpenter-provider-aws" in used
    )
    for g in cost["groups"]:
        unknown = g["pricePerHour"] is None or None in g["hourly"].values()
        assert unknown == any(u["urn"] == g["urn"] for u in cost["unpriced"])
        assert g["pricePerHour"] is None or g["pricePerHour"] > 0
    assert cost["complete"] == (not cost["unpriced"])


def test_a_gke_a3_pool_outside_us_central1_is_priced_whole():
    found = group_cost("a3-highgpu-8g", "europe-west4", desired_size=1, max_size=1, cloud="gcp", gcp_gpus=("H100", 8))
    assert found["hourly"]["desired"] == round(_gcp_in("europe-west4", "a3-highgpu-8g"), 4)
    assert (
        found["pricesDate"] == "2026-07-30"
        and found["prices"] == "prices of 2026-07-30 (google-cloud-pricing-cost-calculator 2026-07-30), from the shipped snapshot"
    )


def test_the_library_function_prices_a_group_as_the_plan_does():
    found = group_cost("g5.12xlarge", "us-east-1", min_size=1, desired_size=1, max_size=4, accelerators_per_instance=4)
    [inference] = [g for g in golden("ecs-gpu")["cost"]["groups"] if g["group"] == "ml-gpu-inference"]
    assert {k: found[k] for k in ("hourly", "monthly", "idleMonthly", "perAcceleratorHour")} == {
        k: inference[k] for k in ("hourly", "monthly", "idleMonthly", "perAcceleratorHour")
    }
    assert found["pricesDate"] == "2026-07-20"
    unknown = group_cost("p5.48xlarge", "us-east-1", desired_size=2, purchase="CAPACITY_BLOCK")
    assert unknown["hourly"]["desired"] is None and "Capacity Block" in unknown["basis"]


def test_pools_without_gpus_cost_money_too():
    # aks-gpu-operator creates its cluster: the default pool (Standard_D4s_v5, 2 nodes) is priced at
    # the cluster's location; gke-l4-timeshare's regional system pool has a price but no known size.
    d4 = float(_rows("azure", InstanceType="Standard_D4s_v5")[0]["Price"])
    [system] = [g for g in golden("aks-gpu-operator")["cost"]["groups"] if g["instanceType"] == "Standard_D4s_v5"]
    assert system["region"] == "eastus" and system["hourly"]["desired"] == round(d4 * 2, 4)
    cost = golden("gke-l4-timeshare")["cost"]
    [pool] = [g for g in cost["groups"] if g["instanceType"] == "e2-standard-4"]
    assert pool["pricePerHour"] == round(_gcp("e2-standard-4"), 6) and pool["hourly"]["desired"] is None
    assert any(u["instanceType"] == "e2-standard-4" and "not known from the plan" in u["reason"] for u in cost["unpriced"])


def test_ecs_managed_instances_are_named_unpriced():
    cost = golden("ecs-managed-gpu")["cost"]
    assert cost["groups"] == [] and {u["group"] for u in cost["unpriced"]} == {"ml-managed-gpu", "ml-managed-neuron"}
    assert all("ECS Managed Instances chooses" in u["reason"] for u in cost["unpriced"])


@pytest.mark.parametrize("stack", SHIPPED)
def test_a_plan_s_cost_is_read_back_from_its_resources_alone(stack):
    """The golden plans' cost blocks (reviewed, rewritten only by GPUFLEET_UPDATE_GOLDEN=1) are what
    the plan reader gives from the resources, the placement and the summary's regions."""
    from gpufleet.plans.cost import plan_hints

    plan = golden(stack)
    assert plan_cost(plan["resources"], plan["placement"], plan_hints(plan["summary"])) == plan["cost"]


def test_what_the_workloads_need_adds_each_workload_s_nodes_and_its_scale_up():
    from gpufleet.plans.cost import _needed

    placement = {
        "pods": [
            {"status": "daemon", "nodeGroups": {"gpu": {"placed": 4, "perNode": 1}}},
            {"status": "scheduled", "nodeGroups": {"gpu": {"placed": 5, "perNode": 2}, "cpu": {"placed": 0, "perNode": 3}}},
            {"status": "after-scale-up", "nodeGroups": {"gpu": {"placed": 1, "perNode": 1}}, "scaleUp": {"gpu": 2}},
        ],
        "tasks": [
            {"capacityProvider": "ml", "instancesNeeded": 3},
            {"capacityProvider": "ml", "instancesNeeded": 1},
            {"capacityProvider": "ml"},
        ],
        "provisioned": [
            {"nodePool": "np", "instanceType": "g6.xlarge", "nodes": 2, "chosen": "cheapest of 2 types holding them"},
            {"nodePool": "np", "instanceType": "g5.xlarge", "nodes": 1},
        ],
    }
    placement["pods"].append({"status": "pending", "nodeGroups": {}, "scaleUp": {"new": 2}})
    per_group, launched, placed_any = _needed(placement)
    # gpu: the scheduled template alone needs 3 nodes, the scaled-up one 1 + 2; together at most 6.
    assert per_group == {"gpu": (3, 6), "ml": (3, 4), "new": (2, 2)}
    assert launched == {"np": [("g6.xlarge", 2, "cheapest of 2 types holding them"), ("g5.xlarge", 1, None)]} and placed_any
    assert _needed({"pods": [placement["pods"][0]]})[2] is False  # DaemonSets alone ask for no nodes


def test_a_group_s_region_comes_from_itself_then_its_provider_then_the_plan_s_hint():
    from tests.policy_helpers import resource

    def plan(provider_region: str | None, *, linked: bool = True):
        provider = resource("pulumi:providers:aws", "p", {"region": provider_region} if provider_region else {})
        group = resource(
            "aws:eks/nodeGroup:NodeGroup",
            "g",
            {"instanceTypes": ["m6i.large"], "scalingConfig": {"minSize": 1, "desiredSize": 1, "maxSize": 1}},
        )
        if linked:
            group["provider"] = f"{provider['urn']}::id"
        return [provider, group]

    [g] = plan_cost(plan("us-west-2"), hints={"aws": "us-east-1"})["groups"]
    assert g["region"] == "us-west-2"
    [g] = plan_cost(plan(None), hints={"aws": "us-east-1"})["groups"]
    assert g["region"] == "us-east-1"
    [g] = plan_cost(plan("us-west-2", linked=False))["groups"]
    assert g["region"] == "us-west-2"  # the plan's one AWS provider
    [g] = plan_cost(plan(None))["groups"]
    assert g["region"] is None and g["basis"] == "its region is not known before apply"
    # Two AWS providers: the group's own is the one its reference names.
    resources = plan("us-west-2") + [resource("pulumi:providers:aws", "other", {"region": "eu-west-1"})]
    [g] = plan_cost(resources)["groups"]
    assert g["region"] == "us-west-2"
    resources[1]["provider"] = resources[2]["urn"] + "::id"
    [g] = plan_cost(resources)["groups"]
    assert g["region"] == "eu-west-1"


def test_a_group_of_unknown_desired_size_is_named_though_its_price_is_known():
    from tests.policy_helpers import resource

    provider = resource("pulumi:providers:aws", "p", {"region": "us-east-1"})
    group = resource("aws:eks/nodeGroup:NodeGroup", "g", {"instanceTypes": ["m6i.large"], "scalingConfig": {"minSize": 1, "maxSize": 3}})
    cost = plan_cost([provider, group])
    [g] = cost["groups"]
    assert g["pricePerHour"] == 0.096 and g["hourly"] == {"min": 0.096, "desired": None, "max": 0.288}
    [u] = cost["unpriced"]
    assert u["reason"].startswith("its desired size is not known from the plan") and not cost["complete"]


def test_a_pool_without_a_placement_has_no_needed_nodes():
    cost = plan_cost(golden("eks-auto-gpu")["resources"])
    assert "needed" not in cost["groups"][0] and "needed" not in cost["total"]


def test_an_ecs_managed_instances_provider_is_named_by_its_name():
    from tests.policy_helpers import resource

    provider = resource(
        "aws:ecs/capacityProvider:CapacityProvider", "res-name", {"managedInstancesProvider": {"infrastructureRoleArn": "arn"}}
    )
    assert [u["group"] for u in plan_cost([provider])["unpriced"]] == ["res-name"]
    provider["inputs"]["name"] = "given"
    assert [u["group"] for u in plan_cost([provider])["unpriced"]] == ["given"]


def test_nodes_the_placement_reads_but_no_group_prices_are_named():
    """A pulumi-eks Cluster's default node group is made by the library's provider: the placement
    derives it, the cost names it (not counted) instead of passing over it."""
    from gpufleet.plans import placement as plan_placement
    from tests.policy_helpers import resource

    provider = resource("pulumi:providers:aws", "default", {"region": "us-east-1"})
    cluster = resource("eks:index:Cluster", "ml", {"instanceType": "g5.12xlarge", "desiredCapacity": 2, "minSize": 1, "maxSize": 3})
    resources = [provider, cluster]
    placement = plan_placement.placement(plan_placement.from_plan({"resources": resources})).as_dict()
    cost = plan_cost(resources, placement)
    [u] = cost["unpriced"]
    assert (u["group"], u["instanceType"]) == ("ml default node group", "g5.12xlarge")
    assert "derived: the default node group of pulumi-eks Cluster 'ml'" in u["reason"] and not cost["complete"]
    assert cost["groups"] == [] and plan_cost(resources)["unpriced"] == []  # without the placement, nothing read


def test_workloads_that_share_instances_need_a_range_not_a_sum():
    """ecs-neuron: six services, each pinned to its own Neuron chip of inf2.24xlarge (6 chips), two
    tasks each: they fit 2 instances together, 12 if none shared one. The plan says how many of each
    fit an instance, not which share: the cost says both, never the sum alone."""
    plan = golden("ecs-neuron")
    inf2 = float(_rows("aws", InstanceType="inf2.24xlarge", Region="us-west-2")[0]["Price"])
    [inference] = [g for g in plan["cost"]["groups"] if g["group"] == "ml-neuron-inference"]
    assert (inference["needed"]["nodes"], inference["needed"]["nodesAtMost"]) == (2, 12)
    assert inference["needed"]["hourly"] == round(inf2 * 2, 4) and inference["needed"]["hourlyAtMost"] == round(inf2 * 12, 4)
    assert plan["cost"]["total"]["needed"]["hourly"] == round(inf2 * 2, 4)


def test_a_region_comes_from_the_summary_then_the_stack_then_the_aws_provider_s_environment():
    """plan_hints: a gpufleet plan's summary states its regions; else the stack's `aws:region`; else the
    variables the AWS provider reads, AWS_REGION before AWS_DEFAULT_REGION, an empty one passed over."""
    from gpufleet.plans.cost import plan_hints

    environ = {"AWS_REGION": "us-east-2", "AWS_DEFAULT_REGION": "sa-east-1"}
    assert plan_hints({"regions": {"aws": "eu-west-1", "gcp": "us-central1", "odd": 5}}, environ, "us-west-2") == {
        "aws": "eu-west-1",
        "gcp": "us-central1",
    }
    assert plan_hints({}, environ, "us-west-2") == {"aws": "us-west-2"}
    assert plan_hints({}, environ) == {"aws": "us-east-2"}
    assert plan_hints({}, {"AWS_REGION": "", "AWS_DEFAULT_REGION": "sa-east-1"}) == {"aws": "sa-east-1"}
    assert plan_hints({}, {}) == {} and plan_hints({"regions": {"gcp": "us-central1"}}) == {"gcp": "us-central1"}


def test_a_pool_whose_pods_fit_without_launches_and_a_group_without_a_placement_have_no_needed_nodes():
    """`needed` comes from the placement: a Karpenter pool from the nodes it launches (none here, the
    pods fit), any other group only when the plan was placed at all."""
    plan = golden("eks-auto-gpu")
    [pool] = plan_cost(plan["resources"], {**plan["placement"], "provisioned": []})["groups"]
    assert "needed" not in pool
    assert all("needed" not in g for g in plan_cost(golden("ecs-gpu")["resources"])["groups"])


def _launching(*launches: tuple[str, int], known_region: bool = True) -> dict:
    """eks-auto-gpu's cost when its pool `gpu` (priced as g6e.16xlarge) launches these (type, nodes);
    without a known region, its AWS provider (us-east-1) names none."""
    plan = golden("eks-auto-gpu")
    resources = [r for r in plan["resources"] if known_region or r["type"] != "pulumi:providers:aws"]
    provisioned = [{"nodePool": "gpu", "instanceType": name, "nodes": nodes} for name, nodes in launches]
    return plan_cost(resources, {**plan["placement"], "provisioned": provisioned})


def test_a_launch_of_a_type_without_a_price_leaves_the_pool_s_needed_cost_unknown():
    # p5e.48xlarge has no on-demand price in us-east-1 in the snapshot (its source lists none there).
    cost = _launching(("g6.xlarge", 2), ("p5e.48xlarge", 1))
    [pool] = cost["groups"]
    assert [n["hourly"] is None for n in pool["needed"]["byType"]] == [False, True]
    assert pool["needed"]["hourly"] is None and pool["needed"]["nodes"] == 3
    assert [(u["instanceType"], u["reason"].split(":")[0]) for u in cost["unpriced"]] == [
        ("p5e.48xlarge", "the 1 node Karpenter launches for the Pending pods")
    ]


def test_a_launch_unpriced_for_the_pool_s_own_reason_is_named_unless_it_is_the_pool_s_type():
    """With no region, the pool and every type it launches are unpriced for the same reason: the
    pool is named once for its own type, each other type it launches by itself."""
    cost = _launching(("g6.xlarge", 2), ("g6e.16xlarge", 1), known_region=False)
    assert [(u["instanceType"], u["reason"]) for u in cost["unpriced"]] == [
        ("g6e.16xlarge", "its region is not known before apply"),
        ("g6.xlarge", "the 2 nodes Karpenter launches for the Pending pods: its region is not known before apply"),
    ]


def test_a_managed_group_naming_no_type_is_priced_as_the_default_and_says_so():
    from tests.policy_helpers import resource

    provider = resource("pulumi:providers:aws", "p", {"region": "us-east-1"})
    group = resource("aws:eks/nodeGroup:NodeGroup", "g", {"scalingConfig": {"minSize": 1, "desiredSize": 1, "maxSize": 1}})
    [g] = plan_cost([provider, group])["groups"]
    default = catalog.load().facts.eks.node_group_default_instance_type
    assert g["instanceType"] == default.value
    assert g["notes"] == [f"priced as derived: instance type {default.value}: EKS's default for a group that names none ({default.source})"]


def test_fargate_services_scaled_to_zero_are_named_with_no_tasks_or_pods():
    """A service or Deployment of zero replicas on Fargate is still named (0 tasks, 0 pods), never
    counted as one."""
    from tests.plans.test_fargate import CLUSTER, _deployment, _placed, _profile, _service

    td, service = _service("512", "1024", desired=0)
    [entry] = plan_cost([], _placed(td, service))["unpriced"]
    assert entry["group"] == "ECS on FARGATE" and entry["reason"].endswith("(0 tasks)")
    placed = _placed(CLUSTER, _profile("apps", {"namespace": "apps"}), _deployment("idle", "apps", replicas=0))
    [entry] = plan_cost([], placed)["unpriced"]
    assert entry["group"] == "Fargate profile apps" and entry["reason"].endswith("(0 pods)")
