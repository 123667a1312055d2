"""What a cold preview loads and starts: only the clouds the stack uses, and a policy pack that is
started early is stopped on every way out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpufleet.analyzer import pack_process
from gpufleet.stack import files as stackfile
from gpufleet.stack.spec import FleetSpec, SpecError, decode_config, load_spec, spec_model
from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.slow  # a quick loop leaves it out: pytest -m 'not slow'

# What each fleet key loads that no other needs: its provider SDK, its own components and checks.
# (pulumi_aws lists every submodule in sys.modules lazily, so EKS is told by its component; every
# platform's record, src/gpufleet/<platform>/platform.py, is loaded, and loads nothing of its own.)
_ONLY = {
    key: [*sdk, f"gpufleet.{key}.{fleet}", f"gpufleet.{key}.checks", f"gpufleet.{key}.args"]
    for key, sdk, fleet in (
        ("ecs", [], "gpu_cluster"),
        ("eks", [], "eks_fleet"),
        ("ack", ["pulumi_alicloud"], "ack_fleet"),
        ("gke", ["pulumi_gcp"], "gke_fleet"),
        ("aks", ["pulumi_azure"], "aks_fleet"),
    )
}
_STACKS = {"ecs-gpu": "ecs", "eks-g5-timeslice": "eks", "ack-shared-gpu": "ack", "gke-l4-timeshare": "gke", "aks-a100-mig": "aks"}


@pytest.mark.parametrize("stack", sorted(_STACKS))
def test_a_preview_imports_only_the_clouds_of_its_stack(stack):
    script = (
        "import json, sys\n"
        "from gpufleet.cli.main import main\n"
        f"code = main(['preview', {stack!r}, '--no-policy', '--json'])\n"
        "sys.stderr.write(json.dumps([code, sorted(sys.modules)]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    code, modules = json.loads(run.stderr.strip().splitlines()[-1])
    assert code == 0
    loaded = {key for key, names in _ONLY.items() if any(m == n or m.startswith(n + ".") for m in modules for n in names)}
    assert loaded == {_STACKS[stack]}
    # The engine loads the SDKs' packages lean: the modules of ec2 (180) and Kubernetes's core/v1
    # (50) the stack uses, not all of them.
    ec2 = [m for m in modules if m.startswith("pulumi_aws.ec2.")]
    assert len(ec2) < 30 and "pulumi_aws.ec2.vpn_connection" not in ec2
    assert "pulumi_kubernetes.core.v1.Binding" not in modules


def test_the_spec_of_one_fleet_validates_as_the_whole_model_does():
    config = decode_config(stackfile.load(stackfile.stack_path("ecs-gpu")).pulumi_config())
    narrow = spec_model(frozenset({"ecs"}))
    assert narrow.model_json_schema()["properties"]["aks"]["type"] == "null"
    assert "AksFleetArgs" in str(FleetSpec.model_json_schema()["properties"]["aks"])
    assert narrow.model_validate(config).model_dump() == FleetSpec.model_validate(config).model_dump()
    # A key of another fleet is validated by that fleet's own model, not refused as absent-only.
    with pytest.raises(SpecError) as err:
        load_spec({**config, "aks": {"cluster": 1}})
    assert {issue.field[:2] for issue in err.value.issues} >= {("aks", "cluster")}
    assert all(issue.rule != "none-required" for issue in err.value.issues)


def test_an_invalid_spec_starts_no_pack_and_a_preview_stops_its_pack(tmp_path, monkeypatch):
    started: list[pack_process.PackProcess] = []
    real = pack_process.PackProcess.__init__

    def record(self, *args, **kwargs):
        real(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(pack_process.PackProcess, "__init__", record)
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text("config:\n  gpufleet:region: us-east-1\n  gpufleet:ecs:\n    clusterName: ml\n    capacityProviders: 3\n")
    code, _, err = run_cli("preview", "--config-file", str(stack))
    assert code == 2 and "capacityProviders" in err
    assert started == []
    code, _, err = run_cli("preview", "ecs-gpu", "--json")
    assert code == 0, err
    assert len(started) == 1 and started[0].process.poll() is not None


def test_the_command_ends_without_teardown_and_says_all_main_said(tmp_path):
    """`gpufleet` ends the process right after main() (no interpreter teardown): its exit code and
    its whole output are main()'s, piped or not."""
    gpufleet = str(Path(sys.executable).with_name("gpufleet"))
    run = subprocess.run([gpufleet, "preview", "ecs-gpu", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == json.loads((ROOT / "tests" / "golden" / "ecs-gpu.plan.json").read_text())
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gpufleet:region: us-east-1\n  gpufleet:ecs:\n    clusterName: ml\n    capacityProviders: 3\n")
    run = subprocess.run([gpufleet, "preview", "--config-file", str(bad)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "capacityProviders" in run.stderr and "Traceback" not in run.stderr
    # A reader that stops early: the command still ends quietly with main()'s code.
    shell = subprocess.run(f"'{gpufleet}' preview ecs-gpu --json | head -c 10; echo \" ${{PIPESTATUS[0]}}\"", shell=True, executable="/bin/bash",
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert shell.stdout.startswith("{") and shell.stdout.split()[-1] == "0" and "Traceback" not in shell.stderr, shell.stderr
