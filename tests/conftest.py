"""Shared helpers: run the CLI in-process, load shipped stacks, write variants of them."""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gpufleet.cli.main import main
from tests.policy_helpers import judge  # noqa: F401  (session fixture: the shipped pack over gRPC)

ROOT = Path(__file__).resolve().parent.parent
# Lifecycles (AMI families, Kubernetes versions) are judged against a day: the suite judges against
# one fixed day, so that no golden and no finding changes when the calendar does.
FROZEN_TODAY = "2026-11-26"
os.environ["GPUFLEET_TODAY"] = FROZEN_TODAY
# Prices are the shipped snapshot's in every test: a snapshot `gpufleet prices update` wrote to the
# developer's cache is never read (a test of the cache points GPUFLEET_CACHE at its own folder).
os.environ["GPUFLEET_CACHE"] = os.path.join(tempfile.gettempdir(), f"gpufleet-tests-no-price-cache-{os.getpid()}")


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):  # once, in the process that starts pytest-xdist's workers
        _compile_sources()
    # The suite starts hundreds of Python processes (the CLI, the pack, hosted programs): without
    # bytecode each compiles gpufleet's modules again (0.3 s of a 1.1 s ecs-gpu preview, measured),
    # and every worker rewrites every test module's asserts again. PYTHONDONTWRITEBYTECODE (set on
    # these machines) would forbid both: bytecode goes where Python puts it, in the ignored __pycache__.
    sys.dont_write_bytecode = False


