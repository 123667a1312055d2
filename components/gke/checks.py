"""Rules over a whole GKE fleet spec: each check calls a `gke_rules` predicate (the ones the policy
pack calls) and returns Violations with the stack file's field paths."""

from __future__ import annotations

from gpufleet.components.rules import gke as gke_rules
from gpufleet.components.catalog.facts import GkeFacts
from gpufleet.components.rules.gke import GkeGpus
from gpufleet.components.gke.args import GkeFleetArgs, GkeNodePoolArgs
from gpufleet.components.catalog.catalog import Catalog
from gpufleet.components.spec_model import Violation, pool_fleet_names


def pool_gpus(pool: GkeNodePoolArgs, gke: GkeFacts) -> GkeGpus | str:
    """The GPUs of one node of the pool, or why its machine type and accelerator do not go together."""
    return gke_rules.gpus(pool.machine_type, pool.accelerator.type, pool.accelerator.count, gke)


def strategy(pool: GkeNodePoolArgs) -> str | None:
    return pool.sharing.strategy if pool.sharing is not None else None


def check_fleet(fleet: GkeFleetArgs, region: str | None, cat: Catalog) -> list[Violation]:
    """Every rule broken by the fleet (the stack's AWS region is not GKE's: the cluster has its location)."""
    gke = cat.facts.gke
    operator_installs_driver = fleet.gpu_operator is not None and fleet.gpu_operator.driver
    found = pool_fleet_names(fleet)
    nodes: dict[str, GkeGpus] = {}
    for i, pool in enumerate(fleet.node_pools):
        found += [v.under("nodePools", i) for v in _check_pool(pool, fleet.region, gke, operator_installs_driver)]
        resolved = pool_gpus(pool, gke)
        # A pool's slices per node are counted only when its GPUs and partition size are valid.
        if isinstance(resolved, GkeGpus) and not (pool.partition_size and gke_rules.partition_problem(resolved.accelerator, pool.partition_size, gke)):
            nodes[pool.name] = resolved
    if (fleet.workloads or fleet.gpu_operator) and fleet.cluster.create is None and (fleet.kubernetes is None or fleet.kubernetes.context is None):
        found.append(
            Violation("kubernetes-access", ("kubernetes",), None, "workloads and the GPU Operator on an existing cluster are installed through its kubeconfig: give kubernetes.context")
        )
    if fleet.cluster.create is not None and fleet.kubernetes is not None and fleet.kubernetes.context is not None:
        found.append(
            Violation("kubernetes-access", ("kubernetes", "context"), fleet.kubernetes.context, "a cluster gpufleet creates is reached through its own outputs: drop the context")
        )
    pools = {p.name: p for p in fleet.node_pools}
    for i, wl in enumerate(fleet.workloads):
        pool = pools.get(wl.node_pool)
        if pool is None:
            found.append(Violation("node-pool-exists", ("workloads", i, "nodePool"), wl.node_pool, f"no node pool of that name (pools: {', '.join(pools)})"))
            continue
        reason = gke_rules.shared_request_problem(wl.gpus, strategy(pool), gke)
        if reason:
            found.append(Violation("gke-shared-gpu-request", ("workloads", i, "gpus"), wl.gpus, reason))
        elif pool.name in nodes:
            per_node = gke_rules.gpu_resources_per_node(nodes[pool.name], pool.partition_size, _clients(pool), gke)
            if wl.gpus > per_node:
                found.append(
                    Violation("gke-gpus-fit-node", ("workloads", i, "gpus"), wl.gpus, f"a node of pool {pool.name} advertises {per_node} nvidia.com/gpu: the pods never schedule")
                )
    return found


def _clients(pool: GkeNodePoolArgs) -> int | None:
    return pool.sharing.max_shared_clients_per_gpu if pool.sharing is not None else None


def _check_pool(pool: GkeNodePoolArgs, region: str, gke: GkeFacts, operator_installs_driver: bool) -> list[Violation]:
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
    if pool.partition_size is not None and isinstance(resolved, GkeGpus):
        reason = gke_rules.partition_problem(resolved.accelerator, pool.partition_size, gke)
        if reason:
            found.append(Violation("gke-mig-partition", ("partitionSize",), pool.partition_size, reason))
    reason = gke_rules.driver_problem(pool.driver, operator_installs_driver, gke)
    if reason:
        found.append(Violation("gke-gpu-driver", ("driver",), pool.driver, reason))
    return found
