"""Memory: how the offline engine lets a program's resources register. Two changes, both inside the
engine's run only (`pulumi up` under the Pulumi CLI runs the SDK as it is):

- **A turn of the event loop every few declarations.** Under the Pulumi CLI the engine is another
  process: a resource registers while the program goes on declaring the next ones. Under the mock
  monitor a registration is Python work on the program's own event loop, which runs only when the
  program yields to it; a program that declares its whole fleet in one go (gpufleet's do) holds
  every resource's pending registration at once (its serialized inputs, futures and tasks, waiting
  for its parent's URN). Given a turn of the loop every `EVERY` declarations, the registrations
  keep pace with the declarations: the largest ECS stack's peak went from 266 to 245 MB (measured
  with bench/scale.py's fleets). The turn is the one a program's synchronous invoke already gives
  the loop (the SDK's `_sync_await`); it is not taken inside another turn.
- **No alias URNs nobody reads.** The SDK turns each of a resource's aliases into a URN Output
  (`collapse_alias_to_urn`: an Output.all, an apply and their tasks), which it reads only to
  compute its children's aliases for a monitor without alias specs (runtime.resource.all_aliases).
  A monitor with alias specs, as the engine's is, receives the aliases as specs
  (prepare_aliases), made from the resource's options, never from those URNs. pulumi_kubernetes
  gives every Deployment three aliases: skipping their URNs took the largest EKS stack's peak from
  173 to 163 MB and its program from 2.1 to 1.9 s.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

import pulumi.resource
from pulumi.runtime import sync_await
from pulumi.runtime.proto import resource_pb2

EVERY = 10  # declarations between turns (5 to 20 measured alike; 50 lost most of the gain)

_SDK_REGISTER = pulumi.resource.register_resource
_SDK_ALIAS_URN = pulumi.resource.collapse_alias_to_urn


class _Pace:
    def __init__(self) -> None:
        self.declared = 0
        self.in_turn = False

    def register_resource(self, *args, **kwargs):
        _SDK_REGISTER(*args, **kwargs)
        self.declared += 1
        if self.declared % EVERY or self.in_turn:
            return
        self.in_turn = True  # a resource declared during the turn (in an apply) waits for the next
        try:
            sync_await._sync_await(asyncio.sleep(0))  # two passes of the loop: a registration takes several steps
        finally:
            self.in_turn = False


def _alias_as_given(alias, name, type_, parent):
    # Stands in for the SDK's URN only where nothing reads the URN (see the module's docstring).
    return alias


@contextlib.contextmanager
def paced_registration(monitor_features: Iterable[int]):
    """Within: registrations paced, and alias URNs skipped if the monitor takes alias specs."""
    pace = _Pace()
    pulumi.resource.register_resource = pace.register_resource
    if resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS in set(monitor_features):
        pulumi.resource.collapse_alias_to_urn = _alias_as_given
    try:
        yield pace
    finally:
        pulumi.resource.register_resource = _SDK_REGISTER
        pulumi.resource.collapse_alias_to_urn = _SDK_ALIAS_URN
