"""Run a CrossGuard policy pack as the Pulumi CLI does: its own process, spoken to over the analyzer
gRPC protocol with the stubs the Pulumi SDK ships.

The pack prints its port on stdout; we call GetPluginInfo and GetAnalyzerInfo, reconcile the policy
config (`policy_config.py`), call Configure (and ConfigureStack, which packs may not implement),
then Analyze for every resource as it registers (handed sixteen at a time to the pack's relay, a
process of its own that makes the calls, at most 64 in flight: relay.py; so the pack's work overlaps
the program's), and AnalyzeStack once at the end.

Fail closed: a pack that does not start, dies, answers garbage or times out raises PolicyPackError;
no caller may read that as "no violations".
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import cast

import grpc
from google.protobuf import empty_pb2, json_format, message
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from gpufleet.analyzer import wire
from gpufleet.analyzer.pack_process import PackProcess, PolicyPackError  # noqa: F401 - PolicyPackError is re-exported
from gpufleet.analyzer.policy_config import PolicyConfig, PolicyMeta, reconcile
from gpufleet.analyzer.relay_link import RelayError
from gpufleet.analyzer.results import LEVEL_CODES, LEVELS, Finding, PolicyResult
from gpufleet.plans.index import Resource
from gpufleet.plans.wire import json_value

# Resources are written to the relay sixteen at a time: a write, and a wake-up of the relay, per
# batch. (Before the relay, handing them to the client's own loop one at a time measured about 5
# points more policy overhead on the 200-provider preview: paired runs, bench/preview.py; not
# measured again since.) A partial batch goes out when the session finishes.
_BATCH = 16
# A failed Analyze's status as the relay reports it (its code's number).
_STATUS = {code.value[0]: code for code in grpc.StatusCode}

# What the methods sent as bytes answer, read how. Analyze's answer stays bytes: a session reads it
# (PolicyPack._answer_of) once per distinct answer, not once per resource.
_RESPONSES: dict[str, Callable[[bytes], message.Message] | None] = {
    "Analyze": None,
    "Remediate": analyzer_pb2.RemediateResponse.FromString,
    "AnalyzeStack": analyzer_pb2.AnalyzeResponse.FromString,
}

_RESOURCES_FIELD = bytes([1 << 3 | 2])  # AnalyzeStackRequest.resources: field 1, length-delimited


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@dataclasses.dataclass(frozen=True)
class _Answer:
    """What a session reads of an AnalyzeResponse, taken as the answer arrives. The message itself
    is let go: its not-applicable entries (one per policy that skipped the resource, about forty
    on most resources) are kept by protobuf in memory of its own, and held to the end they grew the
    largest ECS stack's peak by a few KB a resource."""

    diagnostics: tuple[tuple[str, analyzer_pb2.EnforcementLevel.ValueType, str, str], ...]  # policy, level, urn, message
    not_applicable: tuple[str, ...]  # policy names, interned: the same few dozen on every resource


def _answer(response: analyzer_pb2.AnalyzeResponse) -> _Answer:
    return _Answer(
        tuple((d.policyName, d.enforcementLevel, d.urn, d.message) for d in response.diagnostics),
        tuple(sys.intern(na.policy_name) for na in response.not_applicable),
    )


def _seconds(variable: str, default: float) -> float:
    try:
        return float(os.environ.get(variable, default))
    except ValueError:
        return default


