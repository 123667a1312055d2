"""Reading a resource's inputs as the engine sends them to a policy pack: camelCase keys, JSON-string
properties, unknown values during preview, booleans that pulumi-aws types as strings ("true").

Every policy reads inputs through these helpers so that an unknown value makes a check skip that
value (it cannot be judged before apply) instead of failing the whole policy.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import functools
import json
import operator
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pulumi
from pulumi_policy import ReportViolation
from pulumi_policy import proxy as _proxy
from pulumi_policy.proxy import UnknownValueError

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.engine.patches.analyze_once import per_resource
from gpufleet.engine.patches.stack_config import per_stack
from gpufleet.plans.index import (
    Resource,
    reads,
    truthy,  # noqa: F401 - one reading of a boolean sent as text, the plan room's
)

# Objects read so far: every resource of the largest plans (`check` of 50,000 and more) fits.
_KEPT = 1 << 16
T = TypeVar("T")


def read_once(read: Callable) -> Callable:
    """`read(*objects)` once per objects (the same objects, not equal ones): pulumi_policy's servicer
    hands every policy of one request the same inputs, and every stack policy the same resources
    (src/gpufleet/engine/patches), which the rules only read. Kept by the objects' ids and holding
    them, so an id cannot be reused while kept. No lock: the servicer's threads get and set single
    keys, which the interpreter does atomically; a race reads twice, alike."""
    kept: dict[tuple[int, ...], tuple[tuple, Any]] = {}
    # Released while the interpreter is whole: what is kept may hold objects of C extensions (gRPC,
    # protobuf) that must not outlive them into the final collection.
    atexit.register(kept.clear)
    per_stack(kept.clear)  # a pack `--all` keeps judges stack after stack: none holds the one before

    @functools.wraps(read)
    def once(*objects):
        key = tuple(map(id, objects))
        entry = kept.get(key)
        if entry is not None and all(a is b for a, b in zip(entry[0], objects)):
            return entry[1]
        result = read(*objects)
        if len(kept) >= _KEPT:
            kept.clear()
        kept[key] = (objects, result)
        return result

    return once


def once_per_stack(read: Callable[[Any], T]) -> Callable[[Any], T]:
    """`read(args)` once per stack judged: the stack policies judge one stack in turn, and several read
    the same thing of it. pulumi_policy gives each stack policy a list of its own, but (with
    servicer_memo) the same input objects: a stack is the same when its URNs, dependencies and input
    objects are (held here, so an object seen is the object judged; inputs equal by content share one
    object, hence the dependencies)."""
    last: list = []  # (the stack's resource objects, URNs and dependencies, input objects, what `read` found)
    per_stack(last.clear)  # a pack `--all` keeps judges stack after stack: none holds the one before

    @functools.wraps(read)
    def once(args):
        resources = args.resources
        # The very resource objects (servicer patched: src/gpufleet/engine/patches/stack_once.py builds them
        # once per AnalyzeStack; held, so none is another's): the same stack, without reading every
        # resource's URN and dependencies again for each policy (a 200-service ECS stack's ten such
        # reads had cost its AnalyzeStack more than the placement they guard).
        if last and len(last[0]) == len(resources) and all(map(operator.is_, last[0], resources)):
            return last[3]
        shape = [(r.urn, tuple((p, tuple(d.urn for d in deps)) for p, deps in r.property_dependencies.items())) for r in resources]
        props = [r.props for r in resources]
        if last and last[1] == shape and all(map(operator.is_, last[2], props)):
            last[0] = list(resources)
            return last[3]
        found = read(args)
        last[:] = [list(resources), shape, props, found]
        return found

    once.cache_clear = last.clear  # type: ignore[attr-defined]  # functools' name for forgetting
    return once


def _walk(value: Any, path: tuple[str | int, ...]) -> Any:
    """`value[path...]`, or None where a key is missing; an unknown value on the way raises UnknownValueError."""
    for key in path:
        if isinstance(key, int):
            if not is_list(value) or key >= len(value):
                return None
        elif not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def get(value: Any, *path: str | int) -> Any:
    """`value[path[0]][path[1]]...`, or None where a key is missing or a value is unknown."""
    try:
        return _walk(value, path)
    except UnknownValueError:
        return None


def present(value: Any, *path: str | int) -> bool:
    """Is `value[path...]` set, known or not? (A value known only after apply is present.)"""
    try:
        return _walk(value, path) is not None
    except UnknownValueError:
        return True


def items(value: Any) -> list[Any]:
    """The known elements of a list input (unknown elements are left out)."""
    if not is_list(value):
        return []
    return [element for i in range(len(value)) if (element := get(value, i)) is not None]


_LEAVE_OUT = object()


def _proxy_classes() -> tuple[type, type] | tuple[None, None]:
    """pulumi_policy's dict and list proxies, where each hands over what it wraps under the key
    "__target" and tells an unknown value as `_is_unknown` does (pulumi_policy 1.21's proxy.py);
    (None, None) where it does not, and plain() reads them through their checks instead."""
    try:
        outer = _proxy.unknown_checking_proxy({"a": [tokens.UNKNOWN]})
        inner = outer["__target"]["a"]
        if inner["__target"] == [tokens.UNKNOWN] and _proxy._is_unknown(tokens.UNKNOWN):
            return type(outer), type(inner)
    except (AttributeError, KeyError, TypeError, UnknownValueError):
        pass
    return None, None


# Read directly, plain() walks a pack's largest inputs about three times faster: through the
# proxies' checks, each element costs an abstract-class check and a copied property path. It is
# called for every resource (the API model's request, the placement's typed resources).
_DICT_PROXY, _LIST_PROXY = _proxy_classes()


def plain(value: Any, unknown: Any = _LEAVE_OUT) -> Any:
    """A property as plain dicts and lists, for the rule functions that read Kubernetes objects,
    chart values and API requests in their API shape; unknown values are left out, or replaced by
    `unknown` when given (the engine's marker, for the API model walk)."""
    kind = type(value)
    if kind is _DICT_PROXY:
        found = {}
        for key, element in value["__target"].items():
            if not _proxy._is_unknown(element):
                found[key] = plain(element, unknown)
            elif unknown is not _LEAVE_OUT:
                found[key] = unknown
        return found
    if kind is _LIST_PROXY:
        # As items() reads a list: an unknown element, or a null, left out unless a marker is given.
        return [
            unknown if _proxy._is_unknown(element) else plain(element, unknown)
            for element in value["__target"]
            if unknown is not _LEAVE_OUT or (element is not None and not _proxy._is_unknown(element))
        ]
    if isinstance(value, Mapping):
        found = {}
        for key in list(value.keys()):
            try:
                element = value[key]
            except UnknownValueError:
                if unknown is not _LEAVE_OUT:
                    found[key] = unknown
                continue
            found[key] = plain(element, unknown)
        return found
    if is_list(value):
        if unknown is _LEAVE_OUT:
            return [plain(element) for element in items(value)]
        elements = []
        for i in range(len(value)):
            try:
                elements.append(plain(value[i], unknown))
            except UnknownValueError:
                elements.append(unknown)
        return elements
    return value


def is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def text(value: Any) -> str:
    """A value for a message: the wire carries every number as a double, so 22.0 reads as 22."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def json_document(value: Any) -> Any:
    """A JSON-string property (such as `containerDefinitions`) decoded, or as is when already decoded."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def user_data_text(value: Any) -> str:
    """A launch template's user data (base64) as text; '' when absent or unknown, as given when not base64."""
    if not isinstance(value, str):
        return ""
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return value


def instance_type(cat: Catalog, name: Any) -> InstanceType | None:
    """The catalog's record of a type named in an input; None when the name is unknown or absent."""
    return cat.find(name)


def report_api_model(
    props: Any,
    to_api: Callable[[dict], tuple[dict, list[str]]],
    problems: Callable[[dict], list[str]],
    model: str,
    report: ReportViolation,
) -> list[str]:
    """Report what a cloud API's model refuses in a resource's inputs mapped to its request body, each
    as `{model} {problem}`; return the inputs that have no mapping (what the check does not see is
    each pack's to word: the API's model is named differently)."""
    body, unmapped = to_api(plain(props))
    for problem in problems(body):
        report(f"{model} {problem}", None)
    return unmapped


def depended_on(resource: Any, *types: str) -> list[Any]:
    """The resources of the given types that any input of `resource` depends on (stack policies)."""
    found, seen = [], set()
    for deps in resource.property_dependencies.values():
        for dep in deps:
            if dep.resource_type in types and dep.urn not in seen:
                seen.add(dep.urn)
                found.append(dep)
    return found


def provider_region(args: Any, namespace: str, *env: str) -> str | None:
    """The region a resource is created in: its provider's `region`, else the stack's
    `<namespace>:region`, else the provider's environment variables."""
    if args.provider is not None:
        region = get(args.provider.props, "region")
        if isinstance(region, str):
            return region
    return pulumi.Config(namespace).get("region") or next((os.environ[e] for e in env if os.environ.get(e)), None)


# A stack resource's inputs as its typed resource holds them, once per properties object: each
# resource the plan view reads is made plain as it is analysed, while the program still runs, and
# AnalyzeStack (the same object, src/gpufleet/engine/patches/servicer_memo.py) finds it done.
plain_inputs = read_once(plain)
per_resource(reads, plain_inputs)


@read_once
def typed(resource: Any) -> Resource:
    """A stack policy's resource as the plan view's typed resource (its inputs plain, its
    dependencies by URN, its provider's URN): what the group reader and the placement read. Once
    per resource object: the placement, the DRA install and the budget each read the stack's (a
    200-service ECS stack's AnalyzeStack had typed every resource twice, a fifth of its time)."""
    deps = getattr(resource, "property_dependencies", None) or {}  # a provider resource has none
    provider = getattr(resource, "provider", None)
    return Resource(
        resource.urn,
        resource.resource_type,
        resource.name,
        plain_inputs(resource.props),
        {prop: tuple(d.urn for d in urns) for prop, urns in deps.items()},
        provider=provider.urn if provider is not None else None,
    )


def plan_resources(args: Any) -> list[Resource]:
    """The stack's resources the plan view reads (plans.index.reads), typed: what the placement and
    the DRA install are worked out from (typing the others' would be wasted)."""
    return [typed(r) for r in args.resources if reads(r.resource_type)]
