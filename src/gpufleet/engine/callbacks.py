"""Calls into the program: the transforms and resource hooks a program registers are functions its own
SDK serves (the Callbacks service of pulumi/pulumi proto/pulumi/callback.proto), which the engine
calls by token at the target the program named, as the Pulumi engine does
(pkg/resource/deploy/source_eval.go: wrapTransformCallback, wrapInvokeTransformCallback,
wrapResourceHookCallback).

The properties sent to a transform are marshalled as that engine marshals them: unknowns and
secrets as output values (UnmarshalProperties with UpgradeToOutputValues), and, for a resource
with transforms of its own, each property carrying the resources it depends on
(upgradeOutputValues), so that a transform keeps what it does not change."""

from __future__ import annotations

from typing import TypeVar

import grpc
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError, Message
from pulumi.runtime.proto import alias_pb2, callback_pb2, callback_pb2_grpc, resource_pb2

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.errors import GpufleetError
from gpufleet.plans.wire import OUTPUT_SIG, RESOURCE_SIG, SECRET_SIG, SIG_KEY

M = TypeVar("M", bound=Message)
MAX_MESSAGE = 64 << 20  # as the monitor's own channel: a transform sees and returns a whole registration


class CallbackFailed(GpufleetError):
    """A call into the program failed; the message names the callback and what it said."""


