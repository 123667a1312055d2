"""The accelerator summary of a stack: what it provisions, per capacity provider and in total.

Computed from the validated spec and the catalog, exported as the stack output `accelerators` (so
`pulumi stack output accelerators` shows it under the real CLI) and shown by `gpufleet preview`.
GPU groups count GPUs; Neuron groups count chips and NeuronCores (cores per chip from the catalog).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufleet.components.rules import ack as ack_rules, aks as aks_rules, gke as gke_rules, gpus as gpu_rules
from gpufleet.components.catalog import catalog
from gpufleet.components.catalog.facts import AckFacts, AksFacts, GkeFacts

if TYPE_CHECKING:
    from gpufleet.spec import FleetSpec

# Each cloud's components (ECS's part of the summary is summary_ecs) are imported where their part
# of the summary is made: a stack imports only the clouds it uses (cold start: AKS's models alone
# take 0.1 s to import, ECS's checks 0.05 s).

SIZES = ("min", "desired", "max")
# The stack output that carries the summary; the plan moves it to its `summary`.
SUMMARY_OUTPUT = "accelerators"


def _accelerator(it) -> dict:
    """What one instance of the type carries, in the summary's words."""
    if it.neuron is not None:
        n = it.neuron
        return {
            "kind": "neuron",
            "manufacturer": "AWS",
            "model": n.model,
            "perInstance": n.count,
            "memoryMiBPerAccelerator": n.memory_mib,
            "neuronCoresPerChip": n.cores_per_device,
        }
    found = {
        "kind": "gpu",
        "manufacturer": it.gpu.manufacturer if it.gpu else None,
        "model": it.gpu.model if it.gpu else None,
        "perInstance": gpu_rules.whole_gpus(it) or 0,
        "memoryMiBPerAccelerator": it.gpu.memory_mib if it.gpu else 0,
    }
    if it.gpu is not None and it.gpu.fractional:
        # A G6f slice counts as its fraction of a GPU, so totals add up to the GPUs bought.
        found["perInstance"] = it.gpu.partition_size * it.gpu.logical_count
        found["gpuFraction"] = it.gpu.partition_size
    return found


def _group(it, platform: str, name: str, sizes: tuple[int, int, int], details: dict, efa_interfaces: int = 0) -> dict:
    acc = _accelerator(it)
    instances = dict(zip(SIZES, sizes))
    group = {
        "platform": platform,
        "group": name,
        "instanceType": it.name,
        **details,
        **acc,
        "instances": instances,
        "accelerators": {k: acc["perInstance"] * n for k, n in instances.items()},
    }
    if acc["kind"] == "neuron":
        cores = acc["perInstance"] * acc["neuronCoresPerChip"]
        group["neuronCoresPerInstance"] = cores
        group["neuronCores"] = {k: cores * n for k, n in instances.items()}
    if efa_interfaces:
        group["efaInterfacesPerInstance"] = efa_interfaces
        group["efaInterfaces"] = {k: efa_interfaces * n for k, n in instances.items()}
    return group


def _totals(groups: list[dict]) -> list[dict]:
    totals: dict[tuple[str, str], dict] = {}
    for group in groups:
        key = (group["kind"], f"{group['manufacturer']} {group['model']}" if group["model"] else "none")
        bucket = totals.setdefault(key, {"kind": key[0], "model": key[1], **{k: 0 for k in SIZES}})
        for counted in ("neuronCores", "efaInterfaces"):
            if counted in group:
                bucket.setdefault(counted, {k: 0 for k in SIZES})
                for k in SIZES:
                    bucket[counted][k] += group[counted][k]
        for k in SIZES:
            bucket[k] += group["accelerators"][k]
    return [totals[k] for k in sorted(totals)]


def accelerator_summary(spec: FleetSpec) -> dict:
    cat = catalog.load()
    groups, workloads = [], []
    if spec.ecs is not None:
        from gpufleet import summary_ecs
        from gpufleet.components.ecs.resolved import resolve as resolve_provider

        for cp in spec.ecs.capacity_providers:
            details = {"purchase": cp.purchase, "amiVariant": cp.ami_variant}
            groups.append(_group(resolve_provider(cp, cat).instance, "ecs", cp.name, (cp.min_size, cp.desired_size, cp.max_size), details))
        workloads += summary_ecs.workload_rows(spec.ecs, spec.region, cat)
    if spec.eks is not None:
        from gpufleet.components.eks.resolved import resolve
        from gpufleet.components.k8s.nccl_test import nccl_size

        for ng in spec.eks.node_groups:
            group = resolve(ng, cat)
            details = {"purchase": ng.capacity_type, "amiType": group.ami_type}
            groups.append(_group(group.instance, "eks", ng.name, (ng.min_size, ng.desired_size, ng.max_size), details, group.efa_count))
    summary = {"groups": groups, "totals": _totals(groups), "workloads": workloads}
    if spec.ecs is not None and spec.ecs.managed_instance_providers:
        summary["managedInstances"] = [summary_ecs.managed_row(mp, spec.region) for mp in spec.ecs.managed_instance_providers]
    if spec.gke is not None:
        groups += [_gke_pool(pool, cat.facts.gke) for pool in spec.gke.node_pools]
    if spec.aks is not None:
        groups += [_aks_pool(pool, cat.facts.aks) for pool in spec.aks.node_pools]
    summary["totals"] = _totals(groups)
    if spec.ack is not None:
        summary["ackPools"] = [_ack_pool(pool, spec.ack, cat.facts.ack) for pool in spec.ack.node_pools]
    if spec.eks is not None and spec.eks.kubernetes is not None and spec.eks.kubernetes.nccl_test is not None:
        name = spec.eks.kubernetes.nccl_test.node_group
        summary["ncclTest"] = nccl_size(resolve(next(ng for ng in spec.eks.node_groups if ng.name == name), cat).nccl_target)
    return summary


