"""Rules over a whole GKE fleet spec: each check calls a `gke_rules` predicate (the ones the policy
pack calls) and returns Violations with the stack file's field paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import GkeFacts
from gpufleet.gke.args import GkeFleetArgs, GkeNodePoolArgs
from gpufleet.gke.resolved import dra, fleet_labels, node_labels, pool_gpus
from gpufleet.k8s import releases
from gpufleet.k8s.args import ClaimedGpuWorkloadArgs
from gpufleet.k8s.dra_claims import claim_field, plugin_group_claim
from gpufleet.platform.model import Violation, pool_checks, pool_workloads
from gpufleet.rules import dra as dra_rules
from gpufleet.rules import gke as gke_rules
from gpufleet.rules.gke import GkeGpus


def strategy(pool: GkeNodePoolArgs) -> str | None:
    return pool.sharing.strategy if pool.sharing is not None else None


def check_fleet(fleet: GkeFleetArgs, region: str | None, cat: Catalog) -> list[Violation]:
    """Every rule broken by the fleet (the stack's AWS region is not GKE's: the cluster has its location)."""
    gke = cat.facts.gke
    found, per_node = pool_checks(
        fleet, lambda pool, operator_installs_driver: _check_pool(cast(GkeNodePoolArgs, pool), fleet.region, gke, operator_installs_driver)
    )
    if (
        (fleet.workloads or fleet.gpu_operator or any(dra(p) for p in fleet.node_pools))
        and fleet.cluster.create is None
        and (fleet.kubernetes is None or fleet.kubernetes.context is None)
    ):
        found.append(
            Violation(
                "kubernetes-access",
                ("kubernetes",),
                None,
                "workloads, the GPU Operator and a DRA pool's drivers on an existing cluster are installed through its kubeconfig: give kubernetes.context",
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
    if fleet.gpu_operator is not None or any(dra(p) for p in fleet.node_pools):
        for reason in releases.fleet_name_problems(fleet.cluster.name, lambda name: _releases(name, fleet, cat), cat):
            found.append(Violation("helm-names-fit", ("cluster", "name"), fleet.cluster.name, reason))
    return (
        found
        + list(_dra(fleet, cat))
        + pool_workloads(
            fleet,
            per_node,
            "gke",
            lambda wl, pool: gke_rules.shared_request_problem(
                cast(ClaimedGpuWorkloadArgs, wl).gpus, strategy(cast(GkeNodePoolArgs, pool)), gke
            ),
        )
    )


def _releases(name: str, fleet: GkeFleetArgs, cat: Catalog) -> list[releases.PlannedRelease]:
    """The Helm releases the fleet's components write: the GPU Operator's, the DRA driver's."""
    found = [releases.gpu_operator_release(name, cat)] if fleet.gpu_operator is not None else []
    if any(dra(p) for p in fleet.node_pools):
        found.append(releases.dra_driver_release(name, cat))
    return found


def _dra(fleet: GkeFleetArgs, cat: Catalog) -> Iterator[Violation]:
    """Pools whose GPUs the DRA driver serves (as GKE's DRA guide sets them up), and the claims of the
    workloads on the pools."""
    facts, gke = cat.facts.dra, cat.facts.gke
    create = fleet.cluster.create
    operator = fleet.gpu_operator is not None
    for i, pool in enumerate(fleet.node_pools):
        if not dra(pool):
            continue
        version = create.version if create else None
        reason = dra_rules.api_version_problem(facts.api.api_version, version, facts)
        if reason:
            at = ("cluster", "create", "version") if create else ("nodePools", i, "allocation")
            yield Violation("dra-api-version", at, version if create else pool.allocation, f"node pool {pool.name}: {reason}")
        for field, feature in (("partitionSize", pool.partition_size), ("sharing", pool.sharing and pool.sharing.strategy)):
            reason = gke_rules.dra_sharing_problem(f"{field} {feature}" if feature else None, gke)
            if reason:
                yield Violation("gke-dra-sharing", ("nodePools", i, field), feature, reason)
        labels, wanted = node_labels(pool, operator, cat), fleet_labels(pool, operator, cat)
        for key in sorted(k for k in wanted if labels[k] != wanted[k]):
            yield Violation(
                "dra-one-allocator",
                ("nodePools", i, "labels", key),
                labels[key],
                f"a DRA pool's nodes carry {key}={wanted[key]}: {dra_rules.two_allocators_problem(True, True, facts)}; "
                f"GKE's DRA guide: {gke.dra.node_labels.source}",
            )
    yield from _claims(fleet, cat)


def _claims(fleet: GkeFleetArgs, cat: Catalog) -> Iterator[Violation]:
    """migProfile and sharedGpu are claims: only on a DRA pool, and no MIG on GKE's (its guide refuses
    multi-instance GPUs with DRA)."""
    pools = {p.name: p for p in fleet.node_pools}
    for i, wl in enumerate(fleet.workloads):
        target, claimed = pools.get(wl.node_pool), claim_field(wl)
        if target is None or claimed is None:
            continue
        field, value = claimed
        if not dra(target):
            yield plugin_group_claim(i, field, value, f"node pool {target.name}")
        elif wl.mig_profile:
            reason = gke_rules.dra_sharing_problem(f"migProfile {wl.mig_profile}", cat.facts.gke)
            yield Violation("gke-dra-sharing", ("workloads", i, field), value, cast(str, reason))


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
    reason = (
        gke_rules.dra_driver_problem(pool.driver, operator_installs_driver, gke)
        if dra(pool)
        else gke_rules.driver_problem(pool.driver, operator_installs_driver, gke)
    )
    if reason:
        found.append(Violation("gke-gpu-driver", ("driver",), pool.driver, reason))
    advertised = (
        gke_rules.gpu_resources_per_node(resolved, pool.partition_size, _clients(pool), gke)
        if isinstance(resolved, GkeGpus) and not partition
        else None
    )
    return found, advertised
