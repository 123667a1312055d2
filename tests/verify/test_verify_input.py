"""Bad input to `gpufleet verify` keeps the contract: exit 2, one message naming the file (or flag)
and what was expected, no traceback."""

from __future__ import annotations

import json
import os
import threading

import pytest

from tests.conftest import ROOT, run_cli
from tests.verify import fleets
from tests.verify.test_verify_kube import PLAN


def _refused(*argv) -> str:
    code, out, err = run_cli("verify", *argv)
    assert code == 2, (code, out, err)
    assert out == "" and "Traceback" not in err and err.startswith("error: ") and err.count("\n") == 1
    return err


def test_a_kubeconfig_without_the_context(tmp_path):
    with fleets.KubeApi([]) as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig", context="staging")
        err = _refused(PLAN, "--context", "prod", "--kubeconfig", str(kubeconfig))
    assert f"kubeconfig {kubeconfig}: no context 'prod' (it has: staging)" in err


def test_no_kubeconfig_at_all(tmp_path):
    err = _refused(PLAN, "--context", "prod", "--kubeconfig", str(tmp_path / "missing"))
    assert f"kubeconfig {tmp_path / 'missing'}: no such file" in err


def test_a_cluster_that_does_not_answer_is_named(tmp_path):
    with fleets.KubeApi([]) as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
    # The server is gone: the client cannot connect.
    err = _refused(PLAN, "--context", "recorded", "--kubeconfig", str(kubeconfig))
    assert "context 'recorded': nodes: the cluster could not be read" in err


@pytest.mark.parametrize(
    "name, document, said",
    [
        ("configmap.json", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "a ConfigMap object, not a recording verify reads"),
        ("plan.json", json.loads((ROOT / "tests" / "golden" / "ecs-gpu.plan.json").read_text()), "a JSON object with keys cost, outputs, placement"),
        ("list.json", [1, 2], "a JSON list, expected"),
    ],
)
def test_a_recorded_file_of_another_kind(tmp_path, name, document, said):
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / name).write_text(json.dumps(document))
    err = _refused(PLAN, "--from", str(folder))
    assert f"{folder / name}: {said}" in err and "kubectl get nodes,pods,daemonsets -A -o json" in err


def test_a_recording_that_is_not_json(tmp_path):
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "nodes.json").write_text("NAME   STATUS   ROLES\nip-10-0-0-1   Ready   <none>\n")
    err = _refused(PLAN, "--from", str(folder))
    assert f"{folder / 'nodes.json'}: not JSON" in err


def test_an_empty_folder_and_a_missing_one(tmp_path):
    assert "no recording in it" in _refused(PLAN, "--from", str(tmp_path))
    assert "not a folder" in _refused(PLAN, "--from", str(tmp_path / "nowhere"))


def _with_nodes(tmp_path):
    """A recording verify reads, so that what else the folder holds is what is judged."""
    folder = tmp_path / "case"
    folder.mkdir()
    (folder / "nodes.json").write_text(json.dumps({"kind": "List", "items": fleets.p5_fleet_nodes()}))
    return folder


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda f: (f / "more.json").mkdir(), "more.json is a folder: verify does not descend into folders"),
        (lambda f: (f / "notes.md").mkdir(), "notes.md is a folder: verify does not descend into folders"),
        (lambda f: (f / "gone.json").symlink_to(f / "missing.json"), "gone.json is a symlink to {f}/missing.json, which cannot be followed (No such file or directory)"),
        (lambda f: (f / "up.json").symlink_to(f.parent), "up.json is a symlink to {f.parent}, a folder: verify does not descend into folders"),
        (lambda f: os.mkfifo(f / "pipe.json"), "pipe.json is a FIFO (named pipe), not a regular file"),
    ],
    ids=["folder", "folder-named-md", "dangling-symlink", "symlink-to-folder", "fifo"],
)
def test_what_from_does_not_read_is_named_not_skipped(tmp_path, make, said):
    """Issue 58: each of these was passed over in silence while another file was read."""
    folder = _with_nodes(tmp_path)
    make(folder)
    err = _refused(PLAN, "--from", str(folder))
    assert f"--from {folder}: {folder}/{said.format(f=folder)}; verify reads the regular files in the folder itself" in err


def test_every_entry_refused_is_named_in_the_one_message(tmp_path):
    folder = _with_nodes(tmp_path)
    (folder / "a").mkdir()
    os.mkfifo(folder / "b.log")
    err = _refused(PLAN, "--from", str(folder))
    assert f"{folder / 'a'} is a folder" in err and f"{folder / 'b.log'} is a FIFO (named pipe)" in err


def test_a_fifo_is_refused_without_being_opened(tmp_path):
    """Opening a FIFO to read blocks until a writer comes. A guard plays the writer if verify ever
    opens it, so a regression fails here instead of hanging the suite."""
    folder = _with_nodes(tmp_path)
    fifo = folder / "launcher.log"
    os.mkfifo(fifo)
    done, opened = threading.Event(), []

    def guard() -> None:
        while not done.wait(0.05):
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # succeeds only while a reader holds it open
            except OSError:
                continue
            opened.append(True)
            os.close(fd)  # the reader sees end of file and goes on

    thread = threading.Thread(target=guard, daemon=True)
    thread.start()
    try:
        err = _refused(PLAN, "--from", str(folder))
    finally:
        done.set()
        thread.join()
    assert not opened and f"{fifo} is a FIFO (named pipe), not a regular file" in err


def test_a_symlink_to_a_regular_file_is_read(tmp_path):
    folder = tmp_path / "case"
    folder.mkdir()
    recording = tmp_path / "nodes.json"
    recording.write_text(json.dumps({"kind": "List", "items": fleets.p5_fleet_nodes()}))
    (folder / "nodes.json").symlink_to(recording)
    code, out, err = run_cli("verify", PLAN, "--from", str(folder), "--json")
    assert code in (1, 5) and "Traceback" not in err and json.loads(out)["verify"]["findings"], (code, err)


@pytest.mark.parametrize(
    "flags, said",
    [
        ((), "say where the fleet is"),
        (("--from", "x", "--context", "c"), "--from DIR is a recorded fleet: not with --context or --region"),
        (("--context", "c", "--wait", "0"), "--wait 0: expected a number of seconds above 0"),
        (("--context", "c", "--wait", "inf"), "--wait inf: expected a number of seconds above 0 and at most 86400"),
        (("--context", "c", "--wait", "nan"), "--wait nan: expected"),
        (("--kubeconfig", "k", "--region", "r"), "--kubeconfig goes with --context NAME"),
    ],
)
def test_flags(flags, said):
    assert said in _refused(PLAN, *flags)


def test_an_unknown_stack_and_a_plan_that_is_not_one(tmp_path):
    assert "unknown" in _refused("no-such-stack", "--from", str(fleets.STUDY.parent)).lower()
    bad = tmp_path / "plan.json"
    bad.write_text("{}")
    assert str(bad) in _refused(str(bad), "--from", str(fleets.STUDY.parent))
