"""The processes a test's gpufleet starts, watched from outside: found by a mark in their
environment wherever their parent is (a process whose parent ended is handed to another), and held
still (SIGSTOP) while the test changes what they will find when let go."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

MARK = "GPUFLEET_TEST_MARK"  # set to a test's own value in the environment gpufleet starts with


def new_mark() -> str:
    """A mark no other test run's processes carry."""
    return f"{os.getpid()}-{time.monotonic_ns()}"


def state(pid: int) -> str:
    """The process's state letter (R, S, T, Z, ...) or "gone"."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def running_marked(mark: str) -> set[int]:
    """Running processes whose environment holds MARK=`mark` (a zombie's environment reads empty)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):  # gone meanwhile
                if f"{MARK}={mark}".encode() in (Path("/proc") / entry / "environ").read_bytes().split(b"\0"):
                    found.add(int(entry))
    return found


def held(pids: set[int]) -> None:
    """Stop each process and return once all are stopped: a fork of theirs is then complete or not begun."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    for _ in range(500):
        if all(state(pid) in ("T", "Z", "X", "gone") for pid in pids):
            return
        time.sleep(0.01)
    pytest.fail(f"{sorted(pids)} did not stop")


def ended(mark: str, wait: float = 15.0) -> set[int]:
    """The marked processes still running once `wait` seconds have passed or none is left."""
    deadline = time.monotonic() + wait
    while (left := running_marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
