"""gpufleet's end of the Analyze relay (relay.py, which says why and what it gained): the relay's
process, started beside the pack's and ended with it, and the frames of a session. Requests are
written by the program's threads as resources register; answers are read once the program ended.
"""

from __future__ import annotations

import collections
import fcntl
import os
import select
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, cast

from gpufleet import process_groups
from gpufleet.analyzer import relay
from gpufleet.errors import NotJudged

SCRIPT = Path(relay.__file__)
# Linux's F_SETPIPE_SZ: the relay reads as fast as requests come, but a pipe of the default 64 KiB
# fills with a few dozen requests while its interpreter starts; 1 MiB is the unprivileged maximum.
_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)


def _ready(fd: int, event: int, wait: float) -> bool:
    """Whether `fd` is ready (or closed) within `wait` seconds (poll: select refuses fds past 1023)."""
    poller = select.poll()
    poller.register(fd, event)
    return bool(poller.poll(wait * 1000))


class RelayError(NotJudged):
    """The relay ended, or stopped reading or answering: the session's resources are not judged
    (the client reports it as the pack's PolicyPackError)."""


class RelayLink:
    """The relay's process and its two pipes. Writes come from the program's threads (under the
    client's lock); answers are read by the thread that finishes the session."""

    def __init__(self) -> None:
        self.process = process_groups.start(
            [sys.executable, "-I", str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        self._in = cast(IO[bytes], self.process.stdin).fileno()
        self._out = cast(IO[bytes], self.process.stdout).fileno()
        try:
            fcntl.fcntl(self._in, _SETPIPE_SZ, 1 << 20)
        except OSError:  # a lower limit (/proc/sys/fs/pipe-max-size): writes wait for the relay instead
            pass
        os.set_blocking(self._in, False)
        self._writing = threading.Lock()  # a frame is written whole: the program's threads and the session's both write
        self._buffer = b""
        self._kept: list[bytes] = []
        self.connected = False
        self._stderr: collections.deque[str] = collections.deque(maxlen=12)
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        for line in cast(IO[bytes], self.process.stderr):
            self._stderr.append(line.decode(errors="replace").rstrip())

    def state(self) -> str:
        code = self.process.poll()
        said = "; it said: " + " | ".join(self._stderr) if self._stderr else ""
        return ("its process is running" if code is None else f"its process exited with code {code}") + said

    # -- frames in -------------------------------------------------------------------------------
    def connect(self, target: str, deadline: float, wait: float) -> None:
        """The pack's address and the per-call deadline, once per relay."""
        if not self.connected:
            self._write(relay.IN.pack(relay.CONNECT, round(deadline * 1000), len(target)) + target.encode(), wait)
            self.connected = True

    def hold(self, wait: float) -> None:
        """A session begins: its requests wait in the relay until `go`."""
        self._kept.clear()
        self._write(relay.IN.pack(relay.HOLD, 0, 0), wait)

    def go(self, wait: float) -> None:
        self._write(relay.IN.pack(relay.GO, 0, 0), wait)

    def drop(self, wait: float) -> None:
        self._write(relay.IN.pack(relay.DROP, 0, 0), wait)

    def send(self, requests: list[bytes], ids: list[int], wait: float) -> None:
        """Requests to Analyze, in one write, each answered under its id (a session numbers its
        resources from 0)."""
        self._write(b"".join(relay.IN.pack(relay.REQUEST, i, len(r)) + r for i, r in zip(ids, requests)), wait)

    def _write(self, data: bytes, wait: float) -> None:
        with self._writing:
            self._write_all(memoryview(data), wait)

    def _write_all(self, view: memoryview, wait: float) -> None:
        while view:
            try:
                view = view[os.write(self._in, view) :]
            except BlockingIOError:
                if not _ready(self._in, select.POLLOUT, wait):
                    raise RelayError(f"the Analyze relay took no request for {wait:.0f} s; {self.state()}") from None
            except OSError as err:  # BrokenPipeError: it ended
                raise RelayError(f"the Analyze relay could not be written to ({err.strerror}); {self.state()}") from None

    # -- frames out ------------------------------------------------------------------------------
    def answers(self, count: int, stall: float) -> list[tuple[int, bytes]]:
        """(0, AnalyzeResponse bytes) or (gRPC status code, details) for ids 0 to count - 1, by id;
        RelayError when the relay ends, or nothing arrives for `stall` seconds (it enforces each
        call's deadline)."""
        got: list[tuple[int, bytes] | None] = [None] * count
        outstanding = count
        while True:
            for ident, status, body in self._frames():
                if ident < count and got[ident] is None:
                    got[ident] = (status - relay.FAILED, body) if status >= relay.FAILED else (0, body)
                    outstanding -= 1
            if not outstanding:
                return cast(list[tuple[int, bytes]], got)
            if not _ready(self._out, select.POLLIN, stall):
                raise RelayError(f"the Analyze relay answered nothing for {stall:.0f} s; {self.state()}")
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise RelayError(f"the Analyze relay ended with {outstanding} answers outstanding; {self.state()}")
            self._buffer += chunk

    def _frames(self) -> list[tuple[int, int, bytes]]:
        """The whole frames read so far (a partial one stays in the buffer)."""
        frames, at, buffer = [], 0, self._buffer
        while len(buffer) - at >= relay.OUT.size:
            ident, status, length = relay.OUT.unpack_from(buffer, at)
            if status == relay.SAME:
                frames.append((ident, status, self._kept[length]))
                at += relay.OUT.size
                continue
            end = at + relay.OUT.size + length
            if end > len(buffer):
                break
            body = buffer[at + relay.OUT.size : end]
            if status == relay.KEPT:
                self._kept.append(body)
            frames.append((ident, status, body))
            at = end
        self._buffer = buffer[at:]
        return frames

    def stop(self) -> None:
        process_groups.stop(self.process)
        for pipe in (self.process.stdin, self.process.stdout):  # an `--all` worker starts many
            if pipe is not None:
                pipe.close()
