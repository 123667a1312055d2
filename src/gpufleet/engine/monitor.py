"""The resource monitor and engine a program's own SDK talks to, served over Pulumi's gRPC protocol
(`pulumi.runtime.proto`) as the CLI's engine serves them in a preview: each registration is recorded
with its inputs as the engine receives them and answered as a create in preview answers (the inputs
echoed, the rest unknown); provider functions are answered offline (engine/answers.py).

What the engine does not do offline (a component's Construct, a transform, a method call) is not
guessed: a call it cannot serve is refused, named, and the refusal ends the preview (exit 2)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc, resource_pb2, resource_pb2_grpc

from gpufleet.catalog import catalog, tokens
from gpufleet.engine import autonames
from gpufleet.engine.answers import OfflineAnswers, UnansweredCall
from gpufleet.engine.runtime import ProgramRun, RecordedResource, preview_outputs, record
from gpufleet.plans.wire import struct_value, to_struct

# The features the monitor claims, by the name older SDKs ask for and the number newer ones read.
# Transforms and hooks are claimed so that a program using them reaches the monitor, which refuses
# them by name (they are callbacks into the program, not run offline); unclaimed, the SDK would tell
# the user to update the Pulumi CLI.
FEATURES = {
    "secrets": resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS,
    "resourceReferences": resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_REFERENCES,
    "aliasSpecs": resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS,
    "deletedWith": resource_pb2.RESOURCE_MONITOR_FEATURE_DELETED_WITH,
    "parameterization": resource_pb2.RESOURCE_MONITOR_FEATURE_PARAMETERIZATION,
    "transforms": resource_pb2.RESOURCE_MONITOR_FEATURE_TRANSFORMS,
    "invokeTransforms": resource_pb2.RESOURCE_MONITOR_FEATURE_INVOKE_TRANSFORMS,
    "resourceHooks": resource_pb2.RESOURCE_MONITOR_FEATURE_RESOURCE_HOOKS,
    "errorHooks": resource_pb2.RESOURCE_MONITOR_FEATURE_ERROR_HOOKS,
}
MAX_MESSAGE = 64 << 20  # one registration's inputs; the SDK's own channel allows up to this much too


@dataclass
class Activity:
    """What the program last asked of the monitor, and what it is waiting on: named when a bound is reached."""

    calls: int = 0
    last: str = "none"
    last_at: float = field(default_factory=time.monotonic)
    in_flight: dict[int, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, what: str) -> int:
        with self.lock:
            self.calls += 1
            self.in_flight[self.calls] = what
            self.last, self.last_at = what, time.monotonic()
            return self.calls

    def end(self, call: int) -> None:
        with self.lock:
            self.in_flight.pop(call, None)
            self.last_at = time.monotonic()

    def describe(self) -> str:
        with self.lock:
            if not self.calls:
                return "the program made no call to the monitor"
            waiting = "; in flight: " + ", ".join(self.in_flight.values()) if self.in_flight else ""
            return f"{self.calls} monitor calls, the last {self.last}{waiting}"


class Monitor(resource_pb2_grpc.ResourceMonitorServicer, engine_pb2_grpc.EngineServicer):
    def __init__(
        self,
        project: str,
        stack: str,
        answers: OfflineAnswers,
        region: str,
        on_resource: Callable[[RecordedResource], None] | None,
        given: dict[str, list[tuple[dict, dict]]] | None = None,
        config: dict[str, str] | None = None,
    ):
        self.project, self.stack = project, stack
        self.config = dict(config or {})
        self.default_providers: dict[tuple[str, str], str] = {}  # (package, version) -> provider reference
        self.given = given or {}
        self.unknown_calls: list[str] = []  # provider functions answered unknown, with their inputs
        self.run = ProgramRun(stack=stack)
        self.answers, self.default_region = answers, region
        self.on_resource = on_resource
        self.activity = Activity()
        self.refused: list[str] = []  # calls the engine could not serve: each ends the preview
        self.errors: list[str] = []  # the program's own error diagnostics (Engine.Log)
        self.provider_regions: dict[str, str] = {}
        self.root = ""
        self.autonaming = catalog.load().facts.autonaming
        self._lock = threading.Lock()

    # --- calls that are served ----------------------------------------------------------------

    def GetDeploymentInfo(self, request, context):
        return resource_pb2.DeploymentInfo(supportedFeatures=list(FEATURES.values()))

    def SupportsFeature(self, request, context):
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in FEATURES)

    def RegisterResource(self, request, context):
        call = self.activity.start(f"RegisterResource {request.type} {request.name!r}")
        try:
            if request.transforms or (request.HasField("hooks") and request.hooks.ByteSize()):
                return self._refuse(
                    context,
                    f"{request.type} {request.name!r} has transforms or hooks: the offline engine does not run callbacks into the program",
                )
            urn = self._urn(request.parent, request.type, request.name)
            try:
                inputs = autonames.with_auto_names(
                    request.type, request.name, urn, struct_value(request.object), request.custom, self.autonaming
                )
            except autonames.TooLong as err:
                return self._refuse(context, str(err))
            if request.type.startswith(tokens.AWS_PROVIDER) and "region" in inputs:
                self.provider_regions[urn] = inputs["region"]
            provider = request.provider or self._default_provider(request)
            recorded = record(request, urn, inputs, provider)
            with self._lock:
                self.run.resources.append(recorded)
            if self.on_resource is not None:
                self.on_resource(recorded)
            if request.type == tokens.STACK:
                return resource_pb2.RegisterResourceResponse(urn=urn)
            if request.remote and not request.custom:
                # A component another language builds (its provider's Construct) is not run
                # offline: its outputs stay unknown, as before apply, and what it creates is a gap.
                with self._lock:
                    self.run.gaps.append(
                        f"component {request.name!r} ({request.type}) is built by its provider, which the offline engine does not run: "
                        "the resources it creates are not in the plan"
                    )
                return resource_pb2.RegisterResourceResponse(urn=urn)
            return resource_pb2.RegisterResourceResponse(urn=urn, id="", object=to_struct(preview_outputs(request.type, inputs)))
        finally:
            self.activity.end(call)

    def RegisterResourceOutputs(self, request, context):
        if request.urn.split("::")[2] == tokens.STACK:
            self.run.outputs = struct_value(request.outputs)
        return empty_pb2.Empty()

    def Invoke(self, request, context):
        call = self.activity.start(f"Invoke {request.tok}")
        try:
            args = struct_value(request.args)
            for inputs, outputs in self.given.get(request.tok, []):
                if inputs == args:
                    return resource_pb2.ResourceInvokeResponse(**{"return": to_struct(outputs)})
            try:
                answer, note = self.answers.answer_noted(request.tok, args, self._region_of(request.provider))
            except UnansweredCall as err:
                # As a preview answers a function whose inputs are not known yet: wholly unknown.
                call = f"{request.tok} {json.dumps(args, sort_keys=True)}"
                reason = str(err) if request.tok in self.answers.answered() else "no offline answer"
                with self._lock:
                    if call not in self.unknown_calls:
                        self.unknown_calls.append(call)
                        self.run.gaps.append(
                            f"provider function {call}: {reason}; answered unknown, as a preview answers before the value exists"
                        )
                return resource_pb2.ResourceInvokeResponse(unknown=True)
            if note is not None:
                said = f"provider function {request.tok} {json.dumps(args, sort_keys=True)}: {note}"
                with self._lock:
                    if said not in self.run.gaps:  # a program may call a function with the same inputs many times
                        self.run.gaps.append(said)
            return resource_pb2.ResourceInvokeResponse(**{"return": to_struct(answer)})
        finally:
            self.activity.end(call)

    def ReadResource(self, request, context):
        # `Resource.get`: the state of a resource that exists only in the cloud, unknown offline.
        return resource_pb2.ReadResourceResponse(urn=self._urn(request.parent, request.type, request.name), properties=to_struct({}))

    def RegisterPackage(self, request, context):
        return resource_pb2.RegisterPackageResponse(ref=f"{request.name}@{request.version}")

    def SignalAndWaitForShutdown(self, request, context):
        return empty_pb2.Empty()

    def Log(self, request, context):
        # The program's diagnostics, as the CLI shows them (debug only on request there: not here).
        if request.severity != engine_pb2.DEBUG:
            label = {engine_pb2.INFO: "info", engine_pb2.WARNING: "warning"}.get(request.severity, "error")
            print(f"{label}: {request.urn + ': ' if request.urn else ''}{request.message}", file=sys.stderr, flush=True)
            if request.severity == engine_pb2.ERROR:
                self.errors.append(request.message)
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):
        return engine_pb2.GetRootResourceResponse(urn=self.root)

    def SetRootResource(self, request, context):
        self.root = request.urn
        return engine_pb2.SetRootResourceResponse()

    def RequirePulumiVersion(self, request, context):
        return engine_pb2.RequirePulumiVersionResponse()

    # --- calls that are refused, named ----------------------------------------------------------

    def Call(self, request, context):
        return self._refuse(context, f"the program calls the method {request.tok} of a component: its provider is not run offline")

    def StartDebugging(self, request, context):
        return self._refuse(context, "the program asks to start a debugger")

    # --- helpers --------------------------------------------------------------------------------

    def _refuse(self, context, reason: str):
        with self._lock:
            self.refused.append(reason)
        context.abort(grpc.StatusCode.UNIMPLEMENTED, reason)

    def _default_provider(self, request) -> str:
        """The reference to the default provider of a resource that names none, registered on first
        use as the engine does: one per package and version, configured from the stack's config keys
        of its package (`aws:region`). Pulumi's developer docs, "Default providers":
        https://pulumi-developer-docs.readthedocs.io/latest/docs/architecture/providers/default.html"""
        package = request.type.split(":", 1)[0]
        if not (request.custom or request.remote) or package == "pulumi":
            return ""
        key = (package, request.version)
        with self._lock:
            if key in self.default_providers:
                return self.default_providers[key]
            name = "default" + (f"_{request.version}".replace(".", "_").replace("-", "_") if request.version else "")
            type_ = f"{tokens.PROVIDERS}{package}"
            urn = f"urn:pulumi:{self.stack}::{self.project}::{type_}::{name}"
            inputs: dict = {k.split(":", 1)[1]: v for k, v in sorted(self.config.items()) if k.split(":", 1)[0] == package}
            if request.version:
                inputs["version"] = request.version
            if package == "aws" and isinstance(inputs.get("region"), str):
                self.provider_regions[urn] = inputs["region"]
            provider = RecordedResource(urn, type_, name, "", True, inputs)
            self.run.resources.append(provider)
            self.default_providers[key] = f"{urn}::{tokens.UNKNOWN}"
        if self.on_resource is not None:
            self.on_resource(provider)
        return self.default_providers[key]

    def _urn(self, parent: str, type_: str, name: str) -> str:
        # A child's type is qualified by its parent's, except the stack's (the engine's NewURN).
        if parent and parent.split("::")[2] != tokens.STACK:
            type_ = f"{parent.split('::')[2]}${type_}"
        return f"urn:pulumi:{self.stack}::{self.project}::{type_}::{name}"

    def _region_of(self, provider_ref: str) -> str:
        for urn, region in self.provider_regions.items():
            if provider_ref.startswith(urn):
                return region
        return self.default_region


