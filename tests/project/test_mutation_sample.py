"""A fixed, seeded sample of mutants of the rule modules must all be killed (scripts/mutation.py runs
the full set; this sample keeps CI within minutes). Mutants are applied in place, one at a time, and
cosmic-ray restores each file before the next."""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
import pytest

pytestmark = pytest.mark.slow  # a quick loop leaves it out: pytest -m 'not slow'

# Three doors: the ECS spec and pack (ecs_gpu_sharing), EC2 data matching (managed_instances), and a
# cloud's spec checks (aks_checks).
MODULES = ["ecs_gpu_sharing", "managed_instances", "aks_checks"]
SAMPLE = [*(a for m in MODULES for a in ("--module", m)), "--sample", "6", "--seed", "2026"]


def _script(name: str):
    """A module of scripts/, which is not a package."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((root / "src").rglob("*.py"))}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A copy of the working tree to write mutants into, as `--jobs` makes, and the environment that
    imports gpufleet from it: the rest of the suite runs beside these tests (pytest -n), importing
    and starting processes from this checkout's src/, which must never hold a mutant."""
    mutation = _script("mutation")
    src = mutation._copy(tmp_path_factory.mktemp("mutation") / "checkout")
    return src.parent, {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))}


def _mutation(checkout: tuple[Path, dict[str, str]], *argv: str, timeout: int) -> subprocess.CompletedProcess:
    root, env = checkout
    return subprocess.run([sys.executable, "scripts/mutation.py", *argv], cwd=root, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_seeded_sample_of_mutants_is_killed(checkout):
    before, checked_out = _digests(checkout[0]), _digests(ROOT)
    assert before == checked_out, "the copy is the working tree"
    run = _mutation(checkout, *SAMPLE, timeout=1200)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = {line.split(":", 1)[0]: line for line in run.stdout.splitlines() if not line.startswith(" ")}
    for module in MODULES:
        # Every mutant of the sample killed, or listed in equivalent.txt with its reason (then not run).
        assert "score 100.0%" in lines[module] and "/6 killed" in lines[module], run.stdout
    assert "0 survivors unexplained" in run.stdout, run.stdout
    assert _digests(checkout[0]) == before, "a mutant was left in place"
    assert _digests(ROOT) == checked_out, "the run wrote into the working tree, not its copy"


def test_a_second_run_in_one_checkout_is_refused(checkout):
    """Two runs writing mutants into one checkout would judge each other's mutants."""
    lock = checkout[0] / ".mutation-run.lock"
    assert not lock.exists()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock.write_text(str(sleeper.pid))  # a run that is still alive
        run = _mutation(checkout, *SAMPLE, timeout=120)
        assert run.returncode == 1 and f"another mutation run (pid {sleeper.pid}) is writing mutants into" in run.stderr
        assert lock.read_text() == str(sleeper.pid)  # its lock is left to it
    finally:
        sleeper.kill()
        sleeper.wait()
    # Its run gone, the lock is taken over, and released when the run ends.
    run = _mutation(checkout, "--module", "quotas", "--sample", "1", timeout=600)
    assert run.returncode == 0 and "quotas: 1/1 killed" in run.stdout, run.stdout + run.stderr
    assert not lock.exists()


def test_an_equivalent_entry_keys_a_line_that_has_a_comment_of_its_own():
    mutation = _script("mutation")
    keys = mutation.equivalent()
    # The key is everything before the reason, the last "  # ": the line's own comment stays in it.
    assert "src/gpufleet/catalog/catalog.py | core/AddNot | if loader is None:  # PyYAML built without libyaml" in keys
    assert not any(k.endswith("#") for k in keys)


def test_modules_are_judged_longest_first_and_a_run_records_its_seconds(tmp_path, monkeypatch):
    mutation = _script("mutation")
    # The longest recorded first; modules without a record last, by name.
    assert mutation.longest_first(["quotas", "zeta", "catalog", "alpha", "diff"], {"quotas": 7, "catalog": 1286, "diff": 912}) == [
        "catalog", "diff", "quotas", "alpha", "zeta",
    ]
    assert set(mutation.recorded_seconds()) <= set(mutation.MODULES)  # the committed record names modules the script judges
    monkeypatch.setattr(mutation, "SECONDS", tmp_path / "seconds.txt")
    mutation.write_seconds({"diff": 900.4, "quotas": 7})
    mutation.write_seconds({"diff": 100.6})  # a later run of one module keeps the others' records
    assert mutation.recorded_seconds() == {"diff": 101.0, "quotas": 7.0}


def test_a_package_s_own_module_is_named_as_the_package():
    """A mutant of a package's __init__.py is loaded under the package's name, or no test ever sees it."""
    mutation_runner = _script("mutation_runner")
    assert mutation_runner.module_name("src/gpufleet/engine/patches/__init__.py") == "gpufleet.engine.patches"
    assert mutation_runner.module_name("src/gpufleet/catalog/generate/__init__.py") == "gpufleet.catalog.generate"
    assert mutation_runner.module_name("src/gpufleet/rules/gpus.py") == "gpufleet.rules.gpus"
