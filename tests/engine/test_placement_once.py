"""The plan's placement is simulated once per preview: gpufleet's pack simulates it (in its own
process) and the engine reads back what the pack judged, for the plan, the report and the cost; with
no pack, or a pack that writes none, the engine simulates it. Counted across both processes by the
line each simulation appends to GPUFLEET_PLACEMENT_RUNS."""

from __future__ import annotations

import json
import sys

import pytest

from gpufleet.plans import placement as plan_placement
from tests.conftest import ROOT, run_cli


def _preview(monkeypatch, tmp_path, *argv: str) -> tuple[dict, int]:
    runs = tmp_path / f"runs-{len(list(tmp_path.iterdir()))}.log"
    runs.touch()
    monkeypatch.setenv(plan_placement.PLACEMENT_RUNS, str(runs))
    code, out, err = run_cli("preview", *argv, "--json")
    assert code == 0, err
    return json.loads(out), len(runs.read_text().splitlines())


@pytest.mark.parametrize(
    "target",
    [("eks-p5-efa",), ("ecs-gpu",), ("--program", str(ROOT / "examples" / "eks-efa-node-group"), "--python", sys.executable)],
    ids=["eks stack", "ecs stack", "program"],
)
def test_one_simulation_per_preview(monkeypatch, tmp_path, target):
    judged, runs = _preview(monkeypatch, tmp_path, *target)
    assert runs == 1
    assert judged["policy"]["pack"]  # the pack ran, and its placement is the plan's
    alone, runs = _preview(monkeypatch, tmp_path, *target, "--no-policy")
    assert runs == 1
    assert judged["placement"] == alone["placement"]
    assert judged["cost"] == alone["cost"]


def test_a_pack_that_writes_no_placement_leaves_the_engine_to_simulate(monkeypatch, tmp_path):
    plan, runs = _preview(monkeypatch, tmp_path, "eks-p5-efa", "--policy-pack", str(ROOT / "tests" / "packs" / "other"))
    assert runs == 1
    assert plan["placement"]["nodeGroups"]


def test_a_judged_preview_reads_its_resource_entries_into_typed_resources_once(monkeypatch):
    """The pack judges the typed resources the plan is then built from: read once from the entries,
    not again for the plan (every resource registered is also read once on its own, for Analyze)."""
    from gpufleet.engine import plan as engine_plan
    from gpufleet.plans import index

    real, whole = index.from_plan, []

    def counting(plan):
        if len(plan["resources"]) > 1:
            whole.append(len(plan["resources"]))
        return real(plan)

    monkeypatch.setattr(index, "from_plan", counting)
    monkeypatch.setattr(engine_plan, "from_plan", counting)
    code, _, _ = run_cli("preview", "ecs-gpu", "--json")
    assert code == 0 and len(whole) == 1


def test_the_pack_and_its_relay_end_before_the_plan_is_built(monkeypatch, tmp_path):
    """Read what the pack judged by, then let its process and its relay go: the plan is built, the
    preview's largest moment in gpufleet's own process, without the two still held in memory."""
    from bench.fleets import ecs_fleet
    from gpufleet.analyzer import pack_process
    from gpufleet.analyzer.pack_dir import DEFAULT_PACK
    from gpufleet.engine import PROJECT
    from gpufleet.engine import plan as engine_plan
    from gpufleet.engine.preview import preview_plan

    config, ended, runs = ecs_fleet(1), {}, tmp_path / "runs.log"
    runs.touch()
    monkeypatch.setenv(plan_placement.PLACEMENT_RUNS, str(runs))
    started = pack_process.start(DEFAULT_PACK, project=PROJECT, stack="ended-early", config=config)
    real = engine_plan.build_plan

    def building(*args, **kwargs):
        ended.update(pack=started.process.poll() is not None, relay=started.relay.process.poll() is not None)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine_plan, "build_plan", building)
    plan = preview_plan(config, "ended-early", DEFAULT_PACK, {}, started=started)
    assert ended == {"pack": True, "relay": True}
    assert plan["policy"]["pack"] and plan["placement"]["tasks"]
    assert len(runs.read_text().splitlines()) == 1  # the pack's placement, read before it ended
