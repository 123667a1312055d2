"""Judging one mutant quickly: a warm pytest process that forks a child per mutant.

The parent imports the tests once (pytest's collection, in-process), and a first forked child runs
them unmutated, recording which tests execute each line of the module. For each mutant, the mutated
file is written in place (so a policy pack the tests start, a process of its own, reads it too), and
a forked child swaps the mutated function's code into the module it already imported, then runs
the tests that execute the mutated line (all of the module's tests when none does in-process) with
-x. Import and collection are paid once per module instead of once per mutant.

The fork is trusted only where the swap is exact: a mutation inside one function or method body,
whose code object can be replaced in place (every reference to the function sees it). A mutation
elsewhere (a module constant, a class attribute, a decorator, a dataclass or pydantic field) runs
the slow path: a fresh pytest process over the file on disk, as cosmic-ray itself does. So does
every mutant the fork leaves alive (a cache filled before the fork can hide a mutant), unless
equivalent.txt already explains it: a survivor is reported only when a fresh process confirms it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from pytest import hookimpl as pytest_hookimpl

KILLED, SURVIVED = "killed", "survived"


def _definition(source: str, line: int) -> tuple[str, ...] | None:
    """The function (name,) or method (class, name) whose body holds `line`; None when the line
    belongs to anything else (module or class level, a decorator)."""
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            return (node.name,)
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= node.end_lineno:
            for item in node.body:
                # A def's lineno is its `def` line: its decorators, above it, fall outside.
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.lineno <= line <= item.end_lineno:
                    return (node.name, item.name)
            return None
    return None


def _functions(obj):
    """The plain functions behind a module attribute or class member (staticmethod, classmethod,
    property, functools wrappers), with the caches to clear."""
    caches = []
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        candidates = [f for f in (obj.fget, obj.fset, obj.fdel) if f is not None]
    else:
        candidates = [obj]
    found = []
    for f in candidates:
        while hasattr(f, "__wrapped__"):
            if hasattr(f, "cache_clear"):
                caches.append(f.cache_clear)
            f = f.__wrapped__
        if hasattr(f, "__code__"):
            found.append(f)
    return found, caches


def swap(module, mutated_source: str, where: tuple[str, ...]) -> None:
    """Put the mutated body of `where` into the live function object of `module`. Raises when the
    swap cannot be exact (the caller then takes the slow path)."""
    namespace = {"__name__": module.__name__, "__file__": module.__file__, "__package__": module.__package__, "__builtins__": builtins}
    exec(compile(mutated_source, module.__file__, "exec"), namespace)  # noqa: S102 - the mutant under test
    if len(where) == 1:
        old, new = module.__dict__[where[0]], namespace[where[0]]
    else:
        old, new = module.__dict__[where[0]].__dict__[where[1]], namespace[where[0]].__dict__[where[1]]
    (old_functions, caches), (new_functions, _) = _functions(old), _functions(new)
    if len(old_functions) != len(new_functions) or not old_functions:
        raise ValueError(f"{'.'.join(where[:2])}: not one function to swap")
    changed = [(o, n) for o, n in zip(old_functions, new_functions) if o.__code__.co_code != n.__code__.co_code
               or o.__code__.co_consts != n.__code__.co_consts or o.__defaults__ != n.__defaults__ or o.__kwdefaults__ != n.__kwdefaults__]
    if not changed:
        raise ValueError(f"{'.'.join(where[:2])}: the mutation changed no function body")
    for o, n in changed:
        o.__code__ = n.__code__  # ValueError when the closures differ: the slow path then judges it
        o.__defaults__, o.__kwdefaults__ = n.__defaults__, n.__kwdefaults__
    for clear in caches:
        clear()


class WarmTests:
    """A parent that has collected `tests` once, forking a child per mutant."""

    def __init__(self, root: Path, module: str, tests: list[str], pytest_args: list[str]):
        import pytest

        self.root, self.module_name, self.tests, self.args = root, module, tests, pytest_args
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            code = pytest.main([*pytest_args, "--collect-only", *tests])
        if code != 0:
            raise RuntimeError(f"collecting {' '.join(tests)} failed (pytest exit {code})")
        __import__(module)
        self.module = sys.modules[module]
        self.timeout = 3600.0
        start = time.monotonic()
        self.covering = self._trace()
        # A mutant that loops forever is killed by its timeout, as cosmic-ray counts it.
        self.timeout = 3 * (time.monotonic() - start) + 60

    def _trace(self) -> dict[int, list[str]]:
        """line -> the tests (node ids, in run order) that execute it in-process: the unmutated
        tests run once in a forked child that records the module's lines per test."""
        with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
            if self._child(None, None, trace_to=out.name) != SURVIVED:
                raise RuntimeError(f"the unmutated tests fail in a forked child: {' '.join(self.tests)}")
            by_test = json.loads(Path(out.name).read_text())
        covering: dict[int, list[str]] = {}
        for node, lines in by_test:
            for line in lines:
                covering.setdefault(line, []).append(node)
        return covering

    def judge(self, original: str, mutated: str, line: int) -> tuple[str, str]:
        """(outcome, how) for the mutant that is on disk now: how is 'fork' or 'fresh'. The fork runs
        the tests that execute the mutated line in-process, or all of them when none does (the
        line may run only in a policy pack's process, which reads the mutant from disk)."""
        where = _definition(original, line)
        if where is not None:
            outcome = self._child(mutated, where, self.covering.get(line))
            if outcome is not None:
                return outcome, "fork"
        return self.fresh(), "fresh"

    def fresh(self) -> str:
        try:
            run = subprocess.run(
                [sys.executable, "-m", "pytest", *self.args, *self.tests],
                cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            return KILLED
        return SURVIVED if run.returncode == 0 else KILLED

    def _child(self, mutated: str | None, where: tuple[str, ...] | None, tests: list[str] | None = None, trace_to: str | None = None) -> str | None:
        """KILLED or SURVIVED; None when the swap was not exact (the slow path decides)."""
        pid = os.fork()
        if pid == 0:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                if mutated is not None:
                    try:
                        swap(self.module, mutated, where)
                    except Exception:  # noqa: BLE001 - not swappable: the fresh process judges it
                        os._exit(77)
                import pytest

                plugins = [] if trace_to is None else [_LineTracer(self.module.__file__, trace_to)]
                os._exit(0 if pytest.main([*self.args, *(tests or self.tests)], plugins=plugins) == 0 else 1)
            finally:
                os._exit(70)
        deadline = time.monotonic() + self.timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return KILLED
            time.sleep(0.02)
        code = os.waitstatus_to_exitcode(status)
        if code in (70, 77):  # not swappable, or the child broke before its tests ran
            return None
        return SURVIVED if code == 0 else KILLED


class _LineTracer:
    """A pytest plugin recording which lines of one file each test executes (in this process)."""

    def __init__(self, path: str, out: str):
        self.path, self.out, self.lines, self.by_test = path, out, set(), []

    def _trace(self, frame, event, arg):
        if frame.f_code.co_filename != self.path:
            return None
        self.lines.add(frame.f_lineno)

        def local(frame, event, arg):
            if event == "line":
                self.lines.add(frame.f_lineno)
            return local

        return local

    @pytest_hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.lines = set()
        sys.settrace(self._trace)
        threading.settrace(self._trace)
        yield
        sys.settrace(None)
        threading.settrace(None)
        self.by_test.append((item.nodeid, sorted(self.lines)))

    def pytest_sessionfinish(self, session, exitstatus):
        Path(self.out).write_text(json.dumps(self.by_test))


@functools.cache
def module_name(relative: str) -> str:
    """The dotted name gpufleet's layout gives a file (pyproject's package-dir)."""
    parts = Path(relative).with_suffix("").parts
    top = {"infra": ("gpufleet",), "components": ("gpufleet", "components"), "policies": ("gpufleet", "policies")}[parts[0]]
    return ".".join([*top, *parts[1:]])
