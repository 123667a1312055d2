"""src/gpufleet/policies/profile.py: GPUFLEET_PACK_PROFILE=FILE profiles the pack's own process, its
start and the requests its server threads answer, written when the client stops it."""

from __future__ import annotations

import pstats

from gpufleet.analyzer.client import PolicyPack
from gpufleet.analyzer.pack_dir import DEFAULT_PACK
from gpufleet.plans.index import from_plan
from gpufleet.policies import profile
from tests.policy_helpers import gpu_container, task_definition


def _functions(path) -> set[str]:
    return {f"{file.rsplit('/', 1)[-1]}:{name}" for file, _, name in pstats.Stats(str(path)).stats}  # type: ignore[attr-defined]


def test_the_switch_profiles_the_pack_start_and_every_request_thread(tmp_path, monkeypatch):
    out = tmp_path / "pack.prof"
    monkeypatch.setenv(profile.SWITCH, str(out))
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack="profiled") as pack:
        result = pack.judge({}, from_plan({"resources": [task_definition("t", [gpu_container("a", 1)])]}))
    assert any(f.policy == "ecs-gpu-task-placement" for f in result.findings)
    seen = _functions(out)
    # The catalog's load (the main thread, before serving) and a rule run on a server thread.
    assert "catalog.py:load" in seen and "ecs.py:_validate_task_placement" in seen


def test_without_the_switch_nothing_is_profiled(monkeypatch):
    monkeypatch.delenv(profile.SWITCH, raising=False)
    profile.start()
    with profile.written():
        pass
    assert profile._PROFILES == []
