"""Rules over a whole GKE fleet spec: each check calls a `gke_rules` predicate (the ones the policy
pack calls) and returns Violations with the stack file's field paths."""

from __future__ import annotations

from typing import cast

from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import GkeFacts
from gpufleet.gke.args import GkeFleetArgs, GkeNodePoolArgs
from gpufleet.k8s import releases
from gpufleet.k8s.args import GpuWorkloadArgs
from gpufleet.platform.model import Violation, pool_checks, pool_workloads
from gpufleet.rules import gke as gke_rules
from gpufleet.rules.gke import GkeGpus


def pool_gpus(pool: GkeNodePoolArgs, gke: GkeFacts) -> GkeGpus | str:
    """The GPUs of one node of the pool, or why its machine type and accelerator do not go together."""
    return gke_rules.gpus(pool.machine_type, pool.accelerator.type, pool.accelerator.count, gke)


def strategy(pool: GkeNodePoolArgs) -> str | None:
    return pool.sharing.strategy if pool.sharing is not None else None


def check_fleet(fleet: GkeFleetArgs, region: str | None, cat: Catalog) -> list[Violation]:
    """Every rule broken by the fleet (the stack's AWS region is not GKE's: the cluster has its location)."""
    gke = cat.facts.gke
    found, per_node = pool_checks(
        fleet, lambda pool, operator_installs_driver: _check_pool(cast(GkeNodePoolArgs, pool), fleet.region, gke, operator_installs_driver)
    )
    if (
        (fleet.workloads or fleet.gpu_operator)
        and fleet.cluster.create is None
        and (fleet.kubernetes is None or fleet.kubernetes.context is None)
    ):
        found.append(
            Violation(
                "kubernetes-access",
                ("kubernetes",),
                None,
                "workloads and the GPU Operator on an existing cluster are installed through its kubeconfig: give kubernetes.context",
            )
        )
    if fleet.cluster.create is not None and fleet.kubernetes is not None and fleet.kubernetes.context is not None:
        found.append(
            Violation(
                "kubernetes-access",
                ("kubernetes", "context"),
                fleet.kubernetes.context,
                "a cluster gpufleet creates is reached through its own outputs: drop the context",
            )
        )
    if fleet.gpu_operator is not None:
        for reason in releases.fleet_name_problems(fleet.cluster.name, lambda name: [releases.gpu_operator_release(name, cat)], cat):
            found.append(Violation("helm-names-fit", ("cluster", "name"), fleet.cluster.name, reason))
    return found + pool_workloads(
        fleet,
        per_node,
        "gke",
        lambda wl, pool: gke_rules.shared_request_problem(cast(GpuWorkloadArgs, wl).gpus, strategy(cast(GkeNodePoolArgs, pool)), gke),
    )


def _clients(pool: GkeNodePoolArgs) -> int | None:
    return pool.sharing.max_shared_clients_per_gpu if pool.sharing is not None else None


def _check_pool(pool: GkeNodePoolArgs, region: str, gke: GkeFacts, operator_installs_driver: bool) -> tuple[list[Violation], int | None]:
    """The pool's violations, and the nvidia.com/gpu one node advertises (counted only when its GPUs
    and partition size are valid)."""
    found = []
    resolved = pool_gpus(pool, gke)
    if isinstance(resolved, str):
        field = ("machineType",) if pool.accelerator.type is None and pool.accelerator.count is None else ("accelerator",)
        value = pool.machine_type if field == ("machineType",) else pool.accelerator.model_dump(by_alias=True, exclude_none=True)
        found.append(Violation("gke-accelerator", field, value, f"{pool.machine_type}: {resolved}"))
    for j, zone in enumerate(pool.zones):
        if zone in pool.zones[:j]:
            found.append(Violation("names-unique", ("zones", j), zone, "each zone is named once"))
            continue
        reason = gke_rules.zone_problem(pool.machine_type, region, zone, gke)
        if reason:
            found.append(Violation("gke-zone", ("zones", j), zone, reason))
    partition = (
        gke_rules.partition_problem(resolved.accelerator, pool.partition_size, gke)
        if pool.partition_size and isinstance(resolved, GkeGpus)
        else None
    )
    if partition:
        found.append(Violation("gke-mig-partition", ("partitionSize",), pool.partition_size, partition))
    reason = gke_rules.driver_problem(pool.driver, operator_installs_driver, gke)
    if reason:
        found.append(Violation("gke-gpu-driver", ("driver",), pool.driver, reason))
    advertised = (
        gke_rules.gpu_resources_per_node(resolved, pool.partition_size, _clients(pool), gke)
        if isinstance(resolved, GkeGpus) and not partition
        else None
    )
    return found, advertised
