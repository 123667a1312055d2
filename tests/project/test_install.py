"""gpufleet as a distribution: the wheel a user gets (not editable), built offline from the tracked
files and put in a fresh virtualenv with pip --no-index (no registry), puts one package,
`gpufleet`, in site-packages and previews every shipped stack exactly as the checkout does;
the policy pack directory, copied out alone with a virtualenv made from its requirements.txt, starts
as the Pulumi CLI starts it and answers over gRPC.

Hermetic: the wheel is built from the tracked files without build isolation, and the fresh
virtualenvs see the test environment's third-party packages through a .pth file (never its gpufleet,
whose editable finder only a site directory would activate); nothing is downloaded."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    from pip._vendor import tomli as tomllib

from gpufleet.analyzer.client import PolicyPack
from gpufleet.analyzer.pack_dir import DEFAULT_PACK
from gpufleet.analyzer.policy_config import parse
from gpufleet.plans.index import from_plan
from gpufleet.stack.files import stack_names
from tests.conftest import ROOT, stacks_unlike_their_goldens
from tests.policy_helpers import gpu_container, task_definition

pytestmark = pytest.mark.slow  # a quick loop leaves it out: pytest -m 'not slow'

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
STACKS = stack_names(ROOT / "stacks")


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "GPUFLEET_UPDATE"))}
    return env


def _run(argv: list[str], cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, cwd=cwd, env=_clean_env(), capture_output=True, text=True)
    if check:
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-4000:])
    return done


def _venv(path: Path) -> Path:
    """A virtualenv without pip whose imports of third-party packages resolve to this environment's."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(path)], cwd=path.parent)
    site = next((path / "lib").glob("python3*/site-packages"))
    (site / "_gpufleet_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path / "bin" / "python"


def _pip_install(python: Path, *args: str) -> None:
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-index", "--no-deps", "--ignore-installed", *args], cwd=python.parent)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of the tracked files (what a clone has), built as pip builds it for a user, offline."""
    top = tmp_path_factory.mktemp("build")
    source = top / "source"
    tracked = _run(["git", "ls-files", "-z"], cwd=ROOT).stdout.split("\0")
    for name in filter(None, tracked):
        # The links a clone has (src/gpufleet/stacks, the pack's shell) stay links, as git keeps them.
        if (ROOT / name).is_symlink():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).symlink_to(os.readlink(ROOT / name))
        elif (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(top / "dist"), str(source)], cwd=top)
    [built] = (top / "dist").glob("gpufleet-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed; returns its bin folder."""
    home = tmp_path_factory.mktemp("installed")
    python = _venv(home / "venv")
    _pip_install(python, str(wheel))
    return python.parent


def test_every_folder_of_code_is_a_package_the_wheel_finds():
    """setuptools finds the packages under src/ by their __init__.py: a folder of code without one
    would be missing from the wheel. Nothing maps a package onto another folder."""
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert setuptools["packages"] == {"find": {"where": ["src"]}} and "package-dir" not in setuptools
    for module in (ROOT / "src").rglob("*.py"):
        assert (module.parent / "__init__.py").is_file() or module.name == "__main__.py", module


def test_the_pack_names_gpufleet_at_the_distributions_version():
    manifest = (ROOT / "policies" / "PulumiPolicy.yaml").read_text()
    assert re.search(rf"^version: {re.escape(VERSION)}$", manifest, re.M)
    assert re.search(r"^\s+virtualenv: venv$", manifest, re.M), "the pack's own virtualenv, not the repository's"
    pins = [line for line in (ROOT / "policies" / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")]
    assert pins == [f"gpufleet=={VERSION}"]


def test_only_gpufleet_lands_in_site_packages(installed):
    site = next((installed.parent / "lib").glob("python3*/site-packages"))
    assert sorted(p.name for p in site.iterdir()) == sorted(["_gpufleet_test_dependencies.pth", "gpufleet", f"gpufleet-{VERSION}.dist-info"])
    python = str(installed / "python")
    for name in ("components", "infra", "policies", "stacks"):
        done = _run([python, "-c", f"import {name}"], cwd=installed, check=False)
        assert done.returncode == 1 and f"No module named '{name}'" in done.stderr
    where = _run([python, "-c", "import gpufleet.catalog as c, gpufleet.analyzer.pack_dir as a; print(c.__file__); print(a.DEFAULT_PACK)"], cwd=installed).stdout
    assert all(line.startswith(str(site)) for line in where.split())


def test_the_installed_cli_previews_each_shipped_stack_as_the_checkout_does(installed):
    done = _run([str(installed / "gpufleet"), "preview", "--all", "--json"], cwd=installed)
    assert sorted(json.loads(done.stdout)["stacks"]) == sorted(STACKS)
    assert stacks_unlike_their_goldens(done.stdout) == []


def test_the_pack_published_alone_answers_over_grpc(wheel, tmp_path):
    """`pulumi policy publish` uploads the pack directory alone; the CLI makes its virtualenv from
    requirements.txt. Here the pin resolves to the wheel."""
    pack = tmp_path / "gpufleet-guard"
    shutil.copytree(ROOT / "policies", pack, ignore=shutil.ignore_patterns("__pycache__", "venv"))
    python = _venv(pack / "venv")
    _pip_install(python, "--find-links", str(wheel.parent), "-r", str(pack / "requirements.txt"))
    where = _run([str(python), "-c", "import gpufleet.policies; print(gpufleet.policies.__file__)"], cwd=pack).stdout
    assert where.startswith(str(pack / "venv"))
    bad = task_definition("too-many", [gpu_container("train", 16)], "attribute:ecs.instance-type == g5.xlarge")
    with PolicyPack(pack, project="gpufleet", stack="standalone") as standalone, PolicyPack(DEFAULT_PACK, project="gpufleet", stack="standalone") as shipped:
        standalone.wait_ready()
        shipped.wait_ready()
        # GetAnalyzerInfo: the same pack, by the interpreter PulumiPolicy.yaml names.
        assert standalone.process.args[0] == str(python)
        assert (standalone.name, [p.name for p in standalone.policies]) == (shipped.name, [p.name for p in shipped.policies])
        # Analyze: the same verdict on a task definition that asks a g5.xlarge (1 GPU) for 16.
        verdicts = [[(f.policy, f.message) for f in p.judge(parse({}), from_plan({"resources": [bad]})).findings] for p in (standalone, shipped)]
    assert verdicts[0] == verdicts[1] and any("16" in message for _, message in verdicts[0])


@pytest.mark.parametrize("example", sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir()))
def test_the_installed_cli_previews_each_example_program(installed, example):
    done = _run([str(installed / "gpufleet"), "preview", "--program", str(ROOT / "examples" / example), "--python", str(installed / "python"), "--json"], cwd=installed)
    plan = json.loads(done.stdout)
    assert plan["project"] == example and plan["policy"]["pack"] == "gpufleet-guard"
    assert not [v for v in plan["policy"]["violations"] if v["level"] == "mandatory"]
