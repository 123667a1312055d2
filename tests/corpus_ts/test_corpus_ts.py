"""Public TypeScript Pulumi programs (tests/corpus_ts/third_party, each unchanged but for the stack
config its README asks for, with a SOURCE.md), previewed as a new user would: `gpufleet preview
--program DIR`, node running the program's own @pulumi/pulumi. One shared install
(tests/corpus_ts/package.json, made by scripts/prepare-tests in .test-env/ts-corpus) sits in a folder
above each program, where Node and the CLI find it (a monorepo's shape). Each verdict is the one
reviewed by hand in expected.yaml; one the engine does not reach yet is an expected failure named
with the gap, which fails the moment it passes, so its entry is then updated.

ts-node (the one @pulumi/pulumi vendors, 7.0.1) keeps what it compiled in a cache by default, keyed
by the file's text and a digest of the compiler options, which hold the program's absolute paths
(vendor/ts-node@7.0.1/index.js register, readThrough): so a second `pulumi preview` of an unchanged
program neither transpiles nor type-checks it again, and a file that fails its check is never cached.
The tests use that cache as the CLI does, kept inside the shared install (scripts/prepare-tests
removes both together when the lock file changes), with each program at a path named by its content,
so that a later run finds what an earlier one compiled."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import prepared, run_cli
from tests.corpus.review import assert_as_reviewed, assert_reviewed_and_sourced

pytestmark = pytest.mark.slow  # previews of every program, in the install scripts/prepare-tests makes

HERE = Path(__file__).parent
PROGRAMS = sorted(p.name for p in (HERE / "third_party").iterdir() if (p / "Pulumi.yaml").is_file())
EXPECTED = yaml.safe_load((HERE / "expected.yaml").read_text())


@pytest.fixture(scope="module")
def install() -> Path:
    """The shared install (a monorepo's shape): each program is placed beneath it."""
    if shutil.which("node") is None:
        pytest.skip("node is not on this machine: the TypeScript corpus cannot be run here")
    return prepared("ts-corpus")


def _placed(install: Path, name: str) -> Path:
    """The program beneath the install, in a folder named by its files' content: the same path for an
    unchanged program in every run (ts-node's cache key holds it), a new one for a changed program.
    Made whole under another name and renamed, so a run in parallel never reads half a copy."""
    source = HERE / "third_party" / name
    digest = hashlib.sha256()
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(source)}\0".encode())
        digest.update(path.read_bytes())
    folder = install / "programs" / f"{name}-{digest.hexdigest()[:16]}"
    if not folder.exists():
        partial = folder.with_name(f".{folder.name}.{os.getpid()}")
        shutil.copytree(source, partial)
        try:
            partial.rename(folder)
        except OSError:  # another run placed it first
            shutil.rmtree(partial)
    return folder


def test_every_program_is_reviewed_and_sourced():
    assert_reviewed_and_sourced(HERE, PROGRAMS, EXPECTED)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(reason=EXPECTED[n]["gap"], strict=True)) if EXPECTED[n].get("gap") else n for n in PROGRAMS],
)
def test_a_public_typescript_program_previews_as_reviewed(install, name, tmp_path, monkeypatch):
    program = _placed(install, name)
    monkeypatch.setenv("TS_NODE_CACHE_DIRECTORY", str(install / "ts-node-cache"))
    code, out, err = run_cli("preview", "--program", str(program), "--json", "--timeout", "600")
    assert_as_reviewed(EXPECTED[name], code, out, err, tmp_path, name)