def _compile_sources() -> None:
    """gpufleet's and the pack's modules compiled where a process the suite starts finds them, checked
    by the source's hash rather than its time: a mutant written and restored within one second, at
    the same size (scripts/mutation.py), is never mistaken for the file it replaced."""
    import importlib.util
    import py_compile

    for folder in ("src", "policies"):
        for source in (ROOT / folder).rglob("*.py"):
            if "venv" in source.relative_to(ROOT).parts:
                continue
            cached = importlib.util.cache_from_source(str(source))
            try:
                with open(cached, "rb") as f:
                    head = f.read(16)
            except OSError:
                head = b""
            # A checked hash-based .pyc (PEP 552): magic number, flags 0b11, the source's hash.
            if head != importlib.util.MAGIC_NUMBER + (3).to_bytes(4, "little") + importlib.util.source_hash(source.read_bytes()):
                py_compile.compile(str(source), cached, quiet=2, invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def fresh_python(script: str, *argv: str, stdin: str = "", timeout: int = 300) -> subprocess.CompletedProcess:
    """`script` in a new interpreter at the repository's root: for what only a clean import state shows
    (what importing patches, which modules a package loads)."""
    return subprocess.run([sys.executable, "-c", script, *argv], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=timeout)


def assert_golden(golden: Path, text: str) -> None:
    """`text` equals the golden file; GPUFLEET_UPDATE_GOLDEN=1 rewrites it after an intended change
    (then read the diff). The file is replaced whole: a test reading it in another worker (pytest -n)
    sees the old text or the new, never a part."""
    if os.environ.get("GPUFLEET_UPDATE_GOLDEN"):
        partial = golden.with_name(f".{golden.name}.{os.getpid()}")
        partial.write_text(text)
        partial.replace(golden)
    assert text == golden.read_text()


def check_golden(plan: dict, stack: str) -> None:
    """The plan equals tests/golden/<stack>.plan.json (assert_golden)."""
    assert_golden(ROOT / "tests" / "golden" / f"{stack}.plan.json", json.dumps(plan, indent=2, sort_keys=True) + "\n")


def stacks_unlike_their_goldens(all_json: str) -> list[str]:
    """The shipped stacks whose plan in `preview --all --json`'s output is not its golden (a stack
    missing from the output counts): one process previews them all, at a fraction of a cold preview each."""
    from gpufleet.stack.files import stack_names

    plans = json.loads(all_json)["stacks"]
    return [
        stack
        for stack in stack_names(ROOT / "stacks")
        if stack not in plans
        or json.dumps(plans[stack], indent=2, sort_keys=True) + "\n" != (ROOT / "tests" / "golden" / f"{stack}.plan.json").read_text()
    ]


def ecs_registered(instance_type: str) -> dict:
    """What one instance of the type registers with ECS (the catalog's EC2 data, less the OS share)."""
    from gpufleet.catalog import catalog
    from gpufleet.simulate import node_capacity

    cat = catalog.load()
    return node_capacity.ecs_registered(cat.find(instance_type), cat.facts.memory_overhead)


def _preview_json(*argv: str) -> str:
    code, out, err = run_cli("preview", *argv, "--json")
    assert code == 0, err + out[-4000:]
    return out


def preview_plan(*argv: str) -> dict:
    return json.loads(_preview_json(*argv))


_shipped_json = functools.cache(_preview_json)


def shipped_plan(stack: str) -> dict:
    """A shipped stack's plan, previewed once per test process (each worker of pytest -n) and handed
    out as a fresh copy the caller may edit. Only for what reads the stack as shipped: a test that
    patches gpufleet or its environment previews for itself (preview_plan)."""
    return json.loads(_shipped_json(stack))


def plans_of(stacks: tuple[str, ...]):
    """A module fixture `plans`: each shipped stack's plan (shipped_plan) for the module's tests."""

    @pytest.fixture(scope="module")
    def plans() -> dict[str, dict]:
        return {stack: shipped_plan(stack) for stack in stacks}

    return plans


def golden_plan(stack: str):
    """A module fixture `plan` (the shipped stack's plan, shipped_plan) and the test that it equals
    its golden file."""

    @pytest.fixture(scope="module")
    def plan() -> dict:
        return shipped_plan(stack)

    def test_plan_matches_golden(plan):
        check_golden(plan, stack)

    return plan, test_plan_matches_golden


def inputs_by_name(plan: dict, type_token: str) -> dict[str, dict]:
    """The inputs of a plan's resources of one type, by resource name."""
    return {r["name"]: r["inputs"] for r in plan["resources"] if r["type"] == type_token}


@pytest.fixture
def stack_variant(tmp_path):
    """Write a copy of a shipped stack with `edit(config)` applied; returns the file path."""

    def make(edit, stack: str = "ecs-gpu", text: str | None = None) -> Path:
        yaml = YAML(typ="rt")
        doc = yaml.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
        edit(doc["config"])
        path = tmp_path / f"Pulumi.{stack}-variant.yaml"
        with path.open("w") as fh:
            yaml.dump(doc, fh)
        return path

    return make


def spec_errors(path) -> str:
    """The stderr of a preview of the stack file at `path`, which must stop at exit 2 with nothing on stdout."""
    code, out, err = run_cli("preview", "--config-file", str(path))
    assert code == 2, (out, err)
    assert out == ""
    assert "Traceback" not in err
    return err


def _path(path: str) -> list:
    return [int(p) if p.isdigit() else p for p in path.replace("[", ".").replace("]", "").split(".")]


def at(config: dict, path: str):
    """The value at a stack-file path as the errors name it: `gpufleet:aks.nodePools[0]`."""
    for part in _path(path):
        config = config[part]
    return config


def set_at(config: dict, path: str, value) -> None:
    *parents, last = _path(path)
    for part in parents:
        config = config[part]
    config[last] = value


@pytest.fixture
def refused(stack_variant):
    """`refused(stack, path, value)`: the exit-2 error of a shipped stack with one value set at a
    stack-file path, written as the errors write it."""

    def run(stack: str, path: str, value) -> str:
        return spec_errors(stack_variant(lambda c: set_at(c, path, value), stack))

    return run


def refused_cases(table: dict[str, tuple]):
    """A test over a table of bad values, one case a row: name -> (stack, the stack-file path set,
    its value, the texts the error says)."""

    @pytest.mark.parametrize(("stack", "path", "value", "says"), table.values(), ids=table.keys())
    def test_refused(refused, stack, path, value, says):
        err = refused(stack, path, value)
        for text in says:
            assert text in err

    return test_refused


def prepared(*parts: str) -> Path:
    """A folder scripts/prepare-tests made before pytest started (tests never install packages);
    the test is skipped, naming the script, where it was not run."""
    path = ROOT / ".test-env"
    for part in parts:
        path = path / part
    if not path.exists():
        pytest.skip(f"{path.relative_to(ROOT)} is not prepared: run scripts/prepare-tests first (CI does)")
    return path
