"""Time: the Pulumi SDK sends every debug message to the engine over a blocking RPC, on the thread
that runs the program's event loop (pulumi.log._log: "the worst thing we can do with a log message is
exit before we have the chance to send the message"): about five a registration, each a round trip
gpufleet's monitor answers by dropping it, as the CLI shows no debug message without --debug
(engine/monitor.py Log). Measured on ecs-gpu hosted: 180 messages, 0.2 s of the program's own
interpreter waiting on them. Within the offline engine's run, a debug message is not sent; every
other severity is, as before."""

from __future__ import annotations

import contextlib

from pulumi import log


def _unsent(msg, resource=None, stream_id=None, ephemeral=None) -> None:
    """pulumi.log.debug's signature: the message is dropped here, where the monitor would drop it."""


@contextlib.contextmanager
def no_debug_logs():
    sdk = log.debug
    log.debug = _unsent
    try:
        yield
    finally:
        log.debug = sdk
