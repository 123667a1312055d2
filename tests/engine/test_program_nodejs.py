"""A Node.js program (runtime: nodejs) goes through the same monitor: gpufleet runs the program's own
@pulumi/pulumi runner with node, as the nodejs language host does. Its install (npm, about 85 MB)
is this test's, in a temporary copy of tests/engine/nodejs_program."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import prepared, run_cli

pytestmark = pytest.mark.slow  # a node program's previews

PROGRAM = __import__("pathlib").Path(__file__).with_name("nodejs_program")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """A copy of the program with the packages scripts/prepare-tests installed for it."""
    if shutil.which("node") is None:
        pytest.skip("node is not on this machine: the nodejs runtime cannot be run here")
    prepared_program = prepared("nodejs_program")
    folder = tmp_path_factory.mktemp("node") / "prog"
    shutil.copytree(PROGRAM, folder)
    (folder / "node_modules").symlink_to(prepared_program / "node_modules")
    return folder


def test_a_nodejs_program_previews_through_the_same_monitor(program):
    code, out, err = run_cli("preview", "--program", str(program), "--json", "--no-policy")
    assert code == 0, err
    plan = json.loads(out)
    [web] = [r for r in plan["resources"] if r["name"] == "web"]
    assert web["urn"] == "urn:pulumi:dev::nodeprog::kubernetes:apps/v1:Deployment::web"
    assert web["inputs"]["spec"]["replicas"] == 2 and web["inputs"]["metadata"]["name"].startswith("web-")
    assert plan["outputs"] == {"urn": web["urn"]}


def test_a_nodejs_program_that_throws_is_exit_2_with_its_message(program, tmp_path):
    failing = tmp_path / "prog"
    shutil.copytree(program, failing, symlinks=True)
    (failing / "Pulumi.dev.yaml").write_text('config:\n  nodeprog:replicas: "2"\n  nodeprog:fail: "on purpose"\n')
    code, _, err = run_cli("preview", "--program", str(failing), "--no-policy")
    assert code == 2 and "Traceback" not in err
    assert "the program raised an error:" in err and "asked to fail: on purpose" in err


def test_a_nodejs_program_without_its_packages_is_exit_2(tmp_path):
    bare = tmp_path / "prog"
    shutil.copytree(PROGRAM, bare)
    code, _, err = run_cli("preview", "--program", str(bare), "--no-policy")
    assert code == 2 and "no node_modules/@pulumi/pulumi/cmd/run (install the program's packages first:" in err, err
