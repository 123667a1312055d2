"""A program of one's own, run as the CLI's language host (Python or Node.js) runs it: in its own
interpreter, with its own SDK, talking to a monitor and engine gpufleet serves (engine/monitor.py). Every wait
has a bound: a program that has not finished by then is stopped, with what it last asked named.

The program's stdout and stderr are passed to gpufleet's stderr as they come (stdout stays the plan's
when --json asks for it), so a program that prints a great deal never fills a pipe and stops."""

from __future__ import annotations

import codecs
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
from gpufleet.engine import patches
from gpufleet.engine.collector import preview_thresholds
from gpufleet.engine.output_types import OutputTypes
from gpufleet.engine.recorded import EngineError, Program, ProgramRun, RecordedResource
from gpufleet.engine.serving import Served

if TYPE_CHECKING:
    from gpufleet.engine.monitor import Monitor

EXEC = Path(__file__).with_name("program_exec.py")
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


def run_hosted(
    program: Program,
    hosting: Hosting,
    config: dict[str, str],
    stack: str,
    on_resource: Callable[[RecordedResource], None] | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> ProgramRun:
    """Preview `program` as `hosting` says; raises EngineError naming why it could not. The program
    starts first, against a port whose monitor is made while it starts; `meanwhile` is then called
    (what the caller needs once the program ends) while the program runs."""
    python, timeout = hosting.interpreter, hosting.timeout
    workdir = program.workdir or (program.main if program.main.is_dir() else program.main.parent)
    scratch = tempfile.TemporaryDirectory(prefix="gpufleet-program-")
    report, search_path = Path(scratch.name) / "report.json", Path(scratch.name) / "search-path.json"
    with scratch, Served(bound=timeout) as served:
        command, env = _launch(program, python, served.address, stack, workdir, report, search_path)
        env = {**os.environ, **env, "PULUMI_CONFIG": json.dumps(config), "PULUMI_DRY_RUN": "true"}
        try:
            # Its own session: the language host, ts-node and anything they fork end together.
            child = process_groups.start(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=workdir, env=env
            )
        except OSError as err:
            raise EngineError(f"the program's interpreter {python} does not run: {err.strerror}") from None
        passing = [threading.Thread(target=_pass_on, args=(pipe,), daemon=True) for pipe in (child.stdout, child.stderr)]
        for thread in passing:
            thread.start()
        deadline = time.monotonic() + timeout
        compiling = None
        try:
            from gpufleet.engine.monitor import handlers

            monitor = _monitor(program, hosting, config, stack, on_resource, search_path)
            served.serve(handlers(monitor))
            compiling = _compiling_note(program, monitor)
            monitor.warm()
            if meanwhile is not None:
                meanwhile()
            code = _wait(child, report, deadline)
        finally:
            if compiling is not None:
                compiling.cancel()
            process_groups.stop(child)
            for thread in passing:
                thread.join(_DRAIN)
        if code is None:
            raise EngineError(f"the program did not finish within {timeout:g} s (--timeout); {monitor.activity.describe()}")
        outcome = _read(report) if program.runtime == "python" else _node_outcome(code, monitor)
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
        raise EngineError(f"the program's interpreter {python} exited {code} before the program finished ({monitor.activity.describe()})")
    return monitor.run


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
        str(Path(patches.__file__).parent),
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
