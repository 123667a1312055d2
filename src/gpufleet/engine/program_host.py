"""A program of one's own, run as the CLI's language host (Python or Node.js) runs it: in its own
interpreter, with its own SDK, talking to a monitor and engine gpufleet serves (engine/monitor.py). Every wait
has a bound: a program that has not finished by then is stopped, with what it last asked named.

The program's stdout and stderr are passed to gpufleet's stderr as they come (stdout stays the plan's
when --json asks for it), so a program that prints a great deal never fills a pipe and stops."""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpufleet import process_groups
from gpufleet.engine.collector import preview_thresholds
from gpufleet.engine.output_types import OutputTypes
from gpufleet.engine.recorded import EngineError, Program, ProgramRun, RecordedResource

if TYPE_CHECKING:
    from gpufleet.engine.monitor import Monitor
    from gpufleet.engine.serving import Served

EXEC = Path(__file__).with_name("program_exec.py")
PATCHES = Path(__file__).with_name("patches")  # the patch room, loaded by path in the program's interpreter
DEFAULT_TIMEOUT = 300.0  # seconds; `--timeout` sets another
_DRAIN = 5.0  # seconds to pass on what a stopped program had still written
_LINGER = 5.0  # seconds a program that has reported its end may take to exit


@dataclass(frozen=True)
class Hosting:
    """How a program of one's own is run: its interpreter (python, or node), the bound on its run,
    and the provider function answers `--answers` gives."""

    interpreter: Path
    timeout: float = DEFAULT_TIMEOUT
    given: dict[str, list[tuple[dict, dict]]] = field(default_factory=dict)


