"""The resource monitor and engine a program's own SDK talks to, served over Pulumi's gRPC protocol
(`pulumi.runtime.proto`) as the CLI's engine serves them in a preview: each registration is recorded
with its inputs as the engine receives them and answered as a create in preview answers (the inputs
echoed, the rest unknown); provider functions are answered offline (engine/answers.py).

Transforms and resource hooks are run as the Pulumi engine runs them: calls into the program's own
callback server (engine/callbacks.py), a transform's result recorded in the resource's place; the
engine's own functions (`pulumi:pulumi:getResource`, stack outputs) are answered by engine/builtins.py.
What the engine does not do offline (a component's Construct, a method call) is not guessed: a
remote component's outputs are unknown but for the resources its code always makes
(engine/constructs.py); a call it cannot serve is refused, named, and the refusal ends the preview
(exit 2); so does a callback into the program that fails."""

from __future__ import annotations

import functools
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc
from google.protobuf import empty_pb2
from google.protobuf.message import Message
from pulumi.runtime.proto import callback_pb2, engine_pb2, engine_pb2_grpc, resource_pb2, resource_pb2_grpc

from gpufleet.catalog import tokens
from gpufleet.engine import autonames, callbacks, constructs
from gpufleet.engine.answers import OfflineAnswers, UnansweredCall, provider_location
from gpufleet.engine.builtins import BuiltinError, Builtins, State, Unanswered
from gpufleet.engine.callbacks import CallbackFailed, Callbacks, M
from gpufleet.engine.output_types import OutputTypes
from gpufleet.engine.recorded import ProgramRun, RecordedResource, moto_snapshot, preview_outputs, record
from gpufleet.plans.wire import struct_value, to_struct

if TYPE_CHECKING:
    from gpufleet.catalog.facts import Autonaming, ComponentResourceOutputs, CuratedFacts

