"""The Kubeflow MPI operator and an NCCL all-reduce MPIJob that proves a node group's EFA fabric.

The job is sized from the node group: workers = its nodes, slotsPerWorker = GPUs per node, -np =
workers x GPUs; each worker requests (requests = limits) its GPUs, EFA interfaces, 2 MiB hugepages
and memory, tolerates the group's taints and mounts /dev/shm (charts.md "NCCL tests on EKS"). The
job fails closed: each worker checks its EFA devices before the run, and NCCL's network is pinned
(`gpufleet verify --nccl` reads both from the launcher's log).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Catalog
from gpufleet.rules import k8s as k8s_rules


@dataclass(frozen=True)
class NcclTarget:
    """The nodes an NCCL test runs across: one node group's name, instance type and nodes, and per
    node its GPUs, EFA interfaces and taints (EKS spelling). `AcceleratedNodeGroup.nccl_target`
    gives a group's."""

    node_group: str
    instance_type: str
    nodes: int
    gpus_per_node: int
    efa_per_node: int
    taints: tuple[dict, ...] = ()


def nccl_job_name(target: NcclTarget) -> str:
    return f"nccl-tests-{target.node_group}"


def nccl_size(target: NcclTarget) -> dict:
    """Workers (one per node), slots (GPUs per node), world size (-np) and EFA interfaces per worker."""
    gpus = target.gpus_per_node
    workers = max(target.nodes, 2)  # an all-reduce across nodes needs two at least
    return {
        "nodeGroup": target.node_group,
        "workers": workers,
        "slotsPerWorker": gpus,
        "worldSize": workers * gpus,
        "efaInterfacesPerWorker": target.efa_per_node,
    }


def launcher_command(target: NcclTarget, cat: Catalog) -> list[str]:
    """The launcher's command: first, on every worker, the EFA pre-check (a worker short of the
    group's EFA devices prints its count and fails the job before the run); then the all-reduce, with
    NCCL's network pinned so a plugin that does not start fails the run instead of falling back to
    sockets."""
    charts = cat.facts.charts.nccl_tests
    gate = charts.efa_gate
    size = nccl_size(target)
    efa = size["efaInterfacesPerWorker"]
    count = f"$(ls -1 {gate.devices} 2>/dev/null | grep -c '^{gate.device_name}[0-9]')"
    check = f'n={count}; echo "{gate.marker}: $(hostname) found $n of {efa} EFA devices"; test "$n" -eq {efa}'
    mpirun = [*charts.mpirun, "-np", str(size["workers"]), "-N", "1", "--bind-to", "none", "bash", "-c", check]
    run = [
        *charts.mpirun,
        "-np",
        str(size["worldSize"]),
        "-N",
        str(size["slotsPerWorker"]),
        "-x",
        f"NCCL_NET={gate.net}",
        *charts.mpirun_tail,
    ]
    return ["/bin/bash", "-c", f"{shlex.join(mpirun)} && exec {shlex.join(run)}"]


def nccl_job(target: NcclTarget, image: str, cat: Catalog) -> dict:
    """The MPIJob's spec for the node group."""
    charts, eks = cat.facts.charts.nccl_tests, cat.facts.eks
    size = nccl_size(target)
    gpus, efa, workers = size["slotsPerWorker"], size["efaInterfacesPerWorker"], size["workers"]
    resources = {
        eks.accelerator_resources.nvidia: gpus,
        eks.efa_resource: efa,
        "hugepages-2Mi": charts.hugepages2_mi,
        "memory": charts.memory,
    }
    tolerations = [k8s_rules.toleration_for(t, eks) for t in target.taints]
    launcher = {
        "name": "launcher",
        "image": image,
        "command": launcher_command(target, cat),
        "env": [
            {"name": "PATH", "value": f"$(PATH):{charts.path}"},
            {"name": "LD_LIBRARY_PATH", "value": f"{charts.ld_library_path}:$(LD_LIBRARY_PATH)"},
        ],
    }
    worker = {
        "name": "worker",
        "image": image,
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    return {
        "runPolicy": dict(charts.run_policy),
        "slotsPerWorker": gpus,
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [launcher]}}},
            "Worker": {
                "replicas": workers,
                "restartPolicy": "Never",
                "template": {
                    "spec": {
                        "nodeSelector": {"node.kubernetes.io/instance-type": target.instance_type},
                        "tolerations": tolerations,
                        "containers": [worker],
                        "volumes": [{"name": "shm", "hostPath": {"path": "/dev/shm"}}],
                    }
                },
            },
        },
    }


class NcclTest(pulumi.ComponentResource):
    """The MPI operator's release manifest and the NCCL all-reduce MPIJob that depends on its CRD."""

    def __init__(self, name: str, target: NcclTarget, image: str, opts: pulumi.ResourceOptions | None = None, cat: Catalog | None = None):
        """`cat`: the catalog whose pinned charts it installs (absent: the process's own)."""
        super().__init__("gpufleet:k8s:NcclTest", name, None, opts)
        cat = cat or catalog.load()
        operator = cat.facts.charts.mpi_operator
        # No Helm chart exists for the operator: its release manifest, server-side applied by the provider.
        self.mpi_operator = k8s.yaml.v2.ConfigFile(f"{name}-mpi-operator", file=operator.manifest, opts=pulumi.ResourceOptions(parent=self))
        self.job = k8s.apiextensions.CustomResource(
            f"{name}-nccl-tests",
            api_version="kubeflow.org/v2beta1",
            kind="MPIJob",
            metadata={"name": nccl_job_name(target), "namespace": "default"},
            spec=nccl_job(target, image, cat),
            # The MPIJob kind exists once the operator's CRD does.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.mpi_operator]),
        )
        self.register_outputs({"job": self.job.metadata["name"]})
