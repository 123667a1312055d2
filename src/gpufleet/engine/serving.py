"""The port a program's SDK talks to, open before the monitor behind it exists.

A hosted program spends its first second starting its interpreter and importing its SDK; the monitor
(Pulumi's protocol modules, the catalog, the emulated answers) takes gpufleet about as long to make.
So the port is opened first, with nothing imported but gRPC, the program started against it, and the
monitor made while the program starts: a call that arrives before it waits for it (bounded), as a
call to a busy engine does. Nothing here reads a request, so nothing here knows Pulumi's protocol."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent import futures

import grpc

MAX_MESSAGE = 64 << 20  # one registration's inputs; the SDK's own channel allows up to this much too


class _Deferred(grpc.GenericRpcHandler):
    """Every call's handler, looked up among the handlers given once they are given."""

    def __init__(self, bound: float):
        self.bound = bound
        self.ready = threading.Event()
        self.handlers: Sequence[grpc.GenericRpcHandler] = ()

    def service(self, handler_call_details):
        # gRPC looks handlers up on its serving thread: no call is served before the monitor is made.
        self.ready.wait(self.bound)
        for handler in self.handlers:
            found = handler.service(handler_call_details)
            if found is not None:
                return found
        return None


class Served:
    """A local port served for as long as the `with` block runs; `serve` gives it its handlers (a
    monitor's, engine/monitor.py). A call that comes before waits up to `bound` seconds for them,
    then finds no method (UNIMPLEMENTED)."""

    def __init__(self, handlers: Sequence[grpc.GenericRpcHandler] | None = None, bound: float = 300.0):
        self._deferred = _Deferred(bound)
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="gpufleet-monitor"),
            options=[("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)],
        )
        self.server.add_generic_rpc_handlers((self._deferred,))
        self.address = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        if handlers is not None:
            self.serve(handlers)

    def serve(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._deferred.handlers = tuple(handlers)
        self._deferred.ready.set()

    def __enter__(self) -> Served:
        self.server.start()
        return self

    def __exit__(self, *exc) -> None:
        self._deferred.ready.set()  # a call still waiting finds no method, and the server stops
        self.server.stop(grace=None)
