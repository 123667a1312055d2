"""Rules over a whole AKS fleet spec: each check calls an `aks_rules` predicate (the ones the policy
pack calls) and returns Violations with the stack file's field paths."""

from __future__ import annotations

from typing import cast

from gpufleet.aks.args import AksFleetArgs, AksNodePoolArgs
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import AksFacts
from gpufleet.platform.model import Violation, pool_checks, pool_workloads
from gpufleet.rules import aks as aks_rules
from gpufleet.rules.aks import AksGpus


def check_fleet(fleet: AksFleetArgs, region: str | None, cat: Catalog) -> list[Violation]:
    """Every rule broken by the fleet (the stack's AWS region is not AKS's: the cluster has its location)."""
    aks = cat.facts.aks
    found, per_node = pool_checks(
        fleet, lambda pool, operator_installs_driver: _check_pool(cast(AksNodePoolArgs, pool), aks, operator_installs_driver)
    )
    if fleet.create_cluster is not None:
        if fleet.kubernetes is not None:
            found.append(
                Violation(
                    "kubernetes-access",
                    ("kubernetes", "context"),
                    fleet.kubernetes.context,
                    "a cluster gpufleet creates is reached through its own kubeconfig: drop kubernetes",
                )
            )
    elif fleet.kubernetes is None and fleet.gpu_operator is not None:
        found.append(
            Violation(
                "kubernetes-access", ("kubernetes",), None, "the GPU Operator is installed through the cluster: give kubernetes.context"
            )
        )
    elif fleet.kubernetes is None and any(aks.driver_installed_by.get(p.driver) == "aks" for p in fleet.node_pools):
        found.append(
            Violation(
                "kubernetes-access",
                ("kubernetes",),
                None,
                "AKS installs the driver but not the NVIDIA device plugin (003): give kubernetes.context so gpufleet installs it (or the GPU Operator), or the GPUs are never advertised",
            )
        )
    if fleet.gpu_operator is not None and fleet.gpu_operator.time_slicing_replicas is not None:
        reason = aks_rules.time_sharing_problem(aks)
        if reason:
            found.append(
                Violation("aks-time-sharing", ("gpuOperator", "timeSlicingReplicas"), fleet.gpu_operator.time_slicing_replicas, reason)
            )
    return found + pool_workloads(fleet, per_node, "aks")


def _check_pool(pool: AksNodePoolArgs, aks: AksFacts, operator_installs_driver: bool) -> tuple[list[Violation], int | None]:
    found: list[Violation] = []
    node = aks_rules.gpus(pool.vm_size, aks)
    if isinstance(node, str):
        found.append(Violation("aks-vm-size", ("vmSize",), pool.vm_size, node))
    elif pool.mig_profile is not None:
        reason = aks_rules.mig_problem(node, pool.mig_profile, aks)
        if reason:
            found.append(Violation("aks-mig-profile", ("migProfile",), pool.mig_profile, reason))
    reason = aks_rules.driver_problem(pool.driver, operator_installs_driver, aks)
    if reason:
        found.append(Violation("aks-gpu-driver", ("driver",), pool.driver, reason))
    reason = aks_rules.dra_problem(pool.allocation, aks)
    if reason:
        found.append(Violation("aks-dra", ("allocation",), pool.allocation, reason))
    advertised = aks_rules.gpu_resources_per_node(node, pool.mig_profile, aks) if isinstance(node, AksGpus) and not found else None
    return found, advertised