class Started:
    """A program started in its own interpreter, first of all that a preview does: its interpreter's
    start and its SDK's import are most of its time, and gpufleet's own work (the port, the monitor,
    the policy pack, the modules the plan is built with) is done meanwhile. A Python program starts
    before the port is even open (gRPC's import and the server's start): it reads the port's
    address from a pipe once it has imported its SDK. `run` serves it and waits for its end; leaving
    the `with` block ends the program's process group, however the preview ended."""

    def __init__(self, program: Program, hosting: Hosting, config: dict[str, str], stack: str):
        self.program, self.hosting, self.config, self.stack = program, hosting, config, stack
        self._scratch = tempfile.TemporaryDirectory(prefix="gpufleet-program-")
        self.report, self.search_path = Path(self._scratch.name) / "report.json", Path(self._scratch.name) / "search-path.json"
        self._serving = contextlib.ExitStack()
        self._stopped = False
        self._tell = -1
        self.child: subprocess.Popen | None = None
        self.passing: list[threading.Thread] = []
        try:
            self._start()
        except BaseException:
            self.__exit__()
            raise

    def _start(self) -> None:
        program, python = self.program, self.hosting.interpreter
        workdir = program.workdir or (program.main if program.main.is_dir() else program.main.parent)
        told, self._tell = os.pipe() if program.runtime == "python" else (-1, -1)
        self.served = None if told >= 0 else self._serving.enter_context(_served(self.hosting.timeout))
        address = self.served.address if self.served else f"fd:{told}"
        command, env = _launch(program, python, address, self.stack, workdir, self.report, self.search_path)
        env = {**os.environ, **env, "PULUMI_CONFIG": json.dumps(self.config), "PULUMI_DRY_RUN": "true"}
        try:
            # Its own session: the language host, ts-node and anything they fork end together.
            self.child = process_groups.start(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=workdir,
                env=env,
                pass_fds=(told,) if told >= 0 else (),
            )
        except OSError as err:
            raise EngineError(f"the program's interpreter {python} does not run: {err.strerror}") from None
        finally:
            if told >= 0:
                os.close(told)
        self.deadline = time.monotonic() + self.hosting.timeout
        self.passing = [threading.Thread(target=_pass_on, args=(pipe,), daemon=True) for pipe in (self.child.stdout, self.child.stderr)]
        for thread in self.passing:
            thread.start()

    def __enter__(self) -> Started:
        return self

    def __exit__(self, *exc) -> None:
        if self._tell >= 0:  # never told: the program reads the end of the pipe, and is stopped below
            os.close(self._tell)
            self._tell = -1
        self._stop()
        self._serving.close()
        self._scratch.cleanup()

    def _stop(self) -> None:
        """End the program's group once (its pid is not ours to signal after it is reaped)."""
        if self.child is not None and not self._stopped:
            self._stopped = True
            process_groups.stop(self.child)
            for thread in self.passing:
                thread.join(_DRAIN)

    def run(
        self, on_resource: Callable[[RecordedResource], None] | None = None, meanwhile: Callable[[], object] | None = None
    ) -> ProgramRun:
        """Serve the program and wait for its end; raises EngineError naming why it did not end
        well. `meanwhile` (what the caller needs once the program ends) is called while it runs."""
        program, python, timeout = self.program, self.hosting.interpreter, self.hosting.timeout
        assert self.child is not None
        compiling = None
        try:
            if self.served is None:
                self.served = self._serving.enter_context(_served(timeout))
                tell, self._tell = self._tell, -1
                _tell(tell, self.served.address)
            from gpufleet.engine.monitor import handlers

            monitor = _monitor(program, self.hosting, self.config, self.stack, on_resource, self.search_path)
            self.served.serve(handlers(monitor))
            compiling = _compiling_note(program, monitor)
            monitor.warm()
            if meanwhile is not None:
                meanwhile()
            code = _wait(self.child, self.report, self.deadline)
        finally:
            if compiling is not None:
                compiling.cancel()
            self._stop()
            self._serving.close()  # no monitor call is left to reach the caller's pack once it closes
        if code is None:
            raise EngineError(f"the program did not finish within {timeout:g} s (--timeout); {monitor.activity.describe()}")
        outcome = _read(self.report) if program.runtime == "python" else _node_outcome(code, monitor)
        if monitor.refused:
            raise EngineError(monitor.refused[0])
        if outcome.get("kind") == "no-sdk":
            raise EngineError(
                f"the program's interpreter {python} has no Pulumi SDK ({outcome.get('message')}): install the program's requirements into it"
            )
        if outcome.get("kind") == "raised":
            where = f" ({outcome['where']})" if outcome.get("where") else ""
            unknown = (
                f"; offline, these provider functions were answered unknown, and the program may need a concrete value: "
                f"{'; '.join(monitor.unknown_calls)} (give their outputs for those inputs with --answers FILE)"
                if monitor.unknown_calls
                else ""
            )
            raise EngineError(f"the program raised {outcome.get('type')}: {outcome.get('message')}{where}{unknown}")
        if outcome.get("kind") != "ok":
            raise EngineError(
                f"the program's interpreter {python} exited {code} before the program finished ({monitor.activity.describe()})"
            )
        return monitor.run


def _served(timeout: float) -> Served:
    from gpufleet.engine.serving import Served

    return Served(bound=timeout)


def _tell(pipe: int, address: str) -> None:
    """The port's address to a Python program waiting for it (engine/program_exec.py --monitor fd:N)."""
    try:
        os.write(pipe, f"{address}\n".encode())
    except OSError:  # the program has already ended: _wait reads why
        pass
    finally:
        os.close(pipe)


def _monitor(
    program: Program,
    hosting: Hosting,
    config: dict[str, str],
    stack: str,
    on_resource: Callable[[RecordedResource], None] | None,
    search_path: Path,
) -> Monitor:
    """The monitor, made once the program is on its way: Pulumi's protocol modules, which it imports,
    take a good part of a second."""
    from gpufleet.engine.monitor import Monitor

    region = str(config.get(f"{program.project}:region") or config.get("aws:region") or "")
    return Monitor(
        program.project,
        stack,
        None,  # the emulated account's answers, made on first use
        region,
        on_resource,
        hosting.given,
        config,
        callback_timeout=hosting.timeout,
        # The Node.js SDK resolves outputs untyped: only a Python program's SDK reads them by type.
        output_types=OutputTypes(lambda: _search_path(search_path)) if program.runtime == "python" else None,
    )


