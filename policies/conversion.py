"""Convert each resource's properties once, not once per policy.

pulumi_policy's Analyze converts the request's properties (and its provider's) from protobuf to a
dict inside its loop over policies: with a dozen resource policies, each resource is converted a
dozen times, the largest share of the pack's time per resource (AnalyzeStack converts every
resource once per stack policy). `install()` gives pulumi_policy a `json_format` whose MessageToDict
remembers its recent conversions per thread, by message identity: the cache holds the message
itself, so its id cannot be reused while cached and an identity match is the same message; the
dicts it returns are only read (pulumi_policy's deserialize copies them).

If pulumi_policy stops reading `json_format` this way, `install()` leaves it alone: the pack is then
as fast as pulumi_policy makes it, never wrong.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import pulumi_policy.policy as _policy
from google.protobuf import json_format

_KEPT = 8192  # every resource of a large stack, for AnalyzeStack's second and later stack policies


class _ConvertOnce:
    def __init__(self) -> None:
        self._local = threading.local()

    def MessageToDict(self, message, *args, **kwargs):  # noqa: N802 - json_format's name
        if args or kwargs:
            return json_format.MessageToDict(message, *args, **kwargs)
        kept: OrderedDict = self._local.__dict__.setdefault("kept", OrderedDict())
        entry = kept.get(id(message))
        if entry is not None and entry[0] is message:
            kept.move_to_end(id(message))
            return entry[1]
        converted = json_format.MessageToDict(message)
        kept[id(message)] = (message, converted)
        if len(kept) > _KEPT:
            kept.popitem(last=False)
        return converted

    def __getattr__(self, name: str):
        return getattr(json_format, name)


def install() -> bool:
    """Route pulumi_policy's conversions through the cache; False when its internals differ."""
    if getattr(_policy, "json_format", None) is not json_format:
        return False
    _policy.json_format = _ConvertOnce()
    return True