# The features the monitor claims, by the name older SDKs ask for and the number newer ones read.
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
BUILTINS = "pulumi:pulumi:"  # the engine's own functions (builtins.go), whatever provider is named


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
        answers: OfflineAnswers | None,
        region: str,
        on_resource: Callable[[RecordedResource], None] | None,
        given: dict[str, list[tuple[dict, dict]]] | None = None,
        config: dict[str, str] | None = None,
        callback_timeout: float = 300.0,
        output_types: OutputTypes | None = None,
    ):
        self.project, self.stack = project, stack
        self.config = dict(config or {})
        self.default_providers: dict[tuple[str, str], str] = {}  # (package, version) -> provider reference
        self.given = given or {}
        self.unknown_calls: list[str] = []  # provider functions answered unknown, with their inputs
        self.run = ProgramRun(stack=stack)
        self._answers, self.default_region = answers, region
        self.on_resource = on_resource
        self.activity = Activity()
        self.refused: list[str] = []  # calls the engine could not serve, and callbacks that failed: each ends the preview
        self.errors: list[str] = []  # the program's own error diagnostics (Engine.Log)
        self.provider_regions: dict[str, str] = {}
        self.root = ""
        self.callbacks = Callbacks(callback_timeout)
        self.builtins = Builtins()
        self.output_types = output_types
        # What source_eval.go's resmon keeps for transforms and hooks: the stack's transforms, each
        # resource's own (its children's transforms run them after their own) and its parent.
        self.stack_transforms: list[callback_pb2.Callback] = []
        self.stack_invoke_transforms: list[callback_pb2.Callback] = []
        self.resource_transforms: dict[str, list[callback_pb2.Callback]] = {}
        self.parents: dict[str, str] = {}
        self.hooks: dict[str, resource_pb2.RegisterResourceHookRequest] = {}
        self.error_hooks: set[str] = set()
        self.component_hooks: dict[str, tuple[resource_pb2.RegisterResourceRequest, dict, str]] = {}
        self._lock = threading.Lock()

    # The catalog and the emulated account are made on first use, or by `warm` while the program
    # starts (engine/serving.py): the program's first calls need neither.
    @functools.cached_property
    def answers(self) -> OfflineAnswers:
        return self._answers if self._answers is not None else OfflineAnswers(moto_snapshot())

    @functools.cached_property
    def _facts(self) -> CuratedFacts:
        from gpufleet.catalog import catalog

        return catalog.load().facts

    @property
    def autonaming(self) -> Autonaming:
        return self._facts.autonaming

    @property
    def component_resource_outputs(self) -> dict[str, ComponentResourceOutputs]:
        return self._facts.libraries.pulumi_eks.resource_outputs

    def warm(self) -> None:
        """Make now what the program's registrations and provider functions will need."""
        for made in (self.answers, self._facts):
            assert made is not None

    # --- calls that are served ----------------------------------------------------------------

    def GetDeploymentInfo(self, request, context):
        return resource_pb2.DeploymentInfo(supportedFeatures=list(FEATURES.values()))

    def SupportsFeature(self, request, context):
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in FEATURES)

    def RegisterResource(self, request, context):
        call = self.activity.start(f"RegisterResource {request.type} {request.name!r}")
        try:
            urn = self._urn(request.parent, request.type, request.name)
            try:
                request = self._transformed(request, urn)
            except CallbackFailed as err:
                return self._fail(context, str(err))
            try:
                inputs = autonames.with_auto_names(
                    request.type, request.name, urn, struct_value(request.object), request.custom, self.autonaming
                )
            except autonames.TooLong as err:
                return self._refuse(context, str(err))
            if request.type.startswith(tokens.PROVIDERS):
                self._note_location(urn, request.type.removeprefix(tokens.PROVIDERS), inputs)
            provider = self._resolved_provider(request) or self._default_provider(request)
            recorded = record(request, urn, inputs, provider)
            with self._lock:
                self.run.resources.append(recorded)
            if self.on_resource is not None:
                self.on_resource(recorded)
            if request.type == tokens.STACK:
                self.builtins.registered(urn, State("", "", {}))
                return resource_pb2.RegisterResourceResponse(urn=urn)
            if request.remote and not request.custom:
                # A component another language builds (its provider's Construct) is not run
                # offline: what it creates is a gap, and its outputs stay unknown, as before apply,
                # but for the resources its code always makes (engine/constructs.py). A program that
                # refuses resource references gets their ids, unknown: what no answer says.
                with self._lock:
                    self.run.gaps.append(
                        f"component {request.name!r} ({request.type}) is built by its provider, which the offline engine does not run: "
                        "the resources it creates are not in the plan"
                    )
                self.builtins.registered(urn, State("", provider, None), remote_component=True)
                references = (
                    constructs.resource_outputs(
                        self.component_resource_outputs, request.type, request.name, lambda type_, name: self._urn(urn, type_, name)
                    )
                    if request.acceptResources
                    else {}
                )
                return resource_pb2.RegisterResourceResponse(urn=urn, object=to_struct(references))
            try:
                # A create step runs its before hooks first (step.go CreateStep.Apply).
                self._run_hooks("before_create", request, urn, inputs, None, provider)
            except CallbackFailed as err:
                return self._fail(context, str(err))
            outputs = self._outputs(request, inputs)
            self.builtins.registered(urn, State("", provider, outputs if request.custom else {}))
            if request.custom:
                self._after_create(request, urn, inputs, outputs, provider)
            elif request.HasField("hooks") and request.hooks.after_create:
                with self._lock:  # a component's after hooks run once it registers its outputs (step_executor.go)
                    self.component_hooks[urn] = (request, inputs, provider)
            return resource_pb2.RegisterResourceResponse(urn=urn, id="", object=to_struct(outputs))
        finally:
            self.activity.end(call)

    def RegisterResourceOutputs(self, request, context):
        outputs = struct_value(request.outputs)
        if request.urn.split("::")[2] == tokens.STACK:
            self.run.outputs = outputs
        self.builtins.outputs_registered(request.urn, outputs)
        with self._lock:
            pending = self.component_hooks.pop(request.urn, None)
        if pending is not None:
            component, inputs, provider = pending
            self._after_create(component, request.urn, inputs, outputs, provider)
        return empty_pb2.Empty()

    def Invoke(self, request, context):
        call = self.activity.start(f"Invoke {request.tok}")
        try:
            try:
                args, provider = self._invoke_transformed(request)
            except CallbackFailed as err:
                return self._fail(context, str(err))
            for inputs, outputs in self.given.get(request.tok, []):
                if inputs == args:
                    return resource_pb2.ResourceInvokeResponse(**{"return": to_struct(outputs)})
            try:
                if request.tok.startswith(BUILTINS):
                    answer, note = self.builtins.invoke(request.tok, args)
                else:
                    answer, note = self.answers.answer_noted(request.tok, args, self._region_of(provider, request.tok))
            except BuiltinError as err:
                # The engine fails the invoke, and with it the program (source_eval.go Invoke).
                return self._fail(context, f"invocation of {request.tok} returned an error: {err}")
            except (UnansweredCall, Unanswered) as err:
                # As a preview answers a function whose inputs are not known yet: wholly unknown.
                described = f"{request.tok} {json.dumps(args, sort_keys=True)}"
                answered = isinstance(err, Unanswered) or request.tok in self.answers.answered()
                reason = str(err) if answered else "no offline answer"
                with self._lock:
                    if described not in self.unknown_calls:
                        self.unknown_calls.append(described)
                        self.run.gaps.append(
                            f"provider function {described}: {reason}; answered unknown, as a preview answers before the value exists"
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
        # `Resource.get`: the state of a resource that exists only in the cloud, unknown offline
        # (a stack reference's outputs too: they are in another stack's backend).
        urn = self._urn(request.parent, request.type, request.name)
        properties, gap = self.builtins.read(request.type, request.name, struct_value(request.properties))
        if gap is not None:
            with self._lock:
                self.run.gaps.append(gap)
        self.builtins.registered(urn, State(request.id, request.provider, properties))
        return resource_pb2.ReadResourceResponse(urn=urn, properties=to_struct(properties))

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

    # --- callbacks into the program: transforms and hooks (source_eval.go) -----------------------

    def RegisterStackTransform(self, request, context):
        # Every resource registered after this one runs it, after its own and its parents'.
        return self._accepted(context, _untargeted(request, "a stack transform"), lambda: self.stack_transforms.append(request))

    def RegisterStackInvokeTransform(self, request, context):
        return self._accepted(context, _untargeted(request, "an invoke transform"), lambda: self.stack_invoke_transforms.append(request))

    def RegisterResourceHook(self, request, context):
        # A hook runs on the step of its kind: offline every step is a create in a preview, so only
        # before_create and after_create hooks registered to run on dry runs (on_dry_run) are ever
        # called (deployment.go RunHooks skips the others in a preview, as the CLI does).
        return self._accepted(context, self._hook_name_taken(request.name), lambda: self.hooks.update({request.name: request}))

    def RegisterErrorHook(self, request, context):
        # Error hooks run when a provider operation fails (step.go withRetries); a preview offline
        # calls no provider, so none fails and they are never called.
        return self._accepted(context, self._hook_name_taken(request.name), lambda: self.error_hooks.add(request.name))

    def _accepted(self, context, problem: str | None, keep: Callable[[], object]):
        """A registration of the program's callbacks: refused with the problem, else kept."""
        if problem:
            return self._fail(context, problem)
        with self._lock:
            keep()
        return empty_pb2.Empty()

    # --- calls that are refused, named ----------------------------------------------------------

    def Call(self, request, context):
        return self._refuse(context, f"the program calls the method {request.tok} of a component: its provider is not run offline")

    def StartDebugging(self, request, context):
        return self._refuse(context, "the program asks to start a debugger")

    # --- helpers --------------------------------------------------------------------------------

    def _refuse(self, context, reason: str, code: grpc.StatusCode = grpc.StatusCode.UNIMPLEMENTED):
        with self._lock:
            self.refused.append(reason)
        context.abort(code, reason)

    def _fail(self, context, reason: str):
        """What the Pulumi engine fails too (a callback that raised, an unknown URN): the program gets
        the error, and the preview ends naming it."""
        return self._refuse(context, reason, grpc.StatusCode.UNKNOWN)

    def _call_back(self, callback: callback_pb2.Callback, request: Message, answer: type[M], what: str) -> M:
        # Named while it runs: a program stopped at --timeout names the callback it was in.
        call = self.activity.start(f"{what} (a callback into the program)")
        try:
            return self.callbacks.invoke(callback, request, answer, what)
        finally:
            self.activity.end(call)

    def _transformed(self, request: resource_pb2.RegisterResourceRequest, urn: str) -> resource_pb2.RegisterResourceRequest:
        """The registration after its transforms, run as RegisterResource runs them (source_eval.go):
        the resource's own, then each parent's up the tree, then the stack's, each given the
        previous one's properties and options. A resource's own transforms also decide its
        dependencies anew, from the options and output values they return."""
        own = list(request.transforms)
        with self._lock:
            chain = list(own)
            parent, seen = request.parent, set()
            while parent and parent not in seen:
                seen.add(parent)
                chain += self.resource_transforms.get(parent, [])
                parent = self.parents.get(parent, "")
            chain += self.stack_transforms
            self.parents[urn] = request.parent
            self.resource_transforms[urn] = own
        if not chain:
            return request
        properties = callbacks.as_output_values(
            callbacks.struct_dict(request.object), self._property_dependencies(request) if own else None
        )
        options = callbacks.transform_options(request, self._resolved_provider(request))
        for callback in chain:
            answer = self._call_back(
                callback,
                resource_pb2.TransformRequest(
                    type=request.type,
                    name=request.name,
                    custom=request.custom,
                    parent=request.parent,
                    properties=to_struct(properties),
                    options=options,
                ),
                resource_pb2.TransformResponse,
                f"a transform of {request.type} {request.name!r}",
            )
            if answer.HasField("properties"):
                properties = callbacks.struct_dict(answer.properties)
            if answer.HasField("options"):
                options = answer.options
        return callbacks.with_options(request, properties, options, redepend=bool(own))

    @staticmethod
    def _property_dependencies(request: resource_pb2.RegisterResourceRequest) -> dict[str, set[str]]:
        # A request without property dependencies: each property depends on all of the resource's.
        if not request.propertyDependencies and not request.remote:
            return {key: set(request.dependencies) for key in request.object.fields}
        return {key: set(deps.urns) for key, deps in request.propertyDependencies.items()}

    @staticmethod
    def _resolved_provider(request: resource_pb2.RegisterResourceRequest) -> str:
        # source_eval.go resolveProvider: the resource's own, else its providers' for its package.
        if request.provider or not (request.custom or request.remote):
            return request.provider
        return request.providers.get(request.type.split(":", 1)[0], "")

    def _invoke_transformed(self, request: resource_pb2.ResourceInvokeRequest) -> tuple[dict, str]:
        """The invoke's arguments and provider after the stack's invoke transforms (source_eval.go Invoke)."""
        with self._lock:
            chain = list(self.stack_invoke_transforms)
        if not chain:
            return struct_value(request.args), request.provider
        args = request.args
        options = resource_pb2.TransformInvokeOptions(
            provider=request.provider,
            version=request.version,
            plugin_download_url=request.pluginDownloadURL,
            plugin_checksums=request.pluginChecksums,
        )
        for callback in chain:
            answer = self._call_back(
                callback,
                resource_pb2.TransformInvokeRequest(token=request.tok, args=args, options=options),
                resource_pb2.TransformInvokeResponse,
                f"an invoke transform of {request.tok}",
            )
            if answer.HasField("args"):
                args = answer.args
            if answer.HasField("options"):
                options = answer.options
        return struct_value(args), options.provider

    def _outputs(self, request: resource_pb2.RegisterResourceRequest, inputs: dict) -> dict:
        """A create's outputs in a preview: the engine's own resources as its builtins provider
        creates them; a provider's, the inputs echoed where the provider's SDK types them alike."""
        builtin = Builtins.created(request.type, inputs) if request.type.startswith("pulumi:") else None
        if builtin is not None:
            return builtin
        outputs = preview_outputs(request.type, inputs)
        if self.output_types is not None and request.custom:
            outputs, mismatched = self.output_types.typed(request.type, outputs)
            if mismatched:
                with self._lock:
                    self.run.gaps.append(
                        f"{request.type} {request.name!r}: the provider's outputs {', '.join(mismatched)} are typed otherwise than the "
                        "inputs of the same name; answered unknown, as a preview answers before the provider computes them"
                    )
        return outputs

    def _run_hooks(
        self, kind: str, request: resource_pb2.RegisterResourceRequest, urn: str, inputs: dict, outputs: dict | None, provider: str
    ) -> None:
        """deployment.go RunHooks in a preview: each named hook must be registered; only those
        registered with on_dry_run run; a failing one fails the step unless it ignores errors."""
        if not request.HasField("hooks"):
            return
        for name in getattr(request.hooks, kind):
            with self._lock:
                hook = self.hooks.get(name)
            if hook is None:
                raise CallbackFailed(f"{request.type} {request.name!r}: hook {name!r} was not registered")
            if not hook.on_dry_run:
                continue
            hook_request = resource_pb2.ResourceHookRequest(
                urn=urn,
                id="",
                name=request.name,
                type=request.type,
                new_inputs=to_struct(inputs),
                new_options=callbacks.hook_options(request, provider),
            )
            if outputs is not None:
                hook_request.new_outputs.CopyFrom(to_struct(outputs))
            what = f"the {kind} hook {name!r} of {request.type} {request.name!r}"
            answer = self._call_back(hook.callback, hook_request, resource_pb2.ResourceHookResponse, what)
            if answer.error:
                if hook.ignore_errors:
                    print(f"warning: {urn}: {what} failed: {answer.error}", file=sys.stderr, flush=True)
                    continue
                raise CallbackFailed(f"{what} failed: {answer.error}")

    def _after_create(self, request: resource_pb2.RegisterResourceRequest, urn: str, inputs: dict, outputs: dict, provider: str) -> None:
        # The resource is created; only its after hook failed: the engine says so and fails the
        # deployment at its end, but the registration stands (step.go CreateStep.Apply).
        try:
            self._run_hooks("after_create", request, urn, inputs, outputs, provider)
        except CallbackFailed as err:
            print(f"error: {urn}: {err}", file=sys.stderr, flush=True)
            with self._lock:
                self.refused.append(str(err))

    def _hook_name_taken(self, name: str) -> str:
        # resource_hooks.go RegisterResourceHook / RegisterErrorHook: one hook per name, of either kind.
        if not name:
            return "the program registers a resource hook without a name: resource hook name cannot be empty"
        with self._lock:
            if name in self.hooks or name in self.error_hooks:
                return f"the program registers two resource hooks named {name!r}: resource hook already registered for name {name!r}"
        return ""

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
            inputs: dict = self._configured(package)
            if request.version:
                inputs["version"] = request.version
            self._note_location(urn, package, inputs)
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

    def _note_location(self, urn: str, package: str, inputs: dict) -> None:
        where = provider_location(package, inputs)
        if where is not None:
            self.provider_regions[urn] = where

    def _region_of(self, provider_ref: str, token: str = "") -> str:
        """Where the invoke's provider looks: its own configuration's place; for a call that names
        no provider, the default provider's, from the stack's config of the function's package."""
        for urn, region in self.provider_regions.items():
            if provider_ref.startswith(urn):
                return region
        package = token.split(":", 1)[0]
        where = provider_location(package, self._configured(package)) if package != "aws" else None
        return self.default_region if where is None else where

    def _configured(self, package: str) -> dict:
        """The stack's config keys of a package (`gcp:zone`), as its default provider is configured."""
        return {k.split(":", 1)[1]: v for k, v in sorted(self.config.items()) if k.split(":", 1)[0] == package}


def _untargeted(request, what: str) -> str | None:
    return None if request.target else f"the program registers {what} without a callback server: target must be specified"


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


class _Collected:
    """What the generated `add_*Servicer_to_server` functions add to a server, kept to be served
    later (engine/serving.py): the port opens before these modules are imported."""

    def __init__(self) -> None:
        self.handlers: list[grpc.GenericRpcHandler] = []

    def add_generic_rpc_handlers(self, handlers) -> None:
        self.handlers.extend(handlers)

    def add_registered_method_handlers(self, service: str, handlers: dict) -> None:
        self.handlers.append(grpc.method_handlers_generic_handler(service, handlers))


def handlers(monitor: Monitor) -> list[grpc.GenericRpcHandler]:
    """The monitor and engine services of `monitor`, then a named refusal of any other method."""
    collected = _Collected()
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, collected)
    engine_pb2_grpc.add_EngineServicer_to_server(monitor, collected)
    return [*collected.handlers, _Unknown(monitor)]