def _search_path(written: Path) -> list[str]:
    """The program's sys.path, as engine/program_exec.py wrote it before the program's first line."""
    try:
        paths = json.loads(written.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


def _launch(
    program: Program, interpreter: Path, address: str, stack: str, workdir: Path, report: Path, search_path: Path
) -> tuple[list[str], dict[str, str]]:
    """The command and environment a language host starts the program with."""
    common = [
        "--monitor",
        address,
        "--engine",
        address,
        "--project",
        program.project,
        "--stack",
        stack,
        "--organization",
        "organization",
        "--pwd",
        str(workdir),
    ]
    if program.runtime == "nodejs":
        # As the Node.js language host runs it (execRuntime): node, the nodeargs, the program's own
        # runner; TypeScript compiled by the runner (its ts-node) unless `typescript: false`.
        env = {"PULUMI_NODEJS_TYPESCRIPT": "true"} if program.typescript else {}
        if program.tsconfig:
            env["PULUMI_NODEJS_TSCONFIG_PATH"] = program.tsconfig
        return [str(interpreter), *program.node_args, str(program.runner), *common, "--dry-run", str(program.main)], env
    return [
        str(interpreter),
        "-u",
        str(EXEC),
        *common,
        "--report",
        str(report),
        "--search-path",
        str(search_path),
        "--gc-thresholds",
        ",".join(str(n) for n in preview_thresholds()),
        "--root",
        str(workdir),
        "--patches",
        str(PATCHES),
        str(program.main),
    ], {"PYTHONUNBUFFERED": "1"}


# How long a TypeScript program may register nothing before the preview says it is still compiling.
_COMPILING_NOTE_AFTER = 15.0


def _compiling_note(program: Program, monitor: Monitor) -> threading.Timer | None:
    """The CLI type-checks a TypeScript program before it runs (ts-node; minutes for a large SDK such
    as @pulumi/azure-native): so does the preview, and it says so when that takes long."""
    if program.runtime != "nodejs" or not program.typescript:
        return None

    def note() -> None:
        if not monitor.run.resources:
            with _PASSING:
                print(
                    f"gpufleet: the program has registered nothing after {_COMPILING_NOTE_AFTER:g} s: TypeScript is being compiled "
                    "and type-checked, as the Pulumi CLI does (PULUMI_NODEJS_TRANSPILE_ONLY=true skips the type check)",
                    file=sys.stderr,
                    flush=True,
                )

    timer = threading.Timer(_COMPILING_NOTE_AFTER, note)
    timer.daemon = True
    timer.start()
    return timer


def _node_outcome(code: int, monitor: Monitor) -> dict:
    """The Node.js runner reports a program's failure to the engine (Log) and exits non-zero."""
    if code == 0:
        return {"kind": "ok"}
    message = monitor.errors[0].strip() if monitor.errors else f"node exited {code}"
    return {"kind": "raised", "type": "an error", "message": message[:4000]}


_PASSING = threading.Lock()  # a line of the program's stdout and one of its stderr never mix


def _wait(child: subprocess.Popen, report: Path, deadline: float) -> int | None:
    """The program's exit code; None if it has not finished by `deadline` (time.monotonic). A program
    that has reported its end but does not exit (a thread it started still runs) is stopped after _LINGER."""
    reported = None
    while True:
        try:
            return child.wait(0.05)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if reported is None and report.exists():
            reported = now
        if reported is not None and now - reported > _LINGER:
            return -1
        if now > deadline:
            return None


def _pass_on(pipe) -> None:
    """Copy the program's output to gpufleet's stderr a line at a time (a longer line in pieces of
    64 KiB), as it is written."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with pipe:
        for line in iter(lambda: pipe.readline(1 << 16), b""):
            with _PASSING:
                sys.stderr.write(text.decode(line))
                sys.stderr.flush()


def _read(report: Path) -> dict:
    try:
        outcome = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return outcome if isinstance(outcome, dict) else {}