# Callbacks into the program (the SDK serves them; the engine would call them): not run offline.
_CALLBACKS = {
    "RegisterStackTransform": lambda request: "a stack transform",
    "RegisterStackInvokeTransform": lambda request: "an invoke transform",
    "RegisterResourceHook": lambda request: f"the resource hook {request.name!r}",
    "RegisterErrorHook": lambda request: "an error hook",
}


def _refuses_callback(method: str, what: Callable):
    def refuse(self: Monitor, request, context):
        return self._refuse(context, f"the program registers {what(request)}: the offline engine does not run callbacks into the program")

    refuse.__name__ = method
    return refuse


for _method, _what in _CALLBACKS.items():
    setattr(Monitor, _method, _refuses_callback(_method, _what))


class _Unknown(grpc.GenericRpcHandler):
    """Any method neither service has (a newer SDK's): refused, named, instead of gRPC's bare
    "Method not found"."""

    def __init__(self, monitor: Monitor):
        self.monitor = monitor

    def service(self, handler_call_details):
        method = handler_call_details.method

        def refuse(request: bytes, context):
            return self.monitor._refuse(context, f"the program's SDK called {method}, which the offline engine does not serve")

        return grpc.unary_unary_rpc_method_handler(refuse)


class Served:
    """The monitor and engine on one local port, for as long as the `with` block runs."""

    def __init__(self, monitor: Monitor):
        self.monitor = monitor
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="gpufleet-monitor"),
            options=[("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)],
        )
        resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, self.server)
        engine_pb2_grpc.add_EngineServicer_to_server(monitor, self.server)
        self.server.add_generic_rpc_handlers((_Unknown(monitor),))
        self.address = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"

    def __enter__(self) -> Served:
        self.server.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.stop(grace=None)
