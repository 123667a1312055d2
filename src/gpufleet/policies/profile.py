"""The pack's own profile, behind a switch: `GPUFLEET_PACK_PROFILE=FILE` makes the pack's process
write cProfile statistics of its life (its imports and catalog load, every request on every server
thread, in CPU seconds) to FILE when it is stopped; `python -m pstats FILE` reads them.

The pack runs in a process of its own, which the CLI starts and ends with SIGTERM, so a profiler
around the caller sees none of its work; and cProfile records only the thread that enables it,
while pulumi_policy answers requests on a pool of server threads: each thread gets its own."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

SWITCH = "GPUFLEET_PACK_PROFILE"
_PROFILES: list = []  # cProfile.Profile, one a thread


def _follow(*_) -> None:
    """A thread's first event (threading.setprofile): from then on the thread has a profiler of its own."""
    import cProfile  # only when profiling: with pstats, a tenth of a second of every pack's start
    import time

    # Each thread's own CPU time: wall time would charge a thread for the GIL and the locks it waits on.
    profile = cProfile.Profile(time.thread_time)
    _PROFILES.append(profile)
    profile.enable()


def start() -> None:
    """Profile this thread and every thread started from now on, when the switch names a file."""
    if os.environ.get(SWITCH) and not _PROFILES:
        _follow()
        threading.setprofile(_follow)


@contextlib.contextmanager
def written() -> Iterator[None]:
    """Within: the pack serves; on the way out (SIGTERM included), the profile goes to its file."""
    path = os.environ.get(SWITCH)
    if not path or not _PROFILES:
        yield
        return
    # pulumi_policy serves until KeyboardInterrupt; the CLI stops the pack with SIGTERM.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        threading.setprofile(None)  # None removes the hook
        import pstats

        stats = pstats.Stats(_PROFILES[0])
        for profile in _PROFILES[1:]:
            stats.add(profile)
        stats.dump_stats(path)
