"""GKE GPU node pool rules over the curated GKE facts: which GPUs a machine type carries, the zones
that offer it, multi-instance GPU partitions, GPU sharing and the driver. The stack spec's checks and
the policy pack both call these, so a rule is written once.

A rule returns None when the request is fine, else the reason in words a platform engineer acts on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from gpufleet.catalog.facts import GkeFacts
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import k8s as k8s_rules


@dataclass(frozen=True)
class GkeGpus:
    """The GPUs one node of a machine type carries."""

    machine_type: str
    accelerator: str  # the accelerator type resource name, e.g. nvidia-l4
    count: int


def machine_series(machine_type: str) -> str:
    """a2-highgpu-8g -> a2-highgpu, g2-standard-24 -> g2-standard, n1-standard-8 -> n1-standard."""
    return "-".join(machine_type.split("-")[:2])


_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-[a-z]$")  # us-central1-a; a region is us-central1


def pool_zones(inputs: Mapping) -> int | None:
    """How many zones a node pool's counts are multiplied by (GKE counts nodes per zone): its
    nodeLocations; without them, the one zone of a zonal location, and for a regional one the
    cluster's zones, which the pool's own inputs do not say (None)."""
    named = [z for z in inputs.get("nodeLocations") or [] if isinstance(z, str)]
    if named:
        return len(named)
    return 1 if _ZONE.match(str(inputs.get("location") or "")) else None


def pool_name(inputs: Mapping, fallback: str) -> str:
    """A node pool's name as GKE gives it: its name, or its namePrefix and a suffix GKE picks."""
    if isinstance(inputs.get("name"), str):
        return inputs["name"]
    return f"{inputs['namePrefix']}*" if isinstance(inputs.get("namePrefix"), str) else fallback


def location_region(location: object) -> str | None:
    """The region of a GKE location: a zone's region, or the region itself."""
    if not isinstance(location, str):
        return None
    return location.rsplit("-", 1)[0] if is_zone(location) else location


def gpus(machine_type: str, accelerator: str | None, count: int | None, gke: GkeFacts) -> GkeGpus | str:
    """The node's GPUs, or why the machine type, accelerator and count do not go together."""
    bundled = gke.machine_types.get(machine_type)
    if bundled is not None:
        if accelerator is not None and accelerator != bundled.accelerator:
            return f"{machine_type} comes with {bundled.accelerator} GPUs, not {accelerator}"
        if count is not None and count != bundled.count:
            return f"{machine_type} comes with {bundled.count} GPU(s); accelerator count {count} is not accepted"
        return GkeGpus(machine_type, bundled.accelerator, bundled.count)
    if machine_type.startswith("n1-"):
        attachable = ", ".join(gke.n1_attachable)
        if accelerator is None:
            return f"an N1 machine type takes attached GPUs: give the accelerator type ({attachable})"
        if accelerator not in gke.n1_attachable:
            return f"{accelerator} does not attach to N1 machine types (N1 takes {attachable}; {gke.n1_source})"
        counts = gke.n1_attachable[accelerator]
        if count not in counts:
            return f"{accelerator} attaches to N1 in counts of {', '.join(map(str, counts))}, not {count}"
        return GkeGpus(machine_type, accelerator, count)
    return (
        f"not a GPU machine type of the curated table (A2, A3, A4 and G2 types with their GPUs, or N1 with "
        f"attached GPUs; {gke.machine_types_source}); an unknown type is refused, not guessed"
    )


def is_zone(location: object) -> bool:
    """A zone's name (us-central1-a), not a region's (us-central1)."""
    return isinstance(location, str) and re.fullmatch(r"[a-z]+-[a-z]+\d+-[a-z]", location) is not None


def zone_problem(machine_type: str, region: str, zone: str, gke: GkeFacts) -> str | None:
    """Does the zone, of the region, offer the machine type? Only curated regions are judged: any other
    is refused as unknown, never guessed."""
    if not zone.startswith(f"{region}-"):
        return f"{zone} is not a zone of the cluster's region {region}"
    series = machine_series(machine_type)
    regions = gke.zones.get(series)
    if regions is None:
        return f"the zones that offer {series} are not curated (curated: {', '.join(gke.zones)}; add them from {gke.zones_source})"
    zones = regions.get(region)
    if zones is None:
        return f"the zones of {region} that offer {series} are not curated (curated regions: {', '.join(regions)}; {gke.zones_source})"
    if zone not in zones:
        return f"{zone} does not offer {series} (zones of {region} that do: {', '.join(zones)})"
    return None


def partition_problem(accelerator: str, size: str, gke: GkeFacts) -> str | None:
    """Is the multi-instance GPU partition size one the accelerator supports?"""
    return gpu_rules.mig_size_problem(
        size, gke.mig_partitions.get(accelerator), accelerator, gke.mig_partitions, "partition size", gke.mig_source
    )


def driver_problem(driver: str, operator_installs_driver: bool, gke: GkeFacts) -> str | None:
    """Exactly one driver per node: GKE's (DEFAULT, LATEST) or the GPU Operator's."""
    return k8s_rules.one_driver_problem("GKE" if gke.driver_installed_by.get(driver) == "gke" else None, driver, operator_installs_driver)


def shared_request_problem(requested: int, strategy: str | None, gke: GkeFacts) -> str | None:
    """On nodes that share GPUs, a container asks for at most one shared GPU."""
    if strategy is not None and requested > gke.shared_request_max:
        return (
            f"asks for {requested} nvidia.com/gpu on nodes that share GPUs ({strategy}); GKE admits at most "
            f"{gke.shared_request_max} per container there ({gke.sharing_source})"
        )
    return None


def gpu_resources_per_node(node: GkeGpus, partition_size: str | None, max_shared_clients: int | None, gke: GkeFacts) -> int:
    """How many nvidia.com/gpu one node advertises: a GPU per partition, times the clients sharing each."""
    per_gpu = gke.mig_partitions[node.accelerator][partition_size] if partition_size else 1
    return node.count * per_gpu * (max_shared_clients or 1)


def dra_pool(labels: Mapping[str, str], gke: GkeFacts) -> bool:
    """Is the pool set up for the NVIDIA DRA driver, by the node labels GKE's DRA guide gives it?"""
    return all(labels.get(k) == v for k, v in gke.dra.node_labels.values.items())


def dra_driver_problem(driver: str, operator_installs_driver: bool, gke: GkeFacts) -> str | None:
    """The NVIDIA driver of a pool whose GPUs the DRA driver serves: GKE installs none there (its DRA
    guide), and GKE's driver installer DaemonSet does, so the GPU Operator must not install one too."""
    dra = gke.dra
    if driver != dra.driver.value:
        return (
            f"GKE installs the driver with {driver}, which GKE does not support with DRA: use {dra.driver.value}; "
            f"GKE's NVIDIA driver installer DaemonSet installs it ({dra.driver.source})"
        )
    if operator_installs_driver:
        return (
            "the GPU Operator would install a second driver on the pool, where GKE's DRA guide has GKE's NVIDIA driver "
            f"installer install it ({dra.driver_installer.source}): turn the GPU Operator's driver off"
        )
    return None


def dra_sharing_problem(feature: str | None, gke: GkeFacts) -> str | None:
    """GKE's own GPU sharing (time-sharing, MPS, multi-instance partitions) asked of a DRA pool."""
    if feature is None:
        return None
    refused = gke.dra.sharing_refused
    return f"{feature} on a pool with allocation: dra: {refused.value} ({refused.source})"
