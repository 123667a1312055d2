"""The floors pyproject.toml declares are the versions measured to work: tests/floors/constraints.txt
pins each direct dependency at its floor (and what pip resolved around them), and that set, installed
in a fresh virtualenv, previews every shipped stack to its golden plan and every example program."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.conftest import ROOT, prepared, stacks_unlike_their_goldens

try:
    import tomllib
except ImportError:  # Python 3.10
    from pip._vendor import tomli as tomllib

FLOORS = ROOT / "tests" / "floors" / "constraints.txt"


def _pins(path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return pins


def _release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in re.findall(r"\d+", version)]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def test_each_floor_is_the_version_measured():
    pins = _pins(FLOORS)
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name, floor = re.match(r"([A-Za-z0-9_.-]+)\s*(?:>=|==)\s*([0-9.]+)", requirement).groups()
        key = re.sub(r"[-_.]+", "-", name).lower()
        assert _release(pins[key]) == _release(floor), (requirement, pins[key])


def test_the_pinned_set_is_within_the_floors():
    floors, pinned = _pins(FLOORS), _pins(ROOT / "constraints.txt")
    for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)).lower()
        assert _release(pinned[name]) >= _release(floors[name]), (requirement, pinned[name])


@pytest.mark.slow
def test_the_oldest_versions_allowed_preview_every_stack_as_the_pinned_set_does(tmp_path):
    """The floors as pip found them (scripts/prepare-tests installs them from PyPI before pytest
    starts), not as this machine has them."""
    venv = prepared("floors", "venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    run = subprocess.run([str(venv / "bin" / "gpufleet"), "preview", "--all", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr[-2000:]
    assert stacks_unlike_their_goldens(run.stdout) == []
    for example in sorted(p for p in (ROOT / "examples").iterdir() if (p / "Pulumi.yaml").exists()):
        run = subprocess.run([str(venv / "bin" / "gpufleet"), "preview", "--program", str(example), "--python", str(venv / "bin" / "python")], env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, (example.name, run.stderr[-2000:])


# The pack loads the shipped facts unbuilt (catalog.trust_shipped) and serves Analyze from several
# threads: each builds a facts class on its first model_dump. Eight threads dump every facts object.
_DUMP_IN_THREADS = """
import json, threading
from pydantic import BaseModel
from gpufleet.catalog import catalog
catalog.trust_shipped()
found = []
def collect(value):
    if isinstance(value, BaseModel):
        found.append(value)
        for name in type(value).model_fields:
            collect(getattr(value, name))
    elif isinstance(value, (list, tuple)):
        for item in value: collect(item)
    elif isinstance(value, dict):
        for item in value.values(): collect(item)
collect(catalog.load().facts)
errors, start = [], threading.Barrier(8)
def dump(half):
    start.wait()
    for model in found[half::2]:
        try:
            model.model_dump(exclude_none=True)
        except Exception as err:
            errors.append(f"{type(model).__name__}: {err}")
threads = [threading.Thread(target=dump, args=(i % 2,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({"models": len(found), "errors": errors[:3]}))
"""


@pytest.mark.slow
def test_the_packs_unbuilt_facts_dump_from_many_threads_at_once():
    """pydantic 2.11 (the floors) fails when two threads build deferred classes at once."""
    venv = prepared("floors", "venv")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    run = subprocess.run([str(venv / "bin" / "python"), "-c", _DUMP_IN_THREADS], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["models"] > 100 and result["errors"] == []