class Callbacks:
    """Calls into the program's callback servers, every call bounded by `timeout`: a program whose
    callback never returns is a named failure, not a hang.

    Each call has a channel of its own, closed when it returns. The engine keeps one per server
    (GetCallbacksClient); kept open here, a channel sees the program's server stop when the program
    ends, and gRPC prints that GOAWAY on gpufleet's stderr. A local connection costs about a
    millisecond."""

    def __init__(self, timeout: float):
        self.timeout = timeout

    def invoke(self, callback: callback_pb2.Callback, request: Message, answer: type[M], what: str) -> M:
        if not callback.target:
            # The engine's RegisterStackTransform: "target must be specified".
            raise CallbackFailed(f"{what}: the program names no callback server (Callback.target is empty)")
        options = [("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)]
        try:
            with grpc.insecure_channel(callback.target, options=options) as channel:
                response = callback_pb2_grpc.CallbacksStub(channel).Invoke(
                    callback_pb2.CallbackInvokeRequest(token=callback.token, request=request.SerializeToString()),
                    timeout=self.timeout,
                )
        except grpc.RpcError as err:
            code, details = _status(err)
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise CallbackFailed(f"{what} did not return within {self.timeout:g} s (--timeout)") from None
            if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                raise CallbackFailed(
                    f"{what} could not be called: the program's callback server at {callback.target} is gone ({details})"
                ) from None
            # The Python SDK prefixes the program's error with the callback's token, which names nothing.
            details = details.removeprefix(f"Invoke callback {callback.token} error: ").strip()
            raise CallbackFailed(f"{what} failed: {details}") from None
        try:
            return answer.FromString(response.response)
        except DecodeError:
            raise CallbackFailed(f"{what} answered with what is not a {answer.DESCRIPTOR.name}") from None


def _status(err: grpc.RpcError) -> tuple[grpc.StatusCode | None, str]:
    code = err.code() if isinstance(err, grpc.Call) else None
    details = err.details() if isinstance(err, grpc.Call) else str(err)
    return code, details or str(code)


# (RegisterResourceRequest field, options field): what a transform or hook sees of a registration
# and, swapped, what a transform's returned options put back (source_eval.go).
_LISTS = (
    ("ignoreChanges", "ignore_changes"),
    ("replaceOnChanges", "replace_on_changes"),
    ("hideDiffs", "hide_diff"),
    ("replace_with", "replace_with"),
    ("additionalSecretOutputs", "additional_secret_outputs"),
)
_SCALARS = (("deletedWith", "deleted_with"), ("importId", "import"))  # `import` is a Python keyword
_PLUGIN = (("version", "version"), ("pluginDownloadURL", "plugin_download_url"))
_PRESENT = (("protect", "protect"), ("retainOnDelete", "retain_on_delete"), ("customTimeouts", "custom_timeouts"), ("hooks", "hooks"))


def _swapped(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((b, a) for a, b in pairs)


def _copy(source: Message, target: Message, lists, scalars, present) -> None:
    """Copy fields by name: lists whole, scalars as they are, and optional fields only where the
    source sets them (an unset `protect` is not a false one)."""
    for field, into in lists:
        del getattr(target, into)[:]
        getattr(target, into).extend(getattr(source, field))
    for field, into in scalars:
        setattr(target, into, getattr(source, field))
    for field, into in present:
        target.ClearField(into)
        if source.HasField(field):
            value = getattr(source, field)
            if isinstance(value, Message):
                getattr(target, into).CopyFrom(value)
            else:
                setattr(target, into, value)


def _aliases(request: resource_pb2.RegisterResourceRequest) -> list[alias_pb2.Alias]:
    return [alias_pb2.Alias(urn=urn) for urn in request.aliasURNs]


def transform_options(request: resource_pb2.RegisterResourceRequest, provider: str) -> resource_pb2.TransformResourceOptions:
    """The options a transform sees, as RegisterResource builds `opts` (source_eval.go)."""
    options = resource_pb2.TransformResourceOptions(
        depends_on=request.dependencies,
        aliases=[*_aliases(request), *request.aliases],
        provider=provider,
        providers=request.providers,
        plugin_checksums=request.pluginChecksums,
    )
    _copy(request, options, _LISTS, _SCALARS + _PLUGIN, _PRESENT + (("replacement_trigger", "replacement_trigger"),))
    # The Go SDK does not set the Defined flag: a true value counts as defined too.
    if request.deleteBeforeReplaceDefined or request.deleteBeforeReplace:
        options.delete_before_replace = request.deleteBeforeReplace
    return options


def as_output_values(properties: dict, dependencies: dict[str, set[str]] | None) -> dict:
    """The registration's properties as the engine sends them to a transform: unknowns and secrets
    upgraded to output values and, with `dependencies` (a resource's own transforms), each property
    that depends on resources an output value naming them (source_eval.go upgradeOutputValues)."""
    upgraded = {key: _upgraded(value) for key, value in properties.items()}
    for key, deps in (dependencies or {}).items():
        if key not in upgraded or not deps:
            continue
        value = upgraded[key]
        if deps <= output_dependencies(value):
            continue
        if _is(value, OUTPUT_SIG):
            upgraded[key] = {**value, "dependencies": sorted(set(value.get("dependencies") or []) | deps)}
        else:
            upgraded[key] = {SIG_KEY: OUTPUT_SIG, "value": value, "dependencies": sorted(deps)}
    return upgraded


def _upgraded(value):
    if value == UNKNOWN:
        return {SIG_KEY: OUTPUT_SIG}
    if isinstance(value, list):
        return [_upgraded(v) for v in value]
    if isinstance(value, dict):
        if _is(value, SECRET_SIG):
            return {SIG_KEY: OUTPUT_SIG, "secret": True, "value": _upgraded(value.get("value"))}
        if _is(value, OUTPUT_SIG, RESOURCE_SIG):
            return value
        return {k: _upgraded(v) for k, v in value.items()}
    return value


def output_dependencies(value) -> set[str]:
    """The resources an output value (anywhere in `value`) names (source_eval.go addOutputDependencies)."""
    found: set[str] = set()
    if isinstance(value, list):
        for v in value:
            found |= output_dependencies(v)
    elif isinstance(value, dict):
        if _is(value, OUTPUT_SIG):
            found |= {d for d in value.get("dependencies") or [] if isinstance(d, str)}
        for v in value.values():
            found |= output_dependencies(v)
    return found


def _is(value: dict, *signatures: str) -> bool:
    return value.get(SIG_KEY) in signatures


def struct_dict(struct: struct_pb2.Struct) -> dict:
    return MessageToDict(struct)


def hook_options(request: resource_pb2.RegisterResourceRequest, provider: str) -> resource_pb2.ResourceOptions:
    """The options a resource hook sees (pkg/resource/deploy/resource_options.go resourceOptionsFromState)."""
    options = resource_pb2.ResourceOptions(
        depends_on=request.dependencies,
        provider=provider,
        parent=request.parent,
        aliases=_aliases(request),
        protect=request.protect,
        retain_on_delete=request.retainOnDelete,
    )
    _copy(request, options, _LISTS, _SCALARS, _PRESENT[2:])
    return options


def with_options(
    request: resource_pb2.RegisterResourceRequest, properties: dict, options: resource_pb2.TransformResourceOptions, redepend: bool
) -> resource_pb2.RegisterResourceRequest:
    """The registration as its transforms left it: their properties and options in the request's
    place. With `redepend` (the resource ran transforms of its own), its dependencies are the
    options' depends_on and every resource an output value names, per property (source_eval.go)."""
    result = resource_pb2.RegisterResourceRequest()
    result.CopyFrom(request)
    result.object.Clear()
    result.object.update(properties)
    result.provider = options.provider
    _copy(options, result, _swapped(_LISTS), _swapped(_SCALARS + _PLUGIN), _swapped(_PRESENT))
    result.providers.clear()
    result.providers.update(options.providers)
    result.deleteBeforeReplace = options.delete_before_replace
    result.deleteBeforeReplaceDefined = options.HasField("delete_before_replace")
    if redepend:
        by_property = {key: output_dependencies(value) for key, value in properties.items()}
        del result.dependencies[:]
        result.dependencies.extend(sorted(set(options.depends_on).union(*by_property.values())))
        result.propertyDependencies.clear()
        for key, deps in by_property.items():
            result.propertyDependencies[key].urns.extend(sorted(deps))
    return result
