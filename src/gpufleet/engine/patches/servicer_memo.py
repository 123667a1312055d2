"""Do once what pulumi_policy's servicer repeats for every policy of every request.

pulumi_policy's Analyze loops over the pack's policies and, inside that loop, for each policy:
converts the request's properties from protobuf to a dict, deserializes the dict, wraps it in the
unknown-checking proxy, builds the resource options and the provider resource (converting the
provider's properties again). AnalyzeStack repeats the same per stack policy for every resource of
the stack. And every request starts by re-reading the runtime settings: it parses the stack config
(`PULUMI_CONFIG`, the whole stack's config as JSON) and inspects `Settings`' signature again.
With a few dozen policies, that repeated work was most of the pack's time per resource.

`install()` memoizes each step where pulumi_policy calls it:
- `json_format.MessageToDict`: by the message object (held, so its id cannot be reused while kept),
  then by the message's deterministic wire bytes: equal bytes are equal content, so AnalyzeStack's
  copy of a resource gets the dict its Analyze produced. The dicts are only read (deserialize copies).
- `deserialize_properties`, `unknown_checking_proxy`, and the servicer's `_get_resource_options` and
  `_get_provider_resource`: once per input object (held likewise). Their results are shared by the
  policies of this pack, which only read them.
- `_configure_runtime_settings`: once per worker thread for as long as the environment it reads is
  unchanged (the settings it sets are context variables, kept per thread, so each thread applies
  them once).

If pulumi_policy stops calling these this way, `install()` leaves it alone: the pack is then as fast
as pulumi_policy makes it, never wrong.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref

import pulumi_policy.deserialize as _deserialize
import pulumi_policy.policy as _policy
import pulumi_policy.proxy as _proxy
from google.protobuf import json_format

from gpufleet.engine.patches.stack_config import per_stack

_KEPT = 1 << 18  # distinct inputs: every resource of the largest plans (50,000 and more), for AnalyzeStack
# What pulumi_policy's _configure_runtime_settings reads from the environment.
_SETTINGS_ENV = ("PULUMI_CONFIG", "PULUMI_PROJECT", "PULUMI_STACK", "PULUMI_DRY_RUN", "PULUMI_ORGANIZATION")


class _Kept(dict):
    """A bounded map. No lock: the pack server's worker threads only get and set single keys, which
    the interpreter does atomically; past the bound it starts again (a large stack fits)."""

    def __init__(self) -> None:
        super().__init__()
        _MAPS[id(self)] = self

    def put(self, key, entry) -> None:
        if len(self) >= _KEPT:
            self.clear()
        self[key] = entry


# Every memo's map, emptied when the pack is told another stack: each holds the stack's resources.
_MAPS: weakref.WeakValueDictionary[int, _Kept] = weakref.WeakValueDictionary()


def _forget() -> None:
    for kept in list(_MAPS.values()):
        kept.clear()


per_stack(_forget)


class _SameInputSameResult:
    """`fn(value)` once per input object: keyed by its id and holding it, so an id cannot be reused
    while it is kept. A call with more arguments (Remediate passes options) is not kept."""

    def __init__(self, fn) -> None:
        self._fn = fn
        self._kept = _Kept()

    def __call__(self, value, *args, **kwargs):
        if args or kwargs:
            return self._fn(value, *args, **kwargs)
        entry = self._kept.get(id(value))
        if entry is not None and entry[0] is value:
            return entry[1]
        result = self._fn(value)
        self._kept.put(id(value), (value, result))
        return result


class _ConvertOnce:
    def __init__(self) -> None:
        self._by_object = _Kept()
        self._by_content = _Kept()

    def MessageToDict(self, message, *args, **kwargs):  # noqa: N802 - json_format's name
        if args or kwargs:
            return json_format.MessageToDict(message, *args, **kwargs)
        entry = self._by_object.get(id(message))
        if entry is not None and entry[0] is message:
            return entry[1]
        key = message.DESCRIPTOR.full_name.encode() + b"\0" + message.SerializeToString(deterministic=True)
        converted = self._by_content.get(key)
        if converted is None:
            converted = json_format.MessageToDict(message)
            self._by_content.put(key, converted)
        self._by_object.put(id(message), (message, converted))
        return converted

    def __getattr__(self, name: str):
        return getattr(json_format, name)


def _per_request(method):
    """A servicer method of one request, computed once per request object (and servicer)."""
    kept = _Kept()

    def once(self, request):
        entry = kept.get(id(request))
        if entry is not None and entry[0] is request and entry[1] is self:
            return entry[2]
        result = method(self, request)
        kept.put(id(request), (request, self, result))
        return result

    once.__wrapped__ = method
    return once


def _once_per_thread(configure):
    applied = threading.local()

    def once(self):
        environment = tuple(os.environ.get(name) for name in _SETTINGS_ENV)
        if getattr(applied, "environment", None) != environment:
            configure(self)
            applied.environment = environment

    once.__wrapped__ = configure
    return once


@contextlib.contextmanager
def servicer_memo():
    """Within: install()'s memos (yields whether they went in); pulumi_policy's own afterwards."""
    servicer = getattr(_policy, "_PolicyAnalyzerServicer", None)
    saved = {name: getattr(_policy, name, None) for name in ("json_format", "deserialize_properties", "unknown_checking_proxy")}
    methods = (
        {name: servicer.__dict__.get(name) for name in ("_get_resource_options", "_get_provider_resource", "_configure_runtime_settings")}
        if servicer
        else {}
    )
    try:
        yield install()
    finally:
        for name, value in saved.items():
            setattr(_policy, name, value)
        for name, value in methods.items():
            if value is not None:
                setattr(servicer, name, value)


def install() -> bool:
    """Route pulumi_policy's repeated work through the memos; False when its internals differ."""
    servicer = getattr(_policy, "_PolicyAnalyzerServicer", None)
    if getattr(_policy, "json_format", None) is not json_format:
        return False
    if getattr(_policy, "deserialize_properties", None) is not _deserialize.deserialize_properties:
        return False
    if getattr(_policy, "unknown_checking_proxy", None) is not _proxy.unknown_checking_proxy:
        return False
    methods = ("_get_resource_options", "_get_provider_resource", "_configure_runtime_settings")
    if servicer is None or not all(callable(getattr(servicer, name, None)) for name in methods):
        return False
    _policy.json_format = _ConvertOnce()
    _policy.deserialize_properties = _SameInputSameResult(_deserialize.deserialize_properties)  # type: ignore[assignment]
    _policy.unknown_checking_proxy = _SameInputSameResult(_proxy.unknown_checking_proxy)  # type: ignore[assignment]
    servicer._get_resource_options = _per_request(servicer._get_resource_options)
    servicer._get_provider_resource = _per_request(servicer._get_provider_resource)
    servicer._configure_runtime_settings = _once_per_thread(servicer._configure_runtime_settings)
    return True
