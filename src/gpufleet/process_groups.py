"""The processes gpufleet starts (the program's language host, the policy pack's process), each the
leader of its own session, so that ending one ends everything it forked (ts-node, a runner, a
helper): a stopped gpufleet leaves nothing running.

Below every room, as the exception tree is: the engine and the pack client start their processes
here, and the CLI stops them all when it is stopped from outside (SIGTERM, SIGINT)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator

from gpufleet.errors import Stopped

_STARTED: set[subprocess.Popen] = set()


def start(command: list[str], **popen) -> subprocess.Popen:
    """Popen in a session of its own, remembered until `stop`."""
    process = subprocess.Popen(command, start_new_session=True, **popen)
    _STARTED.add(process)
    return process


def stop(process: subprocess.Popen, grace: float = 0.0) -> None:
    """End `process`'s whole group: SIGTERM and `grace` seconds to go down first when grace is
    given, then SIGKILL for whatever is left (a child that outlived its leader holds pipes open)."""
    if grace > 0 and process.poll() is None:
        _signal_group(process, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(grace)
    _signal_group(process, signal.SIGKILL)
    process.wait()
    _STARTED.discard(process)


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


@contextlib.contextmanager
def stopped_on_signals() -> Iterator[None]:
    """While the body runs, SIGTERM and SIGINT kill every group started here at once, then raise
    Stopped so the body unwinds through its own cleanup. Outside the main thread (where Python
    cannot install handlers) the body runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _on_signal) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _on_signal(signum: int, _frame) -> None:
    # Only signals here, never wait(): the main thread may hold a Popen's wait lock right now.
    _end_all()
    raise Stopped(signum)


def _end_all() -> None:
    for process in list(_STARTED):
        _signal_group(process, signal.SIGKILL)


def ended_with_parent() -> None:
    """In a worker process (`--all`'s): once the gpufleet that started it is gone (stopped, or
    killed), end every group the worker started, then the worker itself, rather than finish a
    preview nobody reads. A worker cannot be told by its parent's signal handler: the pool that
    runs it has no public way to end its processes before Python 3.14."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        _end_all()
        os._exit(2)

    threading.Thread(target=watch, name="gpufleet-parent-watch", daemon=True).start()
