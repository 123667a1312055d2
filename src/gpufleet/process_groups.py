"""The processes gpufleet starts (the program's language host, the policy pack's process), each the
leader of its own session, so that ending one ends everything it forked (ts-node, a runner, a
helper): a stopped gpufleet leaves nothing running.

Below every room, as the exception tree is: the engine and the pack client start their processes
here, and the CLI stops them all when it is stopped from outside (SIGTERM, SIGINT).

Once gpufleet is stopped nothing more starts, in it or in its `--all` workers. A signal reaches
gpufleet alone (`kill PID`, a CI timeout), not the workers, and a worker's pack may be forking at
that moment; so a start is never half done when everything is ended: a worker checks its line to
gpufleet (`workers_line`) under the lock it starts under, and ends under that lock; the signal
handler, which cannot take a lock its own thread may hold, leaves an interrupted start to end what
it started."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpufleet.errors import Stopped

if TYPE_CHECKING:  # imported where a line is made: a single preview never needs multiprocessing
    from multiprocessing.connection import Connection

_STARTED: set[subprocess.Popen] = set()
# Held by a start from before its fork until the process is in _STARTED, and by a worker's ending
# for good: a worker never forks once it has begun to end, and never ends with a fork unlisted.
_LOCK = threading.Lock()
_starting: int | None = None  # the thread inside a start, for the signal handler
_stopped_by: int | None = None  # the signal that stopped this gpufleet (while stopped_on_signals)
_line: Connection | None = None  # in an `--all` worker: readable once its gpufleet stopped or is gone
_line_ends: set[Connection] = set()  # in gpufleet: the ends whose closing ends its workers


def start(command: list[str], **popen) -> subprocess.Popen:
    """Popen in a session of its own, remembered until `stop`; Stopped (or, in a worker, the
    worker's end) instead once gpufleet was stopped, however near the signal fell to the fork."""
    global _starting
    with _LOCK:
        if _line is not None and _line.poll():
            _end_worker()
        if _stopped_by is not None:
            raise Stopped(_stopped_by)
        _starting = threading.get_ident()
        try:
            process = subprocess.Popen(command, start_new_session=True, **popen)
            _STARTED.add(process)
        finally:
            _starting = None
    if _stopped_by is not None:  # the signal came while it forked: the handler left it to us
        _end_all()
        raise Stopped(_stopped_by)
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
    with _LOCK:
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
    global _stopped_by
    _stopped_by = None  # an in-process caller's earlier stop is not this run's
    previous = {signum: signal.signal(signum, _on_signal) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    except Exception as err:
        if _stopped_by is not None:
            # The stop was raised inside code that made it its own failure: pydantic-core, building
            # a validator while the signal fell, raises SchemaError around whatever the Python it
            # called raised. Whatever fails once gpufleet is stopped is the stop.
            raise Stopped(_stopped_by) from err
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _stopped_by = None


def _on_signal(signum: int, _frame) -> None:
    # Only signals and closes here, never wait() nor _LOCK: the main thread may hold either now.
    global _stopped_by
    _stopped_by = signum
    _end_all()
    if _starting != threading.get_ident():
        raise Stopped(signum)
    # Else it interrupted this thread's start, whose process may be forked and not yet listed: the
    # start ends it and raises Stopped once it is (raising here would drop it running).


def _end_all() -> None:
    for end in list(_line_ends):
        end.close()  # the workers' lines first: no worker starts anything from here on
    for process in list(_STARTED):
        _signal_group(process, signal.SIGKILL)


@contextlib.contextmanager
def workers_line() -> Iterator[Connection]:
    """In gpufleet, around its `--all` workers: the line each hands to `ended_with_parent`. It
    closes when the body ends, when a signal stops gpufleet (at once, in the handler), and when
    gpufleet dies whatever the cause (the kernel closes it): the worker reads that as its end."""
    import multiprocessing

    reader, writer = multiprocessing.Pipe(duplex=False)
    _line_ends.add(writer)
    try:
        yield reader
    finally:
        _line_ends.discard(writer)
        writer.close()
        reader.close()


def ended_with_parent(line: Connection) -> None:
    """In a worker process (`--all`'s), given gpufleet's `workers_line`: once it closes (gpufleet
    stopped, killed, or done), end every group the worker started, then the worker itself, rather
    than finish a preview nobody reads. The line, not the parent's pid, tells it: a pid read in the
    worker would be the reaper's when gpufleet ended while the worker was still starting, and
    watched every few tenths of a second it left the worker a window to fork its pack in."""
    global _line
    _line = line

    def watch() -> None:
        line.poll(None)  # nothing is ever sent: readable is closed
        _LOCK.acquire()  # never released: no start after this one
        _end_worker()

    threading.Thread(target=watch, name="gpufleet-parent-watch", daemon=True).start()


def _end_worker() -> None:
    # Called with _LOCK held, so no start is between its fork and _STARTED.
    _end_all()
    os._exit(2)
