"""Many stacks in one run: `preview STACK STACK…`, `--all`, `--shard K/N` (worker processes), one
report per stack, a summary, the worst exit code; shards cover every stack exactly once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpufleet.analyzer import pack_process
from gpufleet.cli import many
from gpufleet.cli.output import InputError
from gpufleet.stack import files as stackfile
from tests.conftest import ROOT, run_cli
from tests.processes import MARK, ended, held, new_mark

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
        code, out, err = run_cli(
            "preview", "--all", "--stacks-dir", str(tmp_path), "--shard", f"{k}/2", "--no-policy", "--json", "--jobs", "1"
        )
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


def _started_by(workers: set[int], log: str) -> list[str]:
    return [line for line in log.splitlines() if int(line.split(" ", 1)[0]) in workers]


# Loaded by every Python gpufleet starts (its workers, their packs): each asks to start a process
# in the log before it forks, so no start escapes the count, however short-lived.
STARTS_LOG = """\
import os, sys

def _logged(event, args):
    if event == "subprocess.Popen":
        with open(os.environ["GPUFLEET_TEST_STARTS"], "a") as log:
            log.write(f"{os.getpid()} {args[1]!r}\\n")

if "GPUFLEET_TEST_STARTS" in os.environ:
    sys.addaudithook(_logged)
"""


@pytest.mark.slow
def test_a_stopped_all_ends_its_workers_and_what_they_started(tmp_path):
    """SIGTERM to `preview --all`: gpufleet exits 2, no further stack is previewed (no policy pack
    starts after the signal), and its worker processes and the packs they started end too.

    The signal lands while a worker may be starting its first pack; what counts as after it is
    made exact. The workers are held (SIGSTOP) while the signal is sent and gpufleet handles it and
    exits, and let go only then: a start logged before they were held came before the signal, and
    any start they log after must not be (a pack forked in the microseconds between the signal and
    gpufleet's handler is no start after gpufleet was stopped, and no design can tell a worker of
    a signal it has not yet handled). Every start is logged before its fork, and every process
    gpufleet started is found by a mark in its environment, so none escapes the count by being
    short-lived or by outliving its worker."""
    (tmp_path / "sitecustomize.py").write_text(STARTS_LOG)
    starts, mark = tmp_path / "starts.log", new_mark()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "GPUFLEET_TEST_STARTS": str(starts),
        MARK: mark,
    }
    command = [sys.executable, "-m", "gpufleet.cli.main", "preview", "--all", "--jobs", "2"]
    preview = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    workers: set[int] = set()
    try:
        for _ in range(1200):
            workers |= _children(preview.pid)
            if len(workers) >= 2 and any(_children(w) for w in workers):
                break
            assert preview.poll() is None, preview.communicate()
            time.sleep(0.25)
        else:
            pytest.fail("the workers never started a pack")
        workers |= _children(preview.pid)
        held(workers)
        before = _started_by(workers, starts.read_text())
        preview.send_signal(signal.SIGTERM)
        preview.wait(timeout=60)  # it does not wait for its workers (they hold its output open)
    finally:
        if preview.poll() is None:  # the test failed on the way: its gpufleet ends, and with it its workers
            preview.kill()
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    _, err = preview.communicate(timeout=300)
    left = ended(mark)
    assert preview.returncode == 2 and "gpufleet was stopped by SIGTERM" in err and "Traceback" not in err, err
    after = _started_by(workers, starts.read_text())
    assert before, "no start was logged: the count does not see gpufleet's"
    assert after == before, f"started after the signal: {after[len(before) :]}"
    assert not left, f"still running after gpufleet ended: {sorted(left)}"


def test_one_pack_judges_each_stack_as_its_own_preview(tmp_path, monkeypatch):
    """Several stacks in one worker share one pack process, and each is judged as its own `preview
    NAME --json` judges it (plan, findings, exit code): a violating stack after a clean one and a
    clean one after it (aks-gpu-operator's advisory findings made mandatory), other platforms, regions
    and Karpenter's pools between."""
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"placement-unverified": "mandatory"}))
    names = ["ack-shared-gpu", "aks-gpu-operator", "ecs-neuron", "eks-karpenter-gpu"]
    alone = {}
    for name in names:
        code, out, err = run_cli("preview", name, "--json", "--policy-config", str(config))
        alone[name] = (code, json.loads(out))
    assert [alone[name][0] for name in names] == [0, 1, 0, 0]

    started = []
    real = pack_process.PackProcess.__init__

    def counted(self, *args, **kwargs):
        started.append(kwargs.get("stack"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(pack_process.PackProcess, "__init__", counted)
    code, out, err = run_cli("preview", *names, "--json", "--jobs", "1", "--policy-config", str(config))
    assert code == 1, err
    together = json.loads(out)
    assert started == ["ack-shared-gpu"]  # one process, for the first stack, judged them all
    assert together["exitCodes"] == {name: alone[name][0] for name in names}
    for name in names:
        assert together["stacks"][name] == alone[name][1], name
