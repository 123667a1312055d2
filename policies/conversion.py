"""Convert each distinct properties message once, not once per policy and resource.

(Also the two steps after the conversion: deserializing the dict and wrapping it in the
unknown-checking proxy, which AnalyzeStack repeats per stack policy for every resource.)

pulumi_policy converts a request's properties (and its provider's) from protobuf to a dict inside
its loop over policies: with a dozen resource policies each resource is converted a dozen times,
every resource's provider as often, and AnalyzeStack converts every resource again per stack
policy. That conversion is the largest share of the pack's time. `install()` gives pulumi_policy a
`json_format` whose MessageToDict remembers its conversions by the message's deterministic wire
bytes: equal bytes are equal content, so the remembered dict is the right answer whichever message
object carries it, and the dicts it returns are only read (pulumi_policy's deserialize copies them).

If pulumi_policy stops reading `json_format` this way, `install()` leaves it alone: the pack is then
as fast as pulumi_policy makes it, never wrong.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import pulumi_policy.deserialize as _deserialize
import pulumi_policy.policy as _policy
import pulumi_policy.proxy as _proxy
from google.protobuf import json_format

_KEPT = 16384  # distinct property sets: every resource of a large stack, for AnalyzeStack


class _ConvertOnce:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # Analyze runs on the pack server's worker threads
        self._kept: OrderedDict[bytes, dict] = OrderedDict()

    def MessageToDict(self, message, *args, **kwargs):  # noqa: N802 - json_format's name
        if args or kwargs:
            return json_format.MessageToDict(message, *args, **kwargs)
        key = message.DESCRIPTOR.full_name.encode() + b"\0" + message.SerializeToString(deterministic=True)
        with self._lock:
            converted = self._kept.get(key)
            if converted is not None:
                self._kept.move_to_end(key)
                return converted
        converted = json_format.MessageToDict(message)
        with self._lock:
            self._kept[key] = converted
            if len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
        return converted

    def __getattr__(self, name: str):
        return getattr(json_format, name)


class _SameInputSameResult:
    """`fn(value)` once per input object: keyed by identity and holding the input, so an id cannot be
    reused while it is kept. Its inputs are the converted dicts above, shared by content; its results
    are only read by the policies (a call with more arguments, as Remediate makes, is not kept)."""

    def __init__(self, fn) -> None:
        self._fn = fn
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, tuple] = OrderedDict()

    def __call__(self, value, *args, **kwargs):
        if args or kwargs:
            return self._fn(value, *args, **kwargs)
        with self._lock:
            entry = self._kept.get(id(value))
            if entry is not None and entry[0] is value:
                return entry[1]
        result = self._fn(value)
        with self._lock:
            self._kept[id(value)] = (value, result)
            if len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
        return result


def install() -> bool:
    """Route pulumi_policy's conversions through the caches; False when its internals differ."""
    if getattr(_policy, "json_format", None) is not json_format:
        return False
    if getattr(_policy, "deserialize_properties", None) is not _deserialize.deserialize_properties:
        return False
    if getattr(_policy, "unknown_checking_proxy", None) is not _proxy.unknown_checking_proxy:
        return False
    _policy.json_format = _ConvertOnce()
    _policy.deserialize_properties = _SameInputSameResult(_deserialize.deserialize_properties)
    _policy.unknown_checking_proxy = _SameInputSameResult(_proxy.unknown_checking_proxy)
    return True
