"""The NCCL job fails closed: the launcher's command runs, under bash, an EFA pre-check on every
worker before the all-reduce (a worker short of the group's EFA devices stops the job), and the
all-reduce pins NCCL's network. The command is run here with a stand-in mpirun that runs its
program locally, over a directory standing in for /dev/infiniband."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from gpufleet.catalog import catalog
from gpufleet.k8s.nccl_test import NcclTarget, launcher_command
from tests.conftest import inputs_by_name, plans_of

EKS_STACKS = ("eks-p5-efa", "eks-trn1", "eks-g5-timeslice", "eks-karpenter-gpu", "eks-auto-gpu")
plans = plans_of(EKS_STACKS)
MPIRUN = "/opt/amazon/openmpi/bin/mpirun"
# Drops mpirun's options and runs the program once (the workers' part of the pre-check, or the
# benchmark, which here only says it ran).
STAND_IN = """#!/bin/bash
while [ $# -gt 0 ]; do
  case "$1" in
    -np|-N|-x|--bind-to) shift 2 ;;
    --*) shift ;;
    bash) exec "$@" ;;
    *) echo "ran $1 with NCCL_NET from the command line"; exit 0 ;;
  esac
done
"""


def _run(tmp_path, devices: int, expected: int) -> subprocess.CompletedProcess:
    gate = catalog.load().facts.charts.nccl_tests.efa_gate
    fake_dev = tmp_path / "infiniband"
    fake_dev.mkdir()
    for i in range(devices):
        (fake_dev / f"{gate.device_name}{i}").touch()
    (fake_dev / "rdma_cm").touch()  # not an EFA device
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(STAND_IN)
    mpirun.chmod(mpirun.stat().st_mode | stat.S_IEXEC)
    command = launcher_command(NcclTarget("p5", "p5.48xlarge", 2, 8, expected), catalog.load())
    script = command[2].replace(MPIRUN, str(mpirun)).replace(gate.devices, str(fake_dev))
    assert command[:2] == ["/bin/bash", "-c"]
    return subprocess.run(["/bin/bash", "-c", script], capture_output=True, text=True, timeout=30, env={**os.environ, "PATH": os.environ["PATH"]})


def test_a_worker_with_every_efa_device_runs_the_benchmark(tmp_path):
    done = _run(tmp_path, 32, 32)
    assert done.returncode == 0, done.stderr
    assert "gpufleet-efa-check:" in done.stdout and "found 32 of 32 EFA devices" in done.stdout
    assert "ran /opt/nccl-tests/build/all_reduce_perf" in done.stdout


@pytest.mark.parametrize("devices", [0, 31, 33])
def test_a_worker_short_of_or_beyond_its_efa_devices_stops_the_job_before_the_run(tmp_path, devices):
    done = _run(tmp_path, devices, 32)
    assert done.returncode != 0
    assert f"found {devices} of 32 EFA devices" in done.stdout
    assert "all_reduce_perf" not in done.stdout


def test_every_shipped_eks_stacks_nccl_job_pins_the_network_and_checks_efa(plans):
    jobs = [job for stack in EKS_STACKS for job in inputs_by_name(plans[stack], "kubernetes:kubeflow.org/v2beta1:MPIJob").values()]
    assert jobs
    for job in jobs:
        [launcher] = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
        script = launcher["command"][2]
        efa = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"]
        assert f"found $n of {efa} EFA devices" in script and f'test "$n" -eq {efa}' in script
        assert "-x NCCL_NET=Libfabric" in script and script.index("gpufleet-efa-check") < script.index("all_reduce_perf")
        assert "/opt/amazon/ofi-nccl/lib:" in next(e["value"] for e in launcher["env"] if e["name"] == "LD_LIBRARY_PATH")
