"""src/gpufleet/policies/budget.py (fleet-budget) over the real gRPC path: under and over each ceiling, groups of
unknown price named under rules-not-judged, a program gpufleet did not write, and nothing said
without a ceiling."""

from __future__ import annotations

from tests.plan_edits import golden
from tests.policy_helpers import findings, resource

POLICY = "fleet-budget"


def test_without_a_ceiling_nothing_is_said(judge):
    assert findings(judge(golden("ecs-gpu")["resources"]), POLICY) == []


def test_a_fleet_under_its_ceilings_passes(judge):
    config = {POLICY: {"maxMonthlyAtMax": 40000, "maxIdleMonthly": 5000, "maxPricePerAcceleratorHour": {"on-demand": 1.5, "spot": 2}}}
    result = judge(golden("ecs-gpu")["resources"], config)
    assert findings(result, POLICY) == [] and not [f for f in result.findings if f.policy == "rules-not-judged" and POLICY in f.message]


def test_a_fleet_over_its_ceilings_is_named_with_its_cost(judge):
    # ecs-gpu: $37,155.69 a month at max, $4,140.56 idle, g5.12xlarge $1.418 a GPU-hour on demand.
    config = {POLICY: {"maxMonthlyAtMax": 37000, "maxIdleMonthly": 4000, "maxPricePerAcceleratorHour": {"on-demand": 1.4}}}
    result = judge(golden("ecs-gpu")["resources"], config)
    said = [m.splitlines()[-1] for m in findings(result, POLICY)]
    assert said == [
        "the fleet costs $37,155.69 a month at max size, over the ceiling of $37,000.00; prices of 2026-07-20 (karpenter-provider-aws 2026-07-20; skypilot-catalog-aws undated, read 2026-11-26), from the shipped snapshot",
        "the groups' minimum sizes cost $4,140.56 a month idle, over the ceiling of $4,000.00; prices of 2026-07-20 (karpenter-provider-aws 2026-07-20; skypilot-catalog-aws undated, read 2026-11-26), from the shipped snapshot",
        "ecs ml-gpu-inference (g5.12xlarge): $1.4180 per accelerator-hour (on-demand), over the ceiling of $1.4000; prices of 2026-07-20 (karpenter-provider-aws 2026-07-20; skypilot-catalog-aws undated, read 2026-11-26), from the shipped snapshot",
    ]
    assert {f.level for f in result.findings if f.policy == POLICY} == {"advisory"}
    [per_gpu] = findings(result, POLICY, "ml-gpu-inference")
    assert "g5.12xlarge" in per_gpu


def test_the_config_makes_it_mandatory(judge):
    config = {POLICY: {"enforcementLevel": "mandatory", "maxMonthlyAtMax": 100}}
    result = judge(golden("ecs-gpu")["resources"], config)
    assert {f.level for f in result.findings if f.policy == POLICY} == {"mandatory"}


def test_unknown_prices_are_named_and_the_totals_said_incomplete(judge):
    # eks-p5-efa: the p5 group is a Capacity Block (no public price); the system group alone is priced.
    result = judge(golden("eks-p5-efa")["resources"], {POLICY: {"maxMonthlyAtMax": 100}})
    [over] = [m.splitlines()[-1] for m in findings(result, POLICY)]
    assert over.startswith("the fleet costs $210.24 a month at max size") and "1 group(s) of unknown price not counted" in over
    [unjudged] = [f for f in result.findings if f.policy == "rules-not-judged" and f.urn.endswith("::p5-train-p5")]
    assert "fleet-budget was not judged: p5 (p5.48xlarge) has no price" in unjudged.message and "Capacity Block" in unjudged.message


def test_a_program_gpufleet_did_not_write_is_priced_from_its_provider_s_region(judge):
    provider = resource("pulumi:providers:aws", "default", {"region": "us-west-2"})
    group = resource(
        "aws:eks/nodeGroup:NodeGroup",
        "gpu",
        {
            "clusterName": "ml",
            "instanceTypes": ["g5.2xlarge"],
            "scalingConfig": {"minSize": 1, "desiredSize": 2, "maxSize": 8},
            "capacityType": "ON_DEMAND",
        },
    )
    group["provider"] = f"{provider['urn']}::04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    result = judge([provider, group], {POLICY: {"maxMonthlyAtMax": 5000}})
    # g5.2xlarge in us-west-2: 1.212 $/h x 8 x 730 = $7,078.08.
    [over] = [m.splitlines()[-1] for m in findings(result, POLICY)]
    # us-west-2 has no licensed source: skypilot-catalog's row, which carries no date, says so.
    assert over == (
        "the fleet costs $7,078.08 a month at max size, over the ceiling of $5,000.00; "
        "prices of unknown date (skypilot-catalog-aws undated, read 2026-11-26), from the shipped snapshot"
    )


def test_a_pulumi_eks_node_group_the_plan_only_derives_is_named_not_counted(judge):
    """A pulumi-eks ManagedNodeGroup's instances are made by its provider, not in the plan: the
    placement derives them from the library's defaults; the budget names them and counts none."""
    provider = resource("pulumi:providers:aws", "default", {"region": "us-east-1"})
    managed = resource(
        "eks:index:ManagedNodeGroup",
        "gpu",
        {
            "cluster": {"eksCluster": {"name": "ml"}},
            "instanceTypes": ["p5.48xlarge"],
            "scalingConfig": {"minSize": 2, "desiredSize": 2, "maxSize": 4},
        },
    )
    result = judge([provider, managed], {POLICY: {"maxMonthlyAtMax": 1}})
    assert findings(result, POLICY) == []  # nothing priced: no verdict on a guess
    [unjudged] = [
        f for f in result.findings if f.policy == "rules-not-judged" and "fleet-budget was not judged: gpu (p5.48xlarge)" in f.message
    ]
    assert "derived: pulumi-eks ManagedNodeGroup 'gpu'" in unjudged.message and unjudged.message.endswith("not counted")
