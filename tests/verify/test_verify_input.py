"""Bad input to `gpufleet verify` keeps the contract: exit 2, one message naming the file (or flag)
and what was expected, no traceback."""

from __future__ import annotations

import json

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
