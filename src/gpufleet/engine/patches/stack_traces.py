"""Time: the SDK records where in the program each resource was declared, for the engine's monitor
only; the offline engine's monitor never reads it."""

from __future__ import annotations

import contextlib

from pulumi.runtime import resource
from pulumi.runtime.proto import source_pb2


@contextlib.contextmanager
def no_stack_traces():
    """The SDK walks and formats the whole Python stack of every resource it registers (its
    `_get_stack_trace`, reading source lines), only to send the trace and the source position to
    the engine's monitor; the offline monitor never reads them, and the plan has no such field. A
    run under the mocks skips that walk: an 890-resource ECS program ran in 2.39 s against 3.25 s
    (measured back to back). Under the Pulumi CLI nothing here runs."""
    walk = getattr(resource, "_get_stack_trace", None)
    if walk is None:  # an SDK without it: nothing to skip
        yield
        return
    resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        resource._get_stack_trace = walk
