"""Public TypeScript Pulumi programs (tests/corpus_ts/third_party, each unchanged but for the stack
config its README asks for, with a SOURCE.md), previewed as a new user would: `gpufleet preview
--program DIR`, node running the program's own @pulumi/pulumi. One shared install
(tests/corpus_ts/package.json, made by scripts/prepare-tests in .test-env/ts-corpus) sits in a folder
above each program, where Node and the CLI find it (a monorepo's shape). Each verdict is the one
reviewed by hand in expected.yaml; one the engine does not reach yet is an expected failure named
with the gap, which fails the moment it passes, so its entry is then updated."""

from __future__ import annotations

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
def workspace(tmp_path_factory) -> Path:
    """A folder whose node_modules is the shared install: each program is copied beneath it."""
    if shutil.which("node") is None:
        pytest.skip("node is not on this machine: the TypeScript corpus cannot be run here")
    top = tmp_path_factory.mktemp("ts-corpus")
    (top / "node_modules").symlink_to(prepared("ts-corpus", "node_modules"))
    return top


def test_every_program_is_reviewed_and_sourced():
    assert_reviewed_and_sourced(HERE, PROGRAMS, EXPECTED)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(reason=EXPECTED[n]["gap"], strict=True)) if EXPECTED[n].get("gap") else n for n in PROGRAMS],
)
def test_a_public_typescript_program_previews_as_reviewed(workspace, name, tmp_path):
    program = workspace / name
    if not program.exists():
        shutil.copytree(HERE / "third_party" / name, program)
    code, out, err = run_cli("preview", "--program", str(program), "--json", "--timeout", "600")
    assert_as_reviewed(EXPECTED[name], code, out, err, tmp_path, name)