def _gpu_pool(platform: str, pool, installed_by: dict[str, str], instance_type: str, model: str, memory_gib: int, gpus: int, resources: int, sizes: tuple[int, int, int]) -> dict:
    """A Kubernetes GPU pool (GKE, AKS): its GPUs, and the nvidia.com/gpu each node advertises,
    which is a whole GPU, a MIG slice, or a share of either."""
    instances = dict(zip(SIZES, sizes))
    return {
        "platform": platform,
        "group": pool.name,
        "instanceType": instance_type,
        "purchase": "SPOT" if pool.spot else "ON_DEMAND",
        "driver": pool.driver,
        "driverInstalledBy": installed_by[pool.driver],  # the cloud (aks, gke) or none: the GPU Operator's
        "kind": "gpu",
        "manufacturer": "NVIDIA",
        "model": model.removeprefix("NVIDIA "),
        "perInstance": gpus,
        "memoryMiBPerAccelerator": memory_gib * 1024,
        "instances": instances,
        "accelerators": {k: gpus * n for k, n in instances.items()},
        "gpuResourcesPerInstance": resources,
        "gpuResources": {k: resources * n for k, n in instances.items()},
    }


def _gke_pool(pool, gke: GkeFacts) -> dict:
    from gpufleet.components.gke.resolved import pool_sizes, resolved_gpus

    gpus = resolved_gpus(pool)
    accelerator = gke.accelerators[gpus.accelerator]
    clients = pool.sharing.max_shared_clients_per_gpu if pool.sharing is not None else None
    resources = gke_rules.gpu_resources_per_node(gpus, pool.partition_size, clients, gke)
    group = {**_gpu_pool("gke", pool, gke.driver_installed_by, pool.machine_type, accelerator.model, accelerator.memory_gib, gpus.count, resources, pool_sizes(pool)), "zones": list(pool.zones)}
    if pool.partition_size is not None:
        group["partitionSize"] = pool.partition_size
    if pool.sharing is not None:
        group["sharing"] = {"strategy": pool.sharing.strategy, "maxSharedClientsPerGpu": clients}
    return group


def _aks_pool(pool, aks: AksFacts) -> dict:
    from gpufleet.components.aks.resolved import pool_sizes, resolved_gpus

    node = resolved_gpus(pool)
    gpu = aks.gpus[node.gpu]
    resources = aks_rules.gpu_resources_per_node(node, pool.mig_profile, aks)
    group = _gpu_pool("aks", pool, aks.driver_installed_by, pool.vm_size, gpu.model, gpu.memory_gib, node.count, resources, pool_sizes(pool))
    if pool.mig_profile is not None:
        group["partitionSize"] = pool.mig_profile
    return group


def _ack_pool(pool, fleet, ack: AckFacts) -> dict:
    """A shared-GPU pool: its GPUs, and how many pods of each declared size fit one GPU and one node."""
    gpus_per_node = ack_rules.pool_gpus(pool.instance_types, ack)
    gib_per_gpu = ack_rules.smallest_gpu(pool.instance_types, ack).shared_gib
    models = sorted({ack_rules.gpu_type(t, ack).model for t in pool.instance_types})
    if pool.autoscaling is not None:
        nodes = {"min": pool.autoscaling.min_size, "max": pool.autoscaling.max_size}
    else:
        nodes = {"min": pool.desired_size, "desired": pool.desired_size, "max": pool.desired_size}
    sizes: dict[tuple, dict] = {}
    for wl in fleet.workloads:
        if wl.node_pool != pool.name:
            continue
        key = (wl.gpu_mem_gib, wl.gpu_core_percentage)
        per_gpu = ack_rules.shares_per_gpu(gib_per_gpu, *key, ack)
        size = sizes.setdefault(
            key,
            {"gpuMemGiB": key[0], "gpuCorePercentage": key[1], "podsPerGpu": per_gpu, "podsPerNode": per_gpu * gpus_per_node, "workloads": []},
        )
        size["workloads"].append(wl.name)
    return {
        "pool": pool.name,
        "sharingMode": pool.sharing_mode,
        "placement": pool.placement,
        "instanceTypes": list(pool.instance_types),
        "model": ", ".join(models),
        "gpusPerNode": gpus_per_node,
        "gpuMemGiBPerGpu": gib_per_gpu,
        "nodes": nodes,
        "gpus": {k: n * gpus_per_node for k, n in nodes.items()},
        "sizes": list(sizes.values()),
        "replacement": "a change of sharingMode, placement or labels replaces this pool: ACK labels a node only when it "
        "joins, so the old pool is deleted (its pods are evicted) before the new one is created",
    }
