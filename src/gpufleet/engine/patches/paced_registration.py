"""Memory: how the offline engine lets a program's resources register. Two changes, both inside the
engine's run only (`pulumi up` under the Pulumi CLI runs the SDK as it is):

- **A turn of the event loop every few declarations.** Under the Pulumi CLI the engine is another
  process: a resource registers while the program goes on declaring the next ones. Under the mock
  monitor a registration is Python work on the program's own event loop, which runs only when the
  program yields to it; a program that declares its whole fleet in one go (gpufleet's do) holds
  every resource's pending registration at once (its serialized inputs, futures and tasks, waiting
  for its parent's URN). Given a turn of the loop every `EVERY` declarations, the registrations
  keep pace with the declarations. Measured (bench/scale.py's fleets, with the pack): the largest
  ECS stack's peak 260 to 236 MB, its program, plan and pack 5.3 to 4.1 s (the pack keeps up with
  the program); the ECS plan's 4,068 resources replayed flat 276 to 111 MB, in the same time.
- **No alias URNs nobody reads.** The SDK turns each of a resource's aliases into a URN Output
  (`collapse_alias_to_urn`: an Output.all, an apply and their tasks), which it reads only to
  compute its children's aliases for a monitor without alias specs (runtime.resource.all_aliases).
  A monitor with alias specs, as the engine's is, receives the aliases as specs
  (prepare_aliases), made from the resource's options, never from those URNs. pulumi_kubernetes
  gives every Deployment three aliases: skipping their URNs took the largest EKS stack's peak from
  173 to 163 MB and its program from 2.1 to 1.9 s.
- **URNs of plain strings made as strings.** Every registration computes the URN a monitor-less
  test would get (`create_urn` with the parent's URN already resolved) through an Output.from_input,
  an Output.all and two applies, about six tasks a resource. When every part is a plain string
  the same URN is made by the same concatenation and handed back as a known Output: the largest
  ECS stack's program went from 3.4 to 3.0 s, the flat replay from 2.1 to 1.8 s.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from typing import TypeVar

import pulumi.resource
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import settings
from pulumi.runtime.proto import resource_pb2

T = TypeVar("T")
EVERY = 50  # declarations between turns (measured: 25 to 100 alike; 10 cost time and memory)
# Passes of the loop a turn runs at most: a registration takes about a dozen steps; a callback that
# schedules itself again (a program's own polling) must not hold the body forever.
PASSES = 100

_SDK_REGISTER = pulumi.resource.register_resource
_SDK_ALIAS_URN = pulumi.resource.collapse_alias_to_urn
_SDK_CREATE_URN = sdk_resource.create_urn


class _Pace:
    """Turns of the event loop taken while the program's body runs (one step of its task)."""

    def __init__(self) -> None:
        self.declared = 0
        self.in_body = False
        self.in_turn = False
        # How many handles the loop's pass that runs the body still takes from the ready queue
        # once the body returns: at most the queue's length at the first turn.
        self.owed: int | None = None
        self.task: asyncio.Task | None = None  # the task whose step runs the body

    def body(self, run: Callable[[], T]) -> T:
        """Run the program's body with turns. Outside its step none are taken: an apply that
        declares a resource runs in another step (of another pass, when the body's synchronous
        invoke runs the loop), whose pass owes another count of handles."""
        self.in_body, self.owed, self.task = True, None, asyncio.current_task()
        try:
            return run()
        finally:
            self.in_body = False

    def register_resource(self, *args, **kwargs):
        _SDK_REGISTER(*args, **kwargs)
        self.declared += 1
        if self.declared % EVERY or self.in_turn or not self.in_body or asyncio.current_task() is not self.task:
            return
        self.in_turn = True  # a resource declared during the turn (in an apply) waits for the next
        try:
            self._turn(asyncio.get_event_loop())
        finally:
            self.in_turn = False

    def _turn(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run what is ready, and what that makes ready, until nothing is, as the SDK's
        `_sync_await` runs the loop from inside a step. Both then pad the ready queue with cancelled
        handles, so that the pass running the step finds as many as it still takes; `_sync_await`
        pads to the queue's length when it began, which counts every handle the body scheduled so
        far, so its padding, and the cost of a turn, grew with the program (the ECS plan's 4,068
        resources replayed flat: 2.7 s unpaced, 3.8 s with its padding, 2.4 s with this one)."""
        ready = loop._ready  # type: ignore[attr-defined]
        if self.owed is None:
            self.owed = len(ready)
        task = asyncio.current_task(loop)
        if task is not None:
            asyncio.tasks._leave_task(loop, task)
        try:
            for _ in range(PASSES):
                loop.call_soon(_nothing)  # never an empty queue: a pass polls, it does not block
                loop._run_once()  # type: ignore[attr-defined]
                if all(handle.cancelled() for handle in list(ready)):  # list(): the monitor's threads append
                    break
            while len(ready) < self.owed:
                filler = asyncio.Handle(_nothing, (), loop)
                filler.cancel()
                ready.append(filler)
        finally:
            if task is not None:
                asyncio.tasks._enter_task(loop, task)


def _nothing() -> None:
    pass


def _urn(name, type_, parent=None, project=None, stack=None) -> pulumi.Output[str]:
    """runtime.resource.create_urn: the same URN, without its Outputs when every part is a string."""
    plain = isinstance(name, str) and isinstance(type_, str)
    if not plain or not all(part is None or isinstance(part, str) for part in (parent, project, stack)):
        return _SDK_CREATE_URN(name, type_, parent, project, stack)
    if parent is not None:
        prefix = parent[: parent.rfind("::")] + "$"
    else:
        stack = settings.get_stack() if stack is None else stack
        project = settings.get_project() if project is None else project
        prefix = "urn:pulumi:" + stack + "::" + project + "::"
    return pulumi.Output.from_input(prefix + type_ + "::" + name)


def _alias_as_given(alias, name, type_, parent):
    # Stands in for the SDK's URN only where nothing reads the URN (see the module's docstring).
    return alias


@contextlib.contextmanager
def paced_registration(monitor_features: Iterable[int]):
    """Within: registrations paced, URNs of strings made as strings, and alias URNs skipped if the
    monitor takes alias specs."""
    pace = _Pace()
    pulumi.resource.register_resource = pace.register_resource
    sdk_resource.create_urn = _urn
    if resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS in set(monitor_features):
        pulumi.resource.collapse_alias_to_urn = _alias_as_given
    try:
        yield pace
    finally:
        pulumi.resource.register_resource = _SDK_REGISTER
        sdk_resource.create_urn = _SDK_CREATE_URN
        pulumi.resource.collapse_alias_to_urn = _SDK_ALIAS_URN
