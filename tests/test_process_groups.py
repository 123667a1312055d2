"""The processes gpufleet starts end with it, and none starts once it is stopped: not in gpufleet
when the signal falls while it forks, not in an `--all` worker whose gpufleet stopped or is gone
(the worker is not signalled itself; tests/cli/test_many_stacks.py holds the whole CLI to it)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpufleet import process_groups
from gpufleet.errors import Stopped
from tests.processes import MARK, ended, held, new_mark, running_marked

SLEEPER = ["sleep", "60"]


def _worker(line, log: str, mark: str) -> None:
    """An `--all` worker reduced to its starts: every start asked for is logged before its fork."""

    def logged(event, args):
        if event == "subprocess.Popen":
            with open(log, "a") as out:
                out.write(f"{args[1]!r}\n")

    sys.addaudithook(logged)
    os.environ[MARK] = mark
    process_groups.ended_with_parent(line)
    while True:
        process_groups.start(SLEEPER)


@pytest.fixture
def mark() -> str:
    return new_mark()


@pytest.fixture
def spawned(tmp_path, mark):
    """Start `_worker` on a line, logging to starts.log with the test's mark; whatever the test's
    outcome, nothing it started is left behind."""
    workers = []

    def spawn(line) -> multiprocessing.process.BaseProcess:
        worker = multiprocessing.get_context("spawn").Process(target=_worker, args=(line, str(tmp_path / "starts.log"), mark))
        worker.start()
        workers.append(worker)
        return worker

    yield spawn
    for worker in workers:
        worker.kill()
        worker.join()
    for pid in running_marked(mark):
        os.kill(pid, signal.SIGKILL)


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_a_worker_whose_gpufleet_ended_before_it_started_starts_nothing(spawned, tmp_path):
    """gpufleet may end while a worker is still starting: the worker then starts no process and
    ends (a parent pid read in the worker at that point was already the reaper's, and it ran on)."""
    with process_groups.workers_line() as line:
        worker = spawned(line)
    worker.join(60)
    assert worker.exitcode == 2
    assert _lines(tmp_path / "starts.log") == []


def test_a_worker_starts_nothing_once_its_gpufleet_stops_and_leaves_nothing_running(spawned, mark, tmp_path):
    """The worker is held (SIGSTOP) while gpufleet's line closes, mid-way through its starts, then
    let go: it logs no further start, and every process it started ends, the one it may have been
    forking when held too."""
    log = tmp_path / "starts.log"
    with process_groups.workers_line() as line:
        worker = spawned(line)
        for _ in range(600):
            if len(_lines(log)) >= 3:
                break
            time.sleep(0.05)
        held({worker.pid})
        before = _lines(log)
    os.kill(worker.pid, signal.SIGCONT)
    worker.join(60)
    assert worker.exitcode == 2
    # Held past its start's look at the line but before the start was logged, it logs that one start
    # once let go (a fresh-clone run under load did); a start after it would be a second line.
    after = _lines(log)
    assert len(before) >= 3 and after[: len(before)] == before and len(after) - len(before) <= 1, after[len(before) :]
    left = ended(mark)
    assert not left, f"still running after the worker ended: {sorted(left)}"


def test_a_signal_while_a_process_starts_ends_it_too(monkeypatch):
    """SIGTERM between the fork and the process's listing: the start ends it, then raises Stopped
    (the handler raising there would leave it running, known to nobody)."""
    forked: list[subprocess.Popen] = []
    real = subprocess.Popen

    def signalled(*args, **kwargs):
        forked.append(real(*args, **kwargs))
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # Python runs the handler at a loop's turn: here, inside the start
            pass
        return forked[-1]

    monkeypatch.setattr(process_groups.subprocess, "Popen", signalled)
    # The signal ends every group this process started: the test's own only, never a session's
    # (the policy pack the policy tests share in this pytest worker).
    monkeypatch.setattr(process_groups, "_STARTED", set())
    try:
        with pytest.raises(Stopped), process_groups.stopped_on_signals():
            process_groups.start(SLEEPER)
        assert forked[0].wait(10) == -signal.SIGKILL
    finally:
        for process in forked:
            process.kill()
            process.wait()
    monkeypatch.undo()
    with process_groups.stopped_on_signals():  # the stop was that run's: the next starts
        process_groups.stop(process_groups.start(SLEEPER))


def test_a_stop_that_a_library_turned_into_its_own_failure_is_the_stop(monkeypatch):
    """A signal falls inside code that wraps what it calls (pydantic-core's validator building raises
    SchemaError around it): what escapes is Stopped, never an internal error (exit 4)."""
    # The signal ends every group this process started: none here, never a session's (the policy
    # pack the policy tests share in this pytest worker).
    monkeypatch.setattr(process_groups, "_STARTED", set())
    monkeypatch.setattr(process_groups, "_line_ends", set())

    def wrapping() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs here, in the main thread
        except BaseException as err:
            raise ValueError(f"building a validator failed: {err!r}") from err

    with pytest.raises(Stopped) as stopped, process_groups.stopped_on_signals():
        wrapping()
    assert stopped.value.signum == signal.SIGTERM and isinstance(stopped.value.__cause__, ValueError)
    with pytest.raises(ValueError), process_groups.stopped_on_signals():  # not stopped: a failure is a failure
        raise ValueError("a bug")
