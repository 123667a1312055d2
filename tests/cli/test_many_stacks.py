"""Many stacks in one run: `preview STACK STACK…`, `--all`, `--shard K/N` (worker processes), one
report per stack, a summary, the worst exit code; shards cover every stack exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gpufleet.stack import files as stackfile
from gpufleet.cli import many
from gpufleet.cli.output import InputError
from tests.conftest import ROOT, run_cli

STACKS = stackfile.stack_names()


@pytest.mark.parametrize("n", [1, 2, 3, 4, len(STACKS) + 1])
def test_shards_cover_every_stack_exactly_once(n):
    shards = [many.select(STACKS, f"{k}/{n}") for k in range(1, n + 1)]
    assert sorted(name for shard in shards for name in shard) == sorted(STACKS)
    assert many.select(STACKS, f"1/{n}") == many.select(list(reversed(STACKS)), f"1/{n}")  # the order given does not matter


@pytest.mark.parametrize("shard", ["0/3", "4/3", "2", "a/b"])
def test_a_bad_shard_is_refused(shard):
    with pytest.raises(InputError):
        many.select(STACKS, shard)


def test_all_with_a_shard_in_worker_processes_as_json():
    code, out, err = run_cli("preview", "--all", "--shard", "2/3", "--no-policy", "--json", "--jobs", "2")
    assert code == 0, err
    document = json.loads(out)
    assert sorted(document["stacks"]) == many.select(STACKS, "2/3")
    assert all(plan["resources"] for plan in document["stacks"].values())
    assert set(document["exitCodes"].values()) == {0}


def test_several_stacks_report_each_and_a_summary():
    code, out, err = run_cli("preview", "gke-a100-mig", "ecs-gpu", "--jobs", "1")
    assert code == 0, err
    assert out.index("==> ecs-gpu (exit 0)") < out.index("==> gke-a100-mig (exit 0)")
    assert "Policy pack gpufleet-guard 0.1.0: no violations" in out
    assert out.rstrip().endswith("==> 2 stacks: ecs-gpu 0, gke-a100-mig 0; worst exit 0")


def test_the_worst_exit_code_wins():
    codes = {"a": 0, "b": 1, "c": 2}
    assert many.run(lambda argv: codes[argv[1]], ["a", "b", "c"], [], 1, as_json=False) == 2


def test_an_unknown_stack_or_a_mixed_door_is_exit_2():
    code, _, err = run_cli("preview", "ecs-gpu", "no-such-stack", "--no-policy")
    assert code == 2 and "no-such-stack" in err
    code, _, err = run_cli("preview", "--all", "ecs-gpu")
    assert code == 2 and "give stack names or --all, not both" in err


def test_a_repositorys_own_stacks_folder(tmp_path):
    """--stacks-dir: --all and --shard over the stacks of another folder (a repository's), each once."""
    for name, shipped in (("team-a", "ecs-gpu"), ("team-b", "ecs-mps"), ("team-c", "eks-g5-timeslice")):
        (tmp_path / f"Pulumi.{name}.yaml").write_text((ROOT / "stacks" / f"Pulumi.{shipped}.yaml").read_text())
    seen = []
    for k in (1, 2):
        code, out, err = run_cli("preview", "--all", "--stacks-dir", str(tmp_path), "--shard", f"{k}/2", "--no-policy", "--json", "--jobs", "1")
        assert code == 0, err
        seen += list(json.loads(out)["stacks"])
    assert sorted(seen) == ["team-a", "team-b", "team-c"]
    code, out, _ = run_cli("preview", "team-b", "--stacks-dir", str(tmp_path), "--no-policy", "--json")
    assert code == 0 and json.loads(out)["stack"] == "team-b"
    code, _, err = run_cli("preview", "ecs-gpu", "--stacks-dir", str(tmp_path))
    assert code == 2 and f"no {tmp_path}/Pulumi.ecs-gpu.yaml (stacks: team-a, team-b, team-c)" in err
    code, _, err = run_cli("preview", "--all", "--stacks-dir", str(tmp_path / "missing"))
    assert code == 2 and "not a folder" in err


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = (Path("/proc") / entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


def _running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_a_stopped_all_ends_its_workers_and_what_they_started():
    """SIGTERM to `preview --all`: gpufleet exits 2, no further stack is previewed (no policy pack
    starts after the signal), and its worker processes and the packs they started end too."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "gpufleet.cli.main", "preview", "--all", "--jobs", "2"]
    preview = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    workers: set[int] = set()
    packs: set[int] = set()
    for _ in range(1200):
        workers |= _children(preview.pid)
        packs |= {p for w in workers for p in _children(w)}
        if len(workers) >= 2 and packs:
            break
        assert preview.poll() is None, preview.communicate()
        time.sleep(0.25)
    else:
        pytest.fail("the workers never started a pack")
    before = set(packs)
    preview.send_signal(signal.SIGTERM)
    watching = True

    def watch() -> None:
        while watching:
            packs.update(p for w in workers for p in _children(w))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        _, err = preview.communicate(timeout=300)
        for _ in range(300):
            if not any(_running(pid) for pid in workers | packs):
                break
            time.sleep(0.1)
    finally:
        watching = False
        watcher.join()
    assert preview.returncode == 2 and "gpufleet was stopped by SIGTERM" in err and "Traceback" not in err, err
    assert packs == before, f"packs started after the signal: {sorted(packs - before)}"
    assert not [pid for pid in workers | packs if _running(pid)], "still running after gpufleet ended"
