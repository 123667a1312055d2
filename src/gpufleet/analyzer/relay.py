"""The Analyze calls of a preview, made from a process of their own: the relay.

A preview analyses each resource as it registers, as the CLI does. Made from gpufleet's process,
each call cost the program about 0.13 ms of gRPC client CPU under the GIL it runs on, and the
answers woke the channel's thread while the program ran. Here, the program's thread writes each
serialized request to this process's stdin (a write per sixteen resources) and reads no answer
until the program has ended; this process makes the same calls, one per resource over gRPC, and
keeps the answers. The pack is asked what it was asked before: Configure and AnalyzeStack by the
client over its channel, an Analyze per resource by the relay over the relay's.

The 200-service bench's warm pack overhead (bench/preview.py, one run each): 34 % with the calls
made in gpufleet's process; 22 % and 29 % through the relay; 17 % with the relay yielding the cores
(NICE below). Paired the same way in one run, thirty rounds: 1.38x plain, then 1.25x.

It runs by path in an isolated interpreter (`python -I relay.py`) and imports only the standard
library and grpc, so it is up long before the pack it speaks to. The frames below are shared with
gpufleet's side (analyzer/relay_link.py), which imports this module for them and nothing else.

Frames in (stdin): IN header (kind, id, length) and `length` bytes.
- CONNECT: the pack's address; `id` is the per-call deadline in milliseconds. Once per relay.
- HOLD: a session begins (a stack's preview: a kept pack judges one after another). Requests are
  held until the pack is configured for it; the session's table of kept answers starts empty.
- REQUEST: a serialized AnalyzeRequest, answered under its `id`.
- GO: the session's pack is configured: send what is held, and every request after at once.
- DROP: the session sends no Analyze through the relay (the pack remediates, or its configuration
  failed): what is held is discarded, as is every request until the next HOLD.

Frames out (stdout), in the order the answers arrive: OUT header (id, status, length), then
- ANSWER: `length` bytes of AnalyzeResponse;
- KEPT: the same, and both sides keep it as the session's next kept answer: an answer without
  diagnostics (a resource the policies pass), which is the same for every resource of its type;
- SAME: no bytes; `length` is the index of a kept answer, repeated;
- FAILED + the gRPC status code: `length` bytes of the status details.
"""

from __future__ import annotations

import os
import struct
import sys

IN = struct.Struct("!BII")  # kind, id, length
OUT = struct.Struct("!IBI")  # id, status, length (SAME: the kept answer's index)
CONNECT, HOLD, REQUEST, GO, DROP = range(5)
ANSWER, KEPT, SAME, FAILED = range(4)  # FAILED + code: gRPC's status codes are 1..16

# Analyze calls in flight at once. Sent all at once (a saved plan), calls past about 1,400 in flight
# came back CANCELLED from the pack's server (pulumi_policy's synchronous server, four worker
# threads: a trailers-only answer and RST_STREAM in the HTTP/2 trace), so `check` of a plan of
# 5,000 resources failed closed. The CLI, too, analyses a resource per step, its steps bounded.
WINDOW = 64
# An AnalyzeResponse whose first field is a diagnostic (field 2, length-delimited): protobuf writes
# fields in number order, so an answer without one never starts with this byte. One with it names
# its resource and is sent whole.
_DIAGNOSTIC = bytes([2 << 3 | 2])


# The relay's priority below the program's: when the program, the pack and the relay all want a core
# of two, the kernel shares them by session (autogroups) or by process, and the program got two
# thirds of one. The relay's calls wait instead, a few milliseconds, while the pack still works
# (lowering the pack too made the tail longer). The 200-service bench's paired medians, one run
# each: 1.245x / 1.208x / 1.222x plain at the default priority, 1.168x / 1.156x / 1.168x at 10 / 19 / 5.
NICE = 10


def _yield_to_the_program() -> None:
    """Lower this process's priority before it starts a thread (each inherits it); either way
    the kernel shares the cores, whichever it uses. A refusal leaves the relay as it is."""
    try:
        os.nice(NICE)
    except OSError:
        pass
    try:  # Linux's autogroups, where a session (the relay has its own) is what is weighed
        with open("/proc/self/autogroup", "w") as group:
            group.write(str(NICE))
    except OSError:
        pass


def serve() -> None:
    _yield_to_the_program()
    import asyncio

    asyncio.run(_serve())


async def _serve() -> None:
    import asyncio

    import grpc

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    # A transport buffers what the pipe cannot take yet: the client reads only once its program ended.
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)
    window = asyncio.Semaphore(WINDOW)
    calls: set[asyncio.Task] = set()
    channel: grpc.aio.Channel | None = None
    analyze: grpc.aio.UnaryUnaryMultiCallable | None = None
    deadline = 0.0
    held: list[tuple[int, bytes]] | None = []  # None: sent at once (after GO), or dropped (after DROP)
    dropping = False
    kept: dict[bytes, int] = {}

    def failed(ident: int, code: grpc.StatusCode, text: str) -> None:
        details = text.encode()
        transport.write(OUT.pack(ident, FAILED + code.value[0], len(details)) + details)

    async def call(ident: int, request: bytes) -> None:
        if analyze is None:  # released before CONNECT: gpufleet's side connects first, always
            return failed(ident, grpc.StatusCode.FAILED_PRECONDITION, "the relay was not told the pack's address")
        async with window:
            try:
                answer = await analyze(request, timeout=deadline)
            except grpc.RpcError as err:
                return failed(ident, err.code(), err.details() or "")
        if answer[:1] == _DIAGNOSTIC:
            transport.write(OUT.pack(ident, ANSWER, len(answer)) + answer)
        elif answer in kept:
            transport.write(OUT.pack(ident, SAME, kept[answer]))
        else:
            kept[answer] = len(kept)
            transport.write(OUT.pack(ident, KEPT, len(answer)) + answer)

    def start(ident: int, request: bytes) -> None:
        task = asyncio.ensure_future(call(ident, request))
        calls.add(task)
        task.add_done_callback(calls.discard)

    while True:
        try:
            kind, ident, length = IN.unpack(await reader.readexactly(IN.size))
            body = await reader.readexactly(length) if length else b""
        except asyncio.IncompleteReadError:  # gpufleet closed its end: the pack is being stopped
            break
        if kind == CONNECT:
            channel = grpc.aio.insecure_channel(body.decode())
            analyze = channel.unary_unary("/pulumirpc.Analyzer/Analyze")
            deadline = ident / 1000
        elif kind == HOLD:
            held, dropping = [], False
            kept.clear()
        elif kind == REQUEST:
            if held is not None:
                held.append((ident, body))
            elif not dropping:
                start(ident, body)
        elif kind == GO:
            for waiting in held or ():
                start(*waiting)
            held = None
        elif kind == DROP:
            held, dropping = None, True
    if channel is not None:
        await channel.close(None)


if __name__ == "__main__":
    serve()
