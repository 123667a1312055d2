"""The offline engine: runs `src/gpufleet/stack/__main__.py` in-process under the Pulumi SDK's mock runtime, as
`pulumi preview` would (dry run), and records every registered resource with its inputs as the
engine receives them (camelCase, JSON-string properties left as strings, unknowns as the engine's
unknown sentinel).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import runpy
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, cast

import pulumi
from google.protobuf import empty_pb2
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_in_stack
from pulumi.runtime.sync_await import _sync_await

from gpufleet.catalog import tokens
from gpufleet.catalog.generate.sources import FactSource
from gpufleet.engine import (
    PROJECT,  # noqa: F401 - the engine's callers read it here
    patches,
)
from gpufleet.engine.answers import OfflineAnswers, UnansweredCall
from gpufleet.engine.collector import young_collections_only
from gpufleet.engine.recorded import (  # noqa: F401 - the engine's callers read these here too
    PROGRAM,
    UNKNOWN,
    EngineError,
    Program,
    ProgramRun,
    RecordedResource,
    moto_snapshot,
    preview_outputs,
    record,
)
from gpufleet.plans.wire import json_value


class _Paced(Protocol):
    """What the paced-registration patch yields: it runs the program's body."""

    def body(self, run: Callable[[], object]) -> Any: ...


class _Recorder(mocks.MockMonitor):
    def __init__(self, answers: OfflineAnswers, default_region: str, run: ProgramRun, on_resource=None):
        self.run = run
        self.on_resource = on_resource
        self.answers = answers
        self.default_region = default_region
        self.provider_regions: dict[str, str] = {}
        super().__init__(_MockAnswers(self))

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        inputs = json_value(rpc.deserialize_properties(request.object, keep_unknowns=True))
        if request.type.startswith(tokens.AWS_PROVIDER) and "region" in inputs:
            self.provider_regions[response.urn] = inputs["region"]
        recorded = record(request, response.urn, inputs)
        self.run.resources.append(recorded)
        if self.on_resource is not None:
            self.on_resource(recorded)
        return response

    def RegisterResourceOutputs(self, request):
        if request.urn.split("::")[2] == tokens.STACK:
            self.run.outputs = json_value(rpc.deserialize_properties(request.outputs, keep_unknowns=True))
        return super().RegisterResourceOutputs(request)

    def region_of(self, provider_ref: str) -> str:
        for known_urn, region in self.provider_regions.items():
            if provider_ref.startswith(known_urn):
                return region
        return self.default_region


class _MockAnswers(mocks.Mocks):
    def __init__(self, monitor: _Recorder):
        self.monitor = monitor

    def call(self, args: mocks.MockCallArgs):
        answer, note = self.monitor.answers.answer_noted(args.token, args.args, self.monitor.region_of(args.provider or ""))
        if note is not None:
            self.monitor.run.gaps.append(f"provider function {args.token}: {note}")
        return answer

    def new_resource(self, args: mocks.MockResourceArgs):
        return None, preview_outputs(args.typ, args.inputs)


def run_program(
    config: dict[str, str],
    stack: str,
    source: FactSource | None = None,
    on_resource: Callable[[RecordedResource], None] | None = None,
    program: Program | None = None,
) -> ProgramRun:
    """Preview a program offline (gpufleet's stack-file program unless `program` names another)
    with the given Pulumi config (values as the CLI passes them); `on_resource` sees each resource
    as it registers (the policy pack analyses it then)."""
    program = program or Program(PROGRAM, PROJECT)
    run = ProgramRun(stack=stack)
    region = str(config.get(f"{program.project}:region") or config.get("aws:region") or "")
    monitor = _Recorder(OfflineAnswers(source or moto_snapshot()), region, run, on_resource)
    settings.set_root_resource(None)  # type: ignore[arg-type]
    features = set(monitor.GetDeploymentInfo(empty_pb2.Empty()).supportedFeatures)
    settings.configure(
        mocks.MockSettings(
            monitor=monitor,
            monitor_features=features,
            engine=mocks.MockEngine(None),
            project=program.project,
            stack=stack,
            dry_run=True,
            organization="organization",
            callbacks=None,
        )
    )
    pulumi.runtime.set_all_config(dict(config))
    try:
        with (
            young_collections_only(),
            patches.applied(patches.ENGINE, monitor_features=features) as active,
            _working_directory(program.workdir),
        ):
            body: Callable[[Callable[[], object]], Any] = (
                cast(_Paced, active["paced-registration"]).body if "paced-registration" in active else _as_it_is
            )
            _sync_await(run_in_stack(lambda: body(lambda: runpy.run_path(str(program.main), run_name="__main__"))))
    except Exception as err:
        # The SDK re-raises an invoke's failure wrapped in its own exceptions: judge the root cause.
        cause = _root_cause(err)
        if isinstance(cause, (UnansweredCall, pulumi.RunError)):
            raise EngineError(str(cause)) from None
        if program.main != PROGRAM:
            # Someone else's program failing is their input, not gpufleet's bug: say where it raised.
            raise EngineError(f"the program raised {type(cause).__name__}: {cause}{_where_raised(cause, program)}") from None
        raise
    finally:
        settings.set_root_resource(None)  # type: ignore[arg-type]
    return run


def _as_it_is(run: Callable[[], object]) -> object:
    return run()


@contextlib.contextmanager
def _working_directory(folder: Path | None):
    if folder is None:
        yield
        return
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _where_raised(err: BaseException, program: Program) -> str:
    """The innermost line of the program's own files in the traceback, if any."""
    root = (program.workdir or program.main).resolve()
    frames = [f for f in traceback.extract_tb(err.__traceback__) if Path(f.filename).resolve().is_relative_to(root)]
    return f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _settle_pending_tasks() -> None:
    """A program that fails mid-run leaves the SDK's registrations pending on its event loop. Left
    to interpreter shutdown, the loop is collected after its self-pipe and prints a traceback
    (asyncio base_events __del__) after gpufleet's own message; so they are cancelled at exit.
    Not earlier: the SDK's invokes run on executor threads that outlive a cancelled task and report
    into its process-wide RPC state, which the next program run in the process would inherit."""
    loop = asyncio.get_event_loop_policy().get_event_loop()
    if loop.is_running() or loop.is_closed():
        return
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


@atexit.register
def _close_event_loop() -> None:
    """Close the SDK's loop while the interpreter is still whole (see _settle_pending_tasks), even
    if settling its tasks fails: an unclosed loop collected at teardown prints a traceback."""
    with contextlib.suppress(RuntimeError):
        loop = asyncio.get_event_loop_policy().get_event_loop()
        if not loop.is_running() and not loop.is_closed():
            try:
                _settle_pending_tasks()
            finally:
                loop.close()


def _root_cause(err: BaseException) -> BaseException:
    """Follow the chain Python would print: `raise ... from None` ends it."""
    seen = set()
    while id(err) not in seen:
        seen.add(id(err))
        nxt = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
        if nxt is None:
            break
        err = nxt
    return err
