"""Judging one mutant quickly: a warm pytest process that forks a child per mutant.

The parent imports the tests once (pytest's collection, in-process, traced: the module's lines that
run while tests are collected are remembered), and a first forked child runs them unmutated,
recording which tests execute each line of the module and how long each test takes; the Python
processes those tests start (a policy pack, the CLI) record the lines they run too, per test
(mutation_trace/sitecustomize.py). For each mutant, the mutated file is written in place (so a
policy pack the tests start, a process of its own, reads it too), and a forked child swaps the
mutated function's code into the module it already imported, then runs the tests that executed the
mutated line with -x: those that ran it in-process, then those whose processes ran it, each group
cheapest first. Import and collection are paid once per module instead of once per mutant, and a
survivor costs the tests that reach its line, not every test that starts a pack.

The fork is trusted only where the swap is exact: a mutation inside one function or method body,
whose code object can be replaced in place (every reference to the function sees it), and that
body did not run while the parent collected the tests (a value computed then, a parametrize list or
a cache, would still hold the original's result). Anything else (a module constant, a class
attribute, a decorator, a dataclass or pydantic field, a function run at collection) takes the slow
path: a fresh pytest process over the file on disk, as cosmic-ray itself does.
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import json
import mmap
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from pytest import hookimpl as pytest_hookimpl

KILLED, SURVIVED = "killed", "survived"


def _definition(source: str, line: int) -> tuple[tuple[str, ...], range] | None:
    """The function (name,) or method (class, name) whose definition holds `line`, with the lines
    of its body; None when the line belongs to anything else (module or class level, a decorator)."""
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            return (node.name,), range(node.body[0].lineno, node.end_lineno + 1)
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= node.end_lineno:
            for item in node.body:
                # A def's lineno is its `def` line: its decorators, above it, fall outside.
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.lineno <= line <= item.end_lineno:
                    return (node.name, item.name), range(item.body[0].lineno, item.end_lineno + 1)
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
    """One pytest session that has collected `tests` (without running them), forking a child per
    mutant that runs the chosen items of that session: no child collects again.

    `WarmTests.run(root, relative, tests, args, body)` collects, traces the unmutated tests, calls
    `body(warm)` from inside the session (where `warm.judge` may be called) and returns its result."""

    def __init__(self, root: Path, relative: str, tests: list[str], pytest_args: list[str], session, tracer: _LineTracer):
        module = module_name(relative)
        self.root, self.tests, self.args = root, tests, pytest_args
        self.session, self.tracer = session, tracer
        self.items = {item.nodeid: item for item in session.items}
        # Lines run at import or collection: a def or class statement runs then, a body should not.
        self.collected = set(tracer.lines)
        __import__(module)
        self.module = sys.modules[module]
        self.timeout = 3600.0
        start = time.monotonic()
        self.covering = self._trace()
        self.baseline_seconds = time.monotonic() - start
        # A mutant that loops forever is killed by its timeout, as cosmic-ray counts it.
        self.timeout = 3 * self.baseline_seconds + 60

    @staticmethod
    def run(root: Path, relative: str, tests: list[str], pytest_args: list[str], body):
        import pytest

        driver = _Driver(root, relative, tests, pytest_args, body)
        # Traced from the start (conftest, imports, collection) until the run loop: see `collected`.
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()), driver.tracer.tracing():
            code = pytest.main([*pytest_args, *tests], plugins=[driver.tracer, driver])
        if driver.error is not None:
            raise driver.error
        if not driver.done:
            raise RuntimeError(f"collecting {' '.join(tests)} failed (pytest exit {code})")
        return driver.result

    def _trace(self) -> dict[int, list[str]]:
        """line -> the tests (node ids) that may execute it: those that run it in-process, then those
        whose processes (a policy pack, the CLI) ran it, then those that started a process that could
        not record, each group cheapest first. The unmutated tests run once in a forked child that
        records, per test, the module's lines it ran (in-process and in the processes it started,
        scripts/mutation_trace/), its time and whether it started a process that did not record.
        A killed mutant usually fails its first test, so the cheapest tests go first."""
        with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
            if self._child(None, None, list(self.items), trace_to=out.name) != SURVIVED:
                raise RuntimeError(f"the unmutated tests fail in a forked child: {' '.join(self.tests)}")
            by_test = sorted(json.loads(Path(out.name).read_text()), key=lambda t: t[2])
        self.untraced = [node for node, _, _, _, untraced in by_test if untraced]
        covering: dict[int, dict[str, None]] = {}  # ordered sets
        for group in (1, 3):  # in-process lines first, then the processes' lines
            for test in by_test:
                for line in test[group]:
                    covering.setdefault(line, {})[test[0]] = None
        per_file: dict[str, float] = {}
        for node, _, seconds, _, _ in by_test:
            per_file[node.split("::", 1)[0]] = per_file.get(node.split("::", 1)[0], 0.0) + seconds
        self.tests = sorted(self.tests, key=lambda f: per_file.get(f, 0.0))  # the fresh path: -x, cheapest file first
        return {line: [*nodes, *(n for n in self.untraced if n not in nodes)] for line, nodes in covering.items()}

    def judge(self, original: str, mutated: str, line: int) -> tuple[str, str]:
        """(outcome, how) for the mutant that is on disk now: how is 'fork' or 'fresh'. The fork runs
        the tests that may execute the mutated line (see _trace)."""
        found = _definition(original, line)
        if found is not None and self.collected.isdisjoint(found[1]):
            # A line no test was seen to run can run only in a process that could not record.
            outcome = self._child(mutated, found[0], self.covering.get(line, self.untraced))
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

    def _child(self, mutated: str | None, where: tuple[str, ...] | None, tests: list[str], trace_to: str | None = None) -> str | None:
        """KILLED or SURVIVED; None when the swap was not exact (the slow path decides)."""
        if not tests:
            return SURVIVED  # no test can execute the mutated line
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
                if trace_to is not None:
                    self.tracer.record(trace_to)
                os._exit(self._run_items([self.items[n] for n in tests]))
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
            time.sleep(0.01)
        code = os.waitstatus_to_exitcode(status)
        if code in (70, 77):  # not swappable, or the child broke before its tests ran
            return None
        return SURVIVED if code == 0 else KILLED

    def _run_items(self, items: list) -> int:
        """Run items of the live session as pytest's own loop does (fixtures set up and torn down
        around them, reports through the hooks); 1 at the first failure, after tearing down."""
        session = self.session
        failed = 0
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.testsfailed or session.shouldfail or session.shouldstop:
                failed = 1
                break
        session._setupstate.teardown_exact(None)  # the fixtures' finalizers: a pack process is stopped
        self.tracer.finish()
        return failed


class _Driver:
    """The plugin through which WarmTests takes over pytest's run loop after collection."""

    def __init__(self, root: Path, relative: str, tests: list[str], pytest_args: list[str], body):
        self.root, self.relative, self.tests, self.args, self.body = root, relative, tests, pytest_args, body
        self.tracer = _LineTracer(str(root / relative))
        self.result, self.error, self.done = None, None, False

    def pytest_runtestloop(self, session):
        sys.settrace(None)  # collection is over; the children must not inherit the tracer
        threading.settrace(None)
        if session.testsfailed:  # collection errors
            return None
        try:
            warm = WarmTests(self.root, self.relative, self.tests, self.args, session, self.tracer)
            self.result = self.body(warm)
            self.done = True
        except BaseException as e:  # noqa: BLE001 - handed back to WarmTests.run's caller
            self.error = e
        return True


