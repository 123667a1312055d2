"""Scale: a saved plan far larger than any shipped stack is judged to the same verdict as its
small core, and the largest stacks AWS allows preview complete and clean."""

from __future__ import annotations

import json
from collections import Counter

from bench.fleets import ECS_LARGEST, EKS_EFA_TYPES, EKS_LARGEST, ecs_fleet, eks_fleet
from gpufleet.analyzer.pack_dir import DEFAULT_PACK
from gpufleet.catalog import catalog, tokens
from gpufleet.engine.preview import preview_plan
from tests.conftest import ROOT, run_cli
import pytest

pytestmark = pytest.mark.slow  # a quick loop leaves it out: pytest -m 'not slow'

PREVIEW_JSON = ROOT / "tests" / "fixtures" / "pulumi-preview.json"


def _verdict(policy: dict) -> set[tuple[str, str, str]]:
    return {(v["policy"], v["level"], v["urn"]) for v in policy["violations"]}


def test_a_plan_of_thousands_of_resources_gets_the_verdict_of_its_core(tmp_path):
    """Every Analyze call used to go out at once: past about 1,400 calls in flight the pack's server
    answered the rest CANCELLED, and check of a 5,000-resource plan failed closed (exit 2)."""
    core = json.loads(PREVIEW_JSON.read_text())
    code, out, err = run_cli("check", str(PREVIEW_JSON), "--json")
    assert code == 1, err
    expected = _verdict(json.loads(out))
    stack_urn = next(s["urn"] for s in core["steps"] if (s.get("newState") or {}).get("type") == "pulumi:pulumi:Stack")
    prefix = stack_urn.split("::pulumi:pulumi:Stack")[0]
    filler = [
        {
            "op": "create",
            "urn": f"{prefix}::aws:s3/bucket:Bucket::logs-{i}",
            "newState": {"type": "aws:s3/bucket:Bucket", "custom": True, "parent": stack_urn, "inputs": {"bucket": f"logs-{i}"}},
        }
        for i in range(6000)
    ]
    big = tmp_path / "big.json"
    big.write_text(json.dumps({**core, "steps": core["steps"] + filler}))
    code, out, err = run_cli("check", str(big), "--json")
    assert code == 1, err
    assert _verdict(json.loads(out)) == expected


def _types(plan: dict) -> Counter:
    return Counter(r["type"] for r in plan["resources"])


def test_the_largest_ecs_stack_previews_complete_and_clean():
    """20 capacity providers (ECS's quota per cluster, not adjustable) and 2,000 GPU services: every
    service, task definition and provider is in the plan, every task is placed, the pack finds nothing."""
    providers, services = ECS_LARGEST["providers"], ECS_LARGEST["services"]
    plan = preview_plan(ecs_fleet(services, providers), "ecs-largest", DEFAULT_PACK, {})
    types = _types(plan)
    assert types[tokens.ECS_SERVICE] == types[tokens.ECS_TASK_DEFINITION] == services
    assert types[tokens.ECS_CAPACITY_PROVIDER] == types[tokens.ASG] == types[tokens.LAUNCH_TEMPLATE] == providers
    assert plan["summary"]["resourceCount"] == len(plan["resources"])
    tasks = plan["placement"]["tasks"]
    assert len(tasks) == services and {t["status"] for t in tasks} == {"placed"}
    assert plan["policy"]["violations"] == []


def test_the_largest_eks_stack_previews_complete_with_one_quota_advisory():
    """30 EFA node groups and 300 GPU workloads: every group has its launch template with the type's
    EFA interfaces and its placement group, every Deployment schedules, and the one finding is the
    advisory that 31 managed node groups (with the system group) pass the adjustable default of 30."""
    groups, workloads = EKS_LARGEST["node_groups"], EKS_LARGEST["workloads"]
    plan = preview_plan(eks_fleet(groups, workloads), "eks-largest", DEFAULT_PACK, {})
    types = _types(plan)
    assert types[tokens.EKS_NODE_GROUP] == groups + 1  # and the system group
    assert types[tokens.K8S_DEPLOYMENT] == workloads
    assert types["aws:ec2/placementGroup:PlacementGroup"] == types[tokens.LAUNCH_TEMPLATE] - 1 == groups  # the system group's template
    summary = {g["group"]: g for g in plan["summary"]["groups"]}
    # Each group lays out every EFA interface its type takes (EC2's MaximumEfaInterfaces).
    expected = [catalog.load().get(EKS_EFA_TYPES[i % len(EKS_EFA_TYPES)]).max_efa_interfaces for i in range(groups)]
    assert [summary[f"ng{i}"]["efaInterfacesPerInstance"] for i in range(groups)] == expected
    assert len(set(expected)) > 1
    assert len([g for g in summary if g.startswith("ng")]) == groups
    pods = [p for p in plan["placement"]["pods"] if p["pod"].startswith("Deployment default/wl")]
    assert len(pods) == workloads and {p["status"] for p in pods} == {"scheduled"}
    assert [(v["policy"], v["level"]) for v in plan["policy"]["violations"]] == [("aws-service-quotas-adjustable", "advisory")]