class PolicyPack:
    """One running pack process and a channel to it. Use as a context manager. `started` is the
    pack's process when the caller started it early (the CLI does, before its own imports)."""

    def __init__(
        self,
        pack_dir: Path,
        *,
        project: str,
        stack: str,
        config: dict[str, str] | None = None,
        started: PackProcess | None = None,
    ):
        self.pack = started or PackProcess(pack_dir, project=project, stack=stack, config=config)
        self.pack_dir, self.manifest, self.process = self.pack.pack_dir, self.pack.manifest, self.pack.process
        self.project, self.stack, self.stack_config = project, stack, dict(config or {})
        self.start_timeout = _seconds("GPUFLEET_POLICY_START_TIMEOUT", 60)
        self.call_timeout = _seconds("GPUFLEET_POLICY_TIMEOUT", 120)
        # The session's other calls (the relay makes Analyze's) go over one channel, driven by an
        # event loop on a thread of its own, so any thread (the configuring worker, the caller) can
        # make one and wait for it.
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._loop_thread.start()
        self.channel: grpc.aio.Channel | None = None
        self._raw_calls: dict[str, grpc.aio.UnaryUnaryMultiCallable] = {}
        self.stub: analyzer_pb2_grpc.AnalyzerStub | None = None
        self.policies: list[PolicyMeta] = []
        self.name = ""
        self.version = str(self.manifest.get("version", ""))

    def _failure(self, what: str) -> PolicyPackError:
        return self.pack.failure(what)

    def wait_ready(self) -> None:
        """Wait for the port, connect, and read the pack's policies."""
        if self.stub is not None:
            return
        line = self.pack.port(self.start_timeout)
        self.channel = self._run(self._connect(f"127.0.0.1:{line}"), None)
        if self.channel is None:
            raise self._failure("did not accept a connection")
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
        self._call("GetPluginInfo", empty_pb2.Empty())
        info = self._call("GetAnalyzerInfo", empty_pb2.Empty())
        self.name = info.name
        self.version = self.version or info.version
        # As the CLI reads it: an initial config entry always carries a level (advisory when unset).
        self.initial_config = {
            name: PolicyConfig(LEVELS[c.enforcementLevel], json_format.MessageToDict(c.properties))
            for name, c in info.initialConfig.items()
        }
        self.policies = [
            PolicyMeta(
                name=p.name,
                enforcement_level=LEVELS[p.enforcementLevel],
                config_schema=wire.schema(p),
                remediation=p.remediation_steps,
            )
            for p in info.policies
        ]

    async def _connect(self, target: str) -> grpc.aio.Channel | None:
        channel = grpc.aio.insecure_channel(target)
        try:
            await asyncio.wait_for(channel.channel_ready(), self.start_timeout)
        except asyncio.TimeoutError:
            await channel.close()
            return None
        return channel

    def _run(self, coroutine, timeout: float | None):
        """Run a coroutine on the channel's loop and wait for it (from any other thread)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _unary(self, method: str, request, timeout: float):
        if isinstance(request, bytes):  # serialized already: a resource's request (_request), the stack's
            return await self._raw(method)(request, timeout=timeout)
        return await getattr(self.stub, method)(request, timeout=timeout)

    def _raw(self, method: str) -> grpc.aio.UnaryUnaryMultiCallable:
        """The method as a call that sends bytes as they are (the stub would serialize the message again)."""
        if method not in self._raw_calls:
            # The channel is open: wait_ready() made it before any call.
            self._raw_calls[method] = cast(grpc.aio.Channel, self.channel).unary_unary(
                f"/pulumirpc.Analyzer/{method}", response_deserializer=_RESPONSES[method]
            )
        return self._raw_calls[method]

    def _call(self, method: str, request, optional: bool = False, timeout: float | None = None):
        timeout = timeout or self.call_timeout
        try:
            return self._run(self._unary(method, request, timeout), None)
        except grpc.RpcError as err:
            if optional and err.code() == grpc.StatusCode.UNIMPLEMENTED:
                return None
            raise self._rpc_failure(method, err.code(), err.details(), timeout) from None

    def _rpc_failure(self, method: str, code: grpc.StatusCode | int, details: str | None, timeout: float | None = None) -> PolicyPackError:
        """A failed call, from its status (as the relay reports it: the code's number)."""
        status = _STATUS.get(code, code) if isinstance(code, int) else code
        if status == grpc.StatusCode.DEADLINE_EXCEEDED:
            return self._failure(f"{method} timed out after {timeout or self.call_timeout:.0f} s")
        name = status.name if isinstance(status, grpc.StatusCode) else f"status {status}"
        return self._failure(f"{method} failed ({name}: {details})")

    def close(self) -> None:
        if self.channel is not None:
            try:
                self._run(self.channel.close(), 5)
            except Exception:  # noqa: BLE001 - the process is terminated below either way
                pass
            self.channel = None
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop_thread.join(5)
            self._loop.close()
        self.pack.stop()

    def __enter__(self) -> PolicyPack:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- protocol --------------------------------------------------------------------------------
    def configure(self, given: dict[str, PolicyConfig]) -> None:
        self.wait_ready()
        resolved = reconcile(self.policies, self.initial_config, given, self.name)
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, c in resolved.items():
            entry = request.policyConfig[name]
            entry.enforcementLevel = LEVEL_CODES[c.enforcement_level or "advisory"]
            entry.properties.update(c.properties)
        self._call("Configure", request)
        # Python packs remediate only with policies at the remediate level; without one, the CLI's
        # Remediate pass changes nothing, so it is skipped (one RPC per resource saved).
        self._remediate = any(c.enforcement_level == "remediate" for c in resolved.values())
        stack_request = analyzer_pb2.AnalyzerStackConfigureRequest(stack=self.stack, project=self.project, dry_run=True)
        stack_request.config.update(self.stack_config)
        if self._call("ConfigureStack", stack_request, optional=True) is None:
            self.pack.one_stack_only()  # it cannot be told the next stack is another

    def begin(self, given: dict[str, PolicyConfig]) -> None:
        """Start a session: every `submit`ted resource goes to Analyze through the pack's relay
        (relay.py), held there until the pack is configured, as the CLI analyses a resource when it
        registers, so the pack works while the program still runs."""
        self._by_urn: dict[str, Resource] = {}
        self._requests: dict[str, bytes] = {}  # serialized: a message object holds several times its bytes
        self._providers: dict[str, analyzer_pb2.AnalyzerProviderResource | None] = {}
        # In registration order; a resource's place is its id at the relay (batches may reach it out of order).
        self._registered: list[Resource] = []
        self._remediating = False  # set once configured: finish() remediates and analyses each itself
        self._error: BaseException | None = None
        self._unsent: str | None = None  # why a resource did not reach the relay (the failure is made in finish())
        self._batch: list[int] = []  # places in _registered, not yet sent
        self._batch_lock = threading.Lock()
        self._answers_read: dict[bytes, _Answer] = {}
        self._relay = self.pack.relay
        try:
            self._relay.hold(self.call_timeout)
        except RelayError as err:
            self._unsent = str(err)
        self._worker = threading.Thread(target=self._configure, args=(given,), daemon=True)
        self._worker.start()

    def submit(self, resource: Resource) -> None:
        """Queue a resource for Analyze (sent with the next full batch, or by `finish`). Thread-safe:
        the SDK's mock monitor registers resources on its executor's threads."""
        with self._batch_lock:
            # Recorded here, in registration order, so a provider is known before any resource using it.
            self._by_urn[resource.urn] = resource
            self._batch.append(len(self._registered))
            self._registered.append(resource)
            if len(self._batch) < _BATCH:
                return
            batch, self._batch = self._batch, []
        self._send(batch)

    def _send(self, batch: list[int]) -> None:
        """A batch to the relay (a remediating session's stays for finish()). Serialized outside
        the lock: held across it, the lock kept the other registering threads (the SDK's executor)
        waiting while its holder waited for the GIL, about 0.05 s of a 200-service preview."""
        if self._remediating:
            return
        # Raised by finish(), not into the program: a resource not sent is a resource not judged.
        try:
            requests = [self._request(self._registered[place]) for place in batch]
        except Exception as err:  # noqa: BLE001 - inputs that are not JSON: a caller's bug
            self._unsent = f"a resource could not be sent to Analyze ({err!r})"
            return
        with self._batch_lock:  # a write: the relay's pipe takes it at once
            if self._unsent is None and not self._remediating:
                try:
                    self._relay.send(requests, batch, self.call_timeout)
                except RelayError as err:
                    self._unsent = str(err)

    def _configure(self, given: dict[str, PolicyConfig]) -> None:
        try:
            self.wait_ready()
            self._relay.connect(f"127.0.0.1:{self.pack.port(self.start_timeout)}", self.call_timeout, self.call_timeout)
            self.configure(given)
        except RelayError as err:
            self._unsent = str(err)
            return
        except BaseException as err:  # re-raised by finish() in the caller's thread
            self._error = err
            with contextlib.suppress(RelayError):
                self._relay.drop(self.call_timeout)
            return
        with self._batch_lock:
            try:
                if self._remediate:  # remediated first, then analysed, one by one in finish()
                    self._remediating = True
                    self._relay.drop(self.call_timeout)
                else:
                    self._relay.go(self.call_timeout)
            except RelayError as err:
                self._unsent = str(err)

    def _answer_of(self, raw: bytes) -> _Answer:
        """An Analyze answer, read once per distinct answer: a resource the policies pass is
        answered with its type's not-applicable entries alone, the same bytes for every resource
        of that type (a 200-service ECS stack's 490 answers are five distinct ones): parsing each and
        reading its thirty-odd entries had cost that stack about 5 ms. A finding names its
        resource: such answers are read each."""
        known = self._answers_read.get(raw)
        if known is not None:
            return known
        answer = _answer(analyzer_pb2.AnalyzeResponse.FromString(raw))
        if not answer.diagnostics:
            self._answers_read[raw] = answer
        return answer

    def _request(self, resource: Resource) -> bytes:
        """The Analyze request of a resource, serialized and kept: AnalyzeStack sends the same fields again."""
        request = analyzer_pb2.AnalyzeRequest(**wire.fields(resource, self._provider(resource))).SerializeToString()
        self._requests[resource.urn] = request
        return request

    def _provider(self, resource: Resource) -> analyzer_pb2.AnalyzerProviderResource | None:
        urn = resource.provider or ""
        if urn not in self._providers:
            provider = self._by_urn.get(urn)
            self._providers[urn] = None if provider is None else wire.provider_resource(provider)
        return self._providers[urn]

    def finish(self, resources: list[Resource]) -> PolicyResult:
        """Collect every Analyze answer, then AnalyzeStack over `resources`; findings with their fix.
        The inputs remediations rewrote come back in the result's `remediated`, for the caller to
        write into its plan."""
        with self._batch_lock:
            batch, self._batch = self._batch, []
        self._worker.join()  # configured (or failed) first: the last batch goes where the others went
        if batch:
            self._send(batch)
        if self._error is not None:
            raise self._error
        if self._unsent is not None:
            raise self._failure(self._unsent)
        types = {r.urn: r.type for r in resources}
        result = PolicyResult(self.name, self.version)
        fixes = {p.name: p.remediation for p in self.policies}
        # Counted per distinct list: most resources share their type's.
        skipped: Counter[tuple[str, ...]] = Counter()
        if self._remediating:
            answers = self._remediated_answers(result)
            stack_request = self._stack_request(resources)
        else:
            stack_request = self._stack_request(resources)  # while the pack still answers the last resources
            answers = self._relayed_answers()
        for resource, response in answers:
            # As the CLI does: a resource's diagnostics belong to the resource analysed.
            self._collect(result, response, fixes, types, resource.urn)
            skipped[response.not_applicable] += 1
        # The stack's policies see every resource: their deadline grows with the stack (2 ms a
        # resource past the per-call one), so a plan of 50,000 resources is judged, and a hung pack
        # still fails closed.
        deadline = self.call_timeout + 0.002 * len(resources)
        stack = _answer(self._call("AnalyzeStack", stack_request, timeout=deadline))
        self._collect(result, stack, fixes, types, None)
        skipped[stack.not_applicable] += 1
        for names, times in skipped.items():
            for name in names:
                result.not_applicable[name] = result.not_applicable.get(name, 0) + times
        self.pack.ended_cleanly()
        return result

    def _relayed_answers(self) -> list[tuple[Resource, _Answer]]:
        """Every sent resource with its answer, read from the relay once the program has ended."""
        # The relay bounds each call by call_timeout: a relay silent for longer is stuck.
        try:
            got = self._relay.answers(len(self._registered), self.call_timeout + 5)
        except RelayError as err:
            raise self._failure(str(err)) from None
        answers = []
        for resource, (code, body) in zip(self._registered, got):
            if code:
                raise self._rpc_failure("Analyze", code, body.decode(errors="replace"))
            answers.append((resource, self._answer_of(body)))
        return answers

    def _remediated_answers(self, result: PolicyResult) -> list[tuple[Resource, _Answer]]:
        """The CLI's two passes a resource at a time: Remediate, then Analyze of what it rewrote.
        The requests made as the resources registered named their providers before any remediation."""
        self._requests.clear()
        self._providers.clear()
        answers = []
        for resource in self._registered:
            resource = self._remediate_one(resource, result)
            answers.append((resource, self._answer_of(self._call("Analyze", self._request(resource)))))
        return answers

    def _stack_request(self, resources: list[Resource]) -> bytes:
        """AnalyzeStackRequest, serialized. AnalyzerResource begins with AnalyzeRequest's fields
        under the same numbers, and serialized fields concatenate (the message parsed is the same):
        each resource is its analysed request as it was sent (after any remediation) followed by
        its parent and dependencies. No message is built a resource: they had cost the largest EKS
        stack 7 MB at its peak."""
        parts: list[bytes] = []
        for resource in resources:
            if resource.urn not in self._requests:
                self._request(resource)
            body = self._requests[resource.urn] + wire.links(resource).SerializeToString()
            parts += (_RESOURCES_FIELD, _varint(len(body)), body)
        return b"".join(parts)

    def judge(self, given: dict[str, PolicyConfig], resources: list[Resource]) -> PolicyResult:
        """A whole session over resources already known (a saved plan)."""
        self.begin(given)
        for resource in resources:
            self.submit(resource)
        return self.finish(resources)

    def _remediate_one(self, resource: Resource, result: PolicyResult) -> Resource:
        """The CLI's first pass: remediations rewrite the inputs that analysis (and the plan) then
        see. The resource as rewritten is what the rest of the session sends, as the provider of
        resources not yet sent too."""
        response = self._call("Remediate", self._request(resource))
        remediated = resource
        for r in response.remediations:
            if r.diagnostic:
                result.findings.append(Finding(r.policyName, "advisory", resource.urn, r.diagnostic, resource.type))
            elif r.HasField("properties"):
                inputs = json_value(json_format.MessageToDict(r.properties))
                remediated = dataclasses.replace(remediated, props=inputs)
                result.remediated[resource.urn] = inputs  # the plan shows what will be created
                result.remediations.append({"policy": r.policyName, "urn": resource.urn})
        if self._by_urn.get(resource.urn) is resource:
            self._by_urn[resource.urn] = remediated
        for na in response.not_applicable:
            result.not_applicable[na.policy_name] = result.not_applicable.get(na.policy_name, 0) + 1
        return remediated

    @staticmethod
    def _collect(result: PolicyResult, answer: _Answer, fixes: dict, types: dict[str, str], urn: str | None) -> None:
        """The answer's findings into the result (its not-applicable entries are counted by the caller)."""
        for policy, code, diagnostic_urn, text in answer.diagnostics:
            level = LEVELS.get(code, "advisory")
            if level == "remediate":
                level = "mandatory"  # a remediation that still violates is mandatory, as under the CLI
            target = urn or diagnostic_urn
            result.findings.append(
                Finding(policy=policy, level=level, urn=target, message=text, type=types.get(target, ""), fix=fixes.get(policy, ""))
            )