class _LineTracer:
    """A pytest plugin recording which lines of one file each test executes (in this process)."""

    def __init__(self, path: str):
        self.out: str | None = None  # where a recording child writes what it recorded
        self.lines, self.by_test = set(), []
        self.fixture_lines: dict[str, set[int]] = {}
        self.fixture_spawns: set[str] = set()
        self.fixture_seconds: dict[str, float] = {}
        self.in_fixtures = 0.0
        self.recording = False
        self._page: mmap.mmap | None = None  # the running test's tag, read by the processes it starts
        self._processes: str | None = None  # where those processes write what they ran
        # A copy made by `mutation.py --jobs` imports the file through a symlinked package folder.
        real = os.path.realpath(path)
        self._real, self._files = real, {}

    def _trace(self, frame, event, arg):
        # Called for every call in the process: one dict lookup for the files already seen.
        filename = frame.f_code.co_filename
        ours = self._files.get(filename)
        if ours is None:
            ours = self._files[filename] = os.path.realpath(filename) == self._real
        if not ours:
            return None
        self.lines.add(frame.f_lineno)

        def local(frame, event, arg):
            if event == "line":
                self.lines.add(frame.f_lineno)
            return local

        return local

    @contextmanager
    def tracing(self):
        sys.settrace(self._trace)
        threading.settrace(self._trace)
        try:
            yield
        finally:
            sys.settrace(None)
            threading.settrace(None)

    @contextmanager
    def _noting_spawns(self, spawned: list):
        """Processes started inside go to `spawned`, and not to an enclosing test's list: a fixture's
        process is the fixture's (its tag is the one the process records under)."""
        outer = subprocess.Popen.__init__
        popen_init = getattr(outer, "unpatched", outer)

        def noting(popen, *args, **kwargs):
            spawned.append(True)
            popen_init(popen, *args, **kwargs)

        noting.unpatched = popen_init
        subprocess.Popen.__init__ = noting
        try:
            yield
        finally:
            subprocess.Popen.__init__ = outer

    def record(self, out: str) -> None:
        """Record from now on (a forked child's traced run), into `out`; the Python processes the
        tests start record too (scripts/mutation_trace/sitecustomize.py)."""
        self.out, self.recording = out, True
        self._processes = tempfile.mkdtemp(prefix="gpufleet-mutation-trace-")
        tag = Path(self._processes) / "tag"
        tag.write_bytes(bytes(64))
        with tag.open("r+b") as fh:
            self._page = mmap.mmap(fh.fileno(), 64)
        os.environ["GPUFLEET_MUTATION_TRACE"] = json.dumps({"file": self._real, "tag": str(tag), "out": self._processes})
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent / "mutation_trace"), os.environ.get("PYTHONPATH")]))

    @contextmanager
    def _tagged(self, tag: str):
        outer, started = self._page[:64], os.environ.get("GPUFLEET_MUTATION_TAG", "")
        self._page[:64] = tag.encode()[:64].ljust(64, b"\0")
        os.environ["GPUFLEET_MUTATION_TAG"] = tag
        try:
            yield
        finally:
            self._page[:64] = outer
            os.environ["GPUFLEET_MUTATION_TAG"] = started

    @pytest_hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if not self.recording:
            yield
            return
        self.lines, self.in_fixtures = set(), 0.0
        spawned: list = []
        start = time.perf_counter()
        with self._noting_spawns(spawned), self.tracing(), self._tagged(f"t{len(self.by_test)}"):
            yield
        own = time.perf_counter() - start - self.in_fixtures
        self.by_test.append((item.nodeid, self.lines, own, bool(spawned), list(item.fixturenames)))

    @pytest_hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        if not self.recording:
            yield
            return
        # A fixture shared by several tests runs in the first one's protocol only: its lines and
        # the processes it starts belong to every test that uses it.
        outer, self.lines = self.lines, set()
        spawned: list = []
        start = time.perf_counter()
        with self._noting_spawns(spawned), self._tagged(f"f:{fixturedef.argname}"):
            yield
        seconds = time.perf_counter() - start
        self.in_fixtures += seconds
        self.fixture_seconds[fixturedef.argname] = max(seconds, self.fixture_seconds.get(fixturedef.argname, 0.0))
        self.fixture_lines.setdefault(fixturedef.argname, set()).update(self.lines)
        if spawned:
            self.fixture_spawns.add(fixturedef.argname)
        self.lines = outer | self.lines

    def _process_lines(self) -> tuple[set[str], dict[str, set[int]]]:
        """The tags under which traced processes started, and the lines they ran under each tag."""
        started: set[str] = set()
        lines: dict[str, set[int]] = {}
        for path in Path(self._processes).iterdir():
            if path.name == "tag":
                continue
            for record in path.read_text().splitlines():
                kind, _, rest = record.partition(" ")
                if kind == "S":
                    started.add(rest)
                elif kind == "L":
                    tag, _, line = rest.rpartition(" ")
                    lines.setdefault(tag, set()).add(int(line))
        return started, lines

    def finish(self):
        if not self.recording:
            return
        started, process_lines = self._process_lines()
        shutil.rmtree(self._processes, ignore_errors=True)
        tests = []
        for i, (node, lines, seconds, spawned, fixtures) in enumerate(self.by_test):
            tags = [f"t{i}", *(f"f:{name}" for name in fixtures)]
            for name in fixtures:
                lines |= self.fixture_lines.get(name, set())
            elsewhere = set().union(*(process_lines.get(tag, set()) for tag in tags))
            # A process that did not record (not Python, or started without the environment) may
            # have run any line: such a test judges every mutant that reaches no test in-process.
            untraced = (spawned and f"t{i}" not in started) or any(
                name in self.fixture_spawns and f"f:{name}" not in started for name in fixtures
            )
            # Run alone, a test sets up every fixture it uses: that is its cost.
            cost = seconds + sum(self.fixture_seconds.get(name, 0.0) for name in fixtures)
            tests.append((node, sorted(lines), cost, sorted(elsewhere), untraced))
        Path(self.out).write_text(json.dumps(tests))


@functools.cache
def module_name(relative: str) -> str:
    """The dotted name of a file under src/ (a folder is its import path)."""
    parts = Path(relative).with_suffix("").parts
    if parts[-1] == "__init__":  # a package's own module is the package
        parts = parts[:-1]
    assert parts[0] == "src", relative
    return ".".join(parts[1:])

