"""src/gpufleet/k8s/releases.py: the Helm releases the shipped stacks write fit (names Helm takes,
no two objects of one kind alike), and the spec judges the very releases the program writes."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from gpufleet.catalog import catalog, tokens
from gpufleet.eks.checks import planned_releases
from gpufleet.k8s import releases
from gpufleet.stack.spec import load_spec
from tests.conftest import ROOT

GOLDEN = sorted((ROOT / "tests" / "golden").glob("*.plan.json"))
EKS_WITH_PLUGINS = ("eks-p3dn-efa", "eks-karpenter-gpu", "eks-p5-efa", "eks-trn1", "eks-g5-timeslice")


def _releases(plan: dict) -> list[dict]:
    return [r for r in plan["resources"] if r["type"] == tokens.HELM_RELEASE]


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda p: p.name.split(".")[0])
def test_shipped_stacks_releases_fit(golden):
    cat = catalog.load()
    for r in _releases(json.loads(golden.read_text())):
        inputs = r["inputs"]
        planned = releases.PlannedRelease(r["name"], inputs["chart"], inputs.get("namespace", "default"), inputs.get("values") or {})
        if "name" not in inputs:
            assert releases.problems(planned, cat) == [], r["name"]


@pytest.mark.parametrize("stack", EKS_WITH_PLUGINS)
def test_spec_judges_the_releases_the_program_writes(stack):
    config = YAML(typ="safe", pure=True).load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    spec = load_spec({"region": config["gpufleet:region"], "eks": config["gpufleet:eks"]})
    fleet = spec.eks
    planned = planned_releases(fleet, fleet.cluster.name, catalog.load())
    plan = json.loads((ROOT / "tests" / "golden" / f"{stack}.plan.json").read_text())
    assert sorted(p.resource_name for p in planned) == sorted(r["name"] for r in _releases(plan))
    assert {p.chart for p in planned} == {r["inputs"]["chart"] for r in _releases(plan)}


def test_a_fleet_name_too_long_says_how_long_fits():
    cat = catalog.load()

    def nvidia(name: str) -> list[releases.PlannedRelease]:
        chart = cat.facts.charts.nvidia_device_plugin
        return [releases.PlannedRelease(f"{name}-device-plugins-nvidia", chart.chart, chart.namespace, {})]

    [reason] = releases.fleet_name_problems("performance-study-gpu", nvidia, cat)
    assert reason.startswith("the Helm release 'performance-study-gpu-device-plugins-nvidia-<8 random hex>' of chart nvidia-device-plugin")
    assert reason.endswith("a name of at most 9 characters fits")
    assert releases.fleet_name_problems("perfstudy", nvidia, cat) == []
