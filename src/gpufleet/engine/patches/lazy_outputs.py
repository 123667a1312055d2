"""Memory: the Pulumi SDK gives a custom resource an Output for every output property its type
declares (pulumi_aws's LaunchTemplate has 30), each with four futures, a task and a resolver
closure, about 1.6 KB a property, while a program reads a few of them (`id`, `arn`, `name`). Held
until the program ends, they are most of a large preview's memory (measured: 4,090 resources, 605 MB
peak, 120 KB per resource).

In the offline engine's process a custom resource's output properties are made on first read
instead: until then a property is one entry of a small table, which its resolver fills when the
engine answers. An Output made before the answer is resolved by it as the SDK's own would be; one
made after is born resolved. What a program reads, and when, is unchanged; an output nobody reads
is never made (the SDK would track it only to wait for it at the end).

The offline engine applies it around a preview (gpufleet.engine.patches); `pulumi up` under the
Pulumi CLI runs the SDK as it is."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from typing import Any

import pulumi
from pulumi._types import _PULUMI_NAME
from pulumi.runtime import rpc

_SDK_TRANSFER = rpc.transfer_properties


class _Attributes(dict):
    """A resource's __dict__: its output properties are made when pulumi.get (every output
    property's getter) first asks for them."""

    __slots__ = ("resource", "answers", "waiting")
    resource: Any
    answers: dict[str, tuple | None]
    waiting: dict[str, tuple[asyncio.Future, ...]]

    def get(self, name, default=None):
        if name in self.answers and not dict.__contains__(self, name):
            dict.__setitem__(self, name, self._output(name))
        return dict.get(self, name, default)

    def _output(self, name: str) -> pulumi.Output:
        futures: tuple[asyncio.Future, ...] = tuple(asyncio.Future() for _ in range(4))  # deps, value, known, secret
        answer = self.answers[name]
        if answer is None:
            self.waiting[name] = futures
        else:
            _settle(self.resource, futures, *answer)
        return pulumi.Output(*futures)


def _settle(resource, futures, value: Any, is_known: bool, is_secret: bool, deps, failed: Exception | None) -> None:
    """What the SDK's resolver does to an output's futures (pulumi.runtime.rpc.transfer_properties)."""
    deps_fut, value_fut, known_fut, secret_fut = futures
    deps_union = set(deps) if deps else set()
    deps_union.add(resource)
    deps_fut.set_result(deps_union)
    if failed is not None:
        value_fut.set_exception(failed)
        known_fut.set_exception(failed)
        secret_fut.set_exception(failed)
    else:
        value_fut.set_result(value)
        known_fut.set_result(is_known)
        secret_fut.set_result(is_secret)


def _resolve(attributes: _Attributes, name: str, *answer) -> None:
    futures = attributes.waiting.pop(name, None)
    if futures is not None:
        _settle(attributes.resource, futures, *answer)
    attributes.answers[name] = answer


class _Resolvers(dict):
    """A resource's resolvers, as the SDK uses them (`get` by name, `items`): the eagerly made
    outputs' as the SDK made them, the lazy outputs' made when asked for (no closure a property)."""

    __slots__ = ("attributes",)
    attributes: _Attributes

    def get(self, name, default=None):
        if name in self.attributes.answers:
            return functools.partial(_resolve, self.attributes, name)
        return dict.get(self, name, default)

    def items(self):
        return [*dict.items(self), *((name, functools.partial(_resolve, self.attributes, name)) for name in self.attributes.answers)]


@functools.cache
def _read_by_getter(cls: type, name: str) -> bool:
    """Is the property read only through its generated getter (`pulumi.get(self, name)`, which asks
    the resource's __dict__)? A class without one (pulumi_kubernetes's CustomResource, whose
    `metadata` is a plain attribute) is read straight from __dict__: that output is made at once."""
    found = inspect.getattr_static(cls, name, None)
    return isinstance(found, property) and hasattr(found.fget, _PULUMI_NAME)


def transfer_properties(res, props, custom: bool):
    """rpc.transfer_properties, with a custom resource's outputs made on first read."""
    cls: type = type(res)
    lazy = {name for name in props if name not in ("urn", "id") and _read_by_getter(cls, name)} if custom else set()
    if not lazy:
        return _SDK_TRANSFER(res, props, custom)
    resolvers = _Resolvers(_SDK_TRANSFER(res, {name: props[name] for name in props if name not in lazy}, custom))
    attributes = _Attributes(res.__dict__)
    attributes.resource, attributes.answers, attributes.waiting = res, dict.fromkeys(lazy), {}
    for name in lazy:
        dict.pop(attributes, name, None)  # the SDK's Output would replace it
    resolvers.attributes = attributes
    res.__dict__ = attributes
    return resolvers


@contextlib.contextmanager
def lazy_outputs():
    rpc.transfer_properties = transfer_properties
    try:
        yield
    finally:
        rpc.transfer_properties = _SDK_TRANSFER
