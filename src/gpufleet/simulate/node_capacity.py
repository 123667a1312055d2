"""What one instance of a type offers pods and tasks: memory the OS reports (less than installed),
what ECS registers, and what the kubelet of an EKS AMI leaves allocatable (kube-reserved, eviction
threshold, huge pages, max pods, the extended resources the device plugins advertise).

Plain functions over the catalog and the curated facts; the spec, the summary and the policy pack
read capacities only from here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpufleet.apis.quantity import QuantityError, quantity
from gpufleet.catalog import catalog
from gpufleet.catalog.catalog import Gpu, InstanceType
from gpufleet.catalog.facts import (
    AckFacts,
    AksFacts,
    CuratedFacts,
    EksFacts,
    GkeFacts,
    Karpenter,
    KarpenterAllocatable,
    Kubelet,
    MemoryOverhead,
    WellKnownLabels,
)
from gpufleet.rules import ack as ack_rules
from gpufleet.rules import aks as aks_rules
from gpufleet.rules import gke as gke_rules
from gpufleet.simulate.k8s_shapes import NodeShape

MIB = 2**20
# The percentage evictionHard takes (karpenter.k8s.aws_ec2nodeclasses.yaml @bde00654 L397).
_PERCENT = re.compile(r"([0-9]{1,2}(\.[0-9]{1,2})?|100(\.0{1,2})?)%")


def os_memory_mib(it: InstanceType, overhead: MemoryOverhead) -> tuple[int, int]:
    """(at most, estimated) MiB of memory the OS of an instance reports: installed memory less the
    share AWS's documented example loses, and less the share Karpenter assumes."""
    documented = overhead.documented
    at_most = it.memory_mib * documented.registered_mib // documented.installed_mib
    estimate = int(it.memory_mib * (100 - overhead.estimate_percent.value) / 100)
    return at_most, min(at_most, estimate)


def ecs_registered(it: InstanceType, overhead: MemoryOverhead) -> dict[str, int]:
    """What a container instance of the type registers with ECS: CPU units (1024 per vCPU), memory
    in MiB at most and as estimated (the agent registers what the OS reports, less
    ECS_RESERVED_MEMORY, which gpufleet does not set)."""
    at_most, estimate = os_memory_mib(it, overhead)
    return {"cpu": it.vcpus * 1024, "memory": at_most, "memoryEstimate": estimate}


def max_pods(it: InstanceType, kubelet: Kubelet) -> int:
    """nodeadm's default: ENIs of the default network card x (IPv4 addresses per ENI - 1) + 2, with
    the counts of nodeadm's own instance data where it has the type (the node reads that file), else
    of the EC2 record (as nodeadm asks DescribeInstanceTypes)."""
    rule = kubelet.max_pods
    enis, addresses = catalog.nodeadm_interfaces().get(it.name, (it.default_card_interfaces, it.ipv4_per_interface))
    if not enis or not addresses:
        return rule.fallback
    return enis * (addresses - rule.per_eni_addresses_less) + rule.plus


def kube_reserved_cpu(millicores: int, kubelet: Kubelet | KarpenterAllocatable) -> int:
    """nodeadm's getCPUMillicoresToReserve (and Karpenter's kubeReservedResources, the same bands):
    a share of each range of the node's millicores."""
    reserved = 0
    for band in kubelet.kube_reserved_cpu_per10000:
        start = band.from_millicores
        end = band.to_millicores if band.to_millicores is not None else millicores
        if millicores > start:
            reserved += (min(millicores, end) - start) * band.reserve // 10000
    return reserved


def _deprecated(names: WellKnownLabels, cloud_deprecated: bool) -> dict[str, str]:
    """GA name -> the deprecated spelling a node carries beside it: the kubelet's (os, arch) always,
    the cloud node controller's (instance type, zone, region) where `cloud_deprecated` (not on AKS:
    aks.deprecatedNodeLabels)."""
    return {**names.kubelet_deprecated, **(names.cloud_deprecated if cloud_deprecated else {})}


def with_deprecated(labels: Mapping[str, str], names: WellKnownLabels, cloud_deprecated: bool = True) -> dict[str, str]:
    """`labels` with the deprecated spelling of each well-known one beside it, as a node carries them."""
    deprecated = _deprecated(names, cloud_deprecated)
    return {**labels, **{deprecated[k]: v for k, v in labels.items() if k in deprecated}}


def node_labels(
    names: WellKnownLabels,
    *,
    os: str,
    arch: str | None,
    instance_type: str | None,
    zones: Sequence[str] = (),
    cloud_deprecated: bool = True,
) -> tuple[dict[str, str], frozenset[str]]:
    """The labels every node of a group carries unasked (the kubelet's and its cloud node
    controller's, each in its deprecated spelling too: `with_deprecated`), and those whose value is
    not the same on every node or not known: those are left off and named `uncertain`, so a pod that
    selects one is judged advisory (k8s_scheduler._notes), never Pending for certain. Uncertain:
    each node's own hostname; the region, which no node shape holds; the zone of a group in several
    zones or none named; an `arch` or `instance_type` of None."""
    zone = zones[0] if len(set(zones)) == 1 else None
    given = {names.hostname: None, names.os: os, names.arch: arch, names.instance_type: instance_type, names.zone: zone, names.region: None}
    known = {k: v for k, v in given.items() if v is not None}
    unknown = {k for k, v in given.items() if v is None}
    deprecated = _deprecated(names, cloud_deprecated)
    return with_deprecated(known, names, cloud_deprecated), frozenset(unknown | {deprecated[k] for k in unknown if k in deprecated})


def well_known_labels(
    it: InstanceType, group: str, capacity_type: str, zones: list[str], eks: EksFacts
) -> tuple[dict[str, str], frozenset[str]]:
    """The labels the kubelet, AWS's cloud controller and EKS put on every node of a managed group,
    and those whose value is not the same on every node or not known (`node_labels`)."""
    names = eks.well_known_labels
    # A type EC2 lists as i386 and x86_64 boots the x86_64 AMIs: the architecture Kubernetes names.
    arch = next((a for a in it.architectures if a in names.architectures), it.architectures[0])
    labels, uncertain = node_labels(names, os="linux", arch=names.architectures.get(arch, arch), instance_type=it.name, zones=zones)
    return {**labels, names.node_group: group, names.capacity_type: capacity_type}, uncertain


def eks_node_shape(
    it: InstanceType,
    *,
    group: str,
    ami_type: str,
    labels: Mapping[str, str],
    taints: Sequence[Mapping],
    sizes: tuple[int, int, int],
    capacity_type: str,
    zones: list[str],
    efa_interfaces: int,
    gpu_sharing: dict | None,
    facts: CuratedFacts,
    kubernetes_version: str | None = None,
    derived: str | None = None,
) -> NodeShape:
    """A managed node group's nodes as the scheduler sees them. `facts` are the curated facts;
    `gpu_sharing` what the NVIDIA device plugin's values make of each GPU (charts.nvidia_sharing)."""
    eks, kubelet = facts.eks, facts.eks.kubelet
    accelerated = ami_type in eks.accelerated_ami_types
    pods = max_pods(it, kubelet)
    millicores = it.vcpus * 1000
    at_most, estimate = os_memory_mib(it, facts.memory_overhead)
    hugepages = eks.hugepages2_mi.pages * 2 * MIB if accelerated else 0
    reserved = kubelet.kube_reserved_memory_mib
    kept = (reserved.per_pod * pods + reserved.base + kubelet.eviction_hard_memory_mib) * MIB
    allocatable = {
        "cpu": millicores - kube_reserved_cpu(millicores, kubelet),
        "memory": at_most * MIB - kept - hugepages,
        "pods": pods,
    }
    if hugepages:
        allocatable["hugepages-2Mi"] = hugepages
    resources = eks.accelerator_resources
    unknown, single = set(), set()
    if it.gpu is not None and it.gpu.manufacturer == "NVIDIA" and it.gpu.count and accelerated:
        sharing = gpu_sharing or {}
        if sharing.get("migStrategy") not in (None, "none"):
            unknown.add(resources.nvidia)
        else:
            name = sharing.get("resource", resources.nvidia)
            allocatable[name] = it.gpu.count * sharing.get("replicas", 1)
            if sharing.get("failRequestsGreaterThanOne"):
                single.add(name)
    if it.neuron is not None and accelerated:
        allocatable[resources.neuron] = it.neuron.count
        allocatable[eks.neuron_core_resource] = it.neuron.count * it.neuron.cores_per_device
    if efa_interfaces:
        allocatable[eks.efa_resource] = efa_interfaces
    plugin = {r for r in allocatable if r not in ("cpu", "memory", "pods", "hugepages-2Mi")}
    well_known, uncertain = well_known_labels(it, group, capacity_type, zones, eks)
    assumptions = (
        ()
        if ami_type in kubelet.ami_types
        else (f"node group {group}: the kubelet reservations of {ami_type} are not sourced; the Amazon Linux figures are assumed",)
    )
    return NodeShape(
        group=group,
        instance_type=it.name,
        labels={**well_known, **labels},
        taints=tuple(taints),
        allocatable=allocatable,
        nodes=sizes[1],
        min_nodes=sizes[0],
        max_nodes=sizes[2],
        memory_estimate=estimate * MIB - kept - hugepages,
        kubernetes_version=kubernetes_version,
        uncertain_labels=uncertain,
        unknown_resources=frozenset(unknown),
        single_unit_resources=frozenset(single),
        assumptions=assumptions,
        plugin_resources=frozenset(plugin),
        derived=derived,
    )


_CATEGORY = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")  # Karpenter's, types.go L49


def _kabob(text: str) -> str:
    return text.lower().replace(" ", "-")


def karpenter_labels(it: InstanceType, karpenter: Karpenter, eks: EksFacts, domain: str | None = None) -> dict[str, str]:
    """The labels Karpenter gives a type (its requirements are matched against them) that EC2's
    record decides; those it reads elsewhere are `karpenter.labels.notInCatalog`. `domain`: EKS Auto
    Mode's (eks.amazonaws.com) in place of karpenter.k8s.aws."""
    names, domain = eks.well_known_labels, domain or karpenter.labels.domain
    arch = next((a for a in it.architectures if a in names.architectures), it.architectures[0])
    family, _, size = it.name.partition(".")
    labels = {
        names.os: "linux",
        names.arch: names.architectures.get(arch, arch),
        names.instance_type: it.name,
        f"{domain}/instance-family": family,
        f"{domain}/instance-size": size,
        f"{domain}/instance-cpu": str(it.vcpus),
        f"{domain}/instance-memory": str(it.memory_mib),
    }
    # Read from the record as computeRequirements does (types.go @bde00654 L216-L217, L260-L264,
    # L296-L308): Go's math.Round rounds half away from zero; "-flex" in the family is the flex label.
    labels.update(
        {
            f"{domain}/instance-hypervisor": it.hypervisor,
            f"{domain}/instance-encryption-in-transit-supported": str(it.encryption_in_transit).lower(),
            f"{domain}/instance-capability-flex": str("-flex" in family).lower(),
            f"{domain}/instance-cpu-sustained-clock-speed-mhz": str(math.floor(it.sustained_clock_ghz * 1000 + 0.5)),
        }
    )
    if it.cpu_manufacturer is not None:
        labels[f"{domain}/instance-cpu-manufacturer"] = _kabob(it.cpu_manufacturer)
    if it.ebs_bandwidth_mbps is not None:
        labels[f"{domain}/instance-ebs-bandwidth"] = str(it.ebs_bandwidth_mbps)
    if it.local_nvme_gb is not None:
        labels[f"{domain}/instance-local-nvme"] = str(it.local_nvme_gb)
    match = _CATEGORY.match(it.name)
    if match:
        labels[f"{domain}/instance-category"] = match.group(1)
        labels[f"{domain}/instance-generation"] = match.group(3)
    if it.gpu is not None:  # fractional types too (count 0), as Karpenter labels them
        labels.update(
            {
                f"{domain}/instance-gpu-name": _kabob(it.gpu.model),
                f"{domain}/instance-gpu-manufacturer": _kabob(it.gpu.manufacturer),
                f"{domain}/instance-gpu-count": str(it.gpu.count),
                f"{domain}/instance-gpu-memory": str(it.gpu.memory_mib),
            }
        )
    if it.neuron is not None:
        labels.update(
            {
                f"{domain}/instance-accelerator-name": _kabob(it.neuron.model),
                f"{domain}/instance-accelerator-manufacturer": karpenter.labels.manufacturers["neuron"],
                f"{domain}/instance-accelerator-count": str(it.neuron.count),
            }
        )
    return labels


@dataclass(frozen=True)
class NodeClassKubelet:
    """What of an EC2NodeClass Karpenter's estimate of a node reads (karpenter-provider-aws
    pkg/providers/instancetype/types.go @bde00654 L95-L160): its spec.kubelet and the efa-only
    interfaces its networkInterfaces put on network card 0, with its AMI family's feature flags
    (pkg/providers/amifamily/resolver.go L127-L134 for AL2023, AL2 and Custom; bottlerocket.go
    L214-L220: no podsPerCore, kube-reserved memory counted on the pods it allows)."""

    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: Mapping[str, int] = field(default_factory=dict)  # resource -> amount (it replaces the computed one)
    system_reserved: Mapping[str, int] = field(default_factory=dict)
    eviction_hard_memory: str | None = None  # evictionHard memory.available as written: a quantity or a percentage
    efa_only_on_card0: int = 0
    pods_per_core_enabled: bool = True
    eni_limited_memory_overhead: bool = True


def _eni_limited_pods(it: InstanceType, rule: KarpenterAllocatable, efa_only_on_card0: int) -> int:
    """ENILimitedPods (types.go L485-L505): efa-only interfaces on card 0 take an ENI each but no IP."""
    usable = max(it.default_card_interfaces - efa_only_on_card0, 0)
    if not usable or not it.ipv4_per_interface:
        return 0
    return usable * (it.ipv4_per_interface - rule.pods_per_interface_addresses_less) + rule.pods_plus


def _pods(it: InstanceType, rule: KarpenterAllocatable, kubelet: NodeClassKubelet) -> int:
    """pods() (types.go L576-L591): maxPods, else the ENI-limited count; podsPerCore caps it."""
    count = kubelet.max_pods if kubelet.max_pods is not None else _eni_limited_pods(it, rule, kubelet.efa_only_on_card0)
    if kubelet.pods_per_core and kubelet.pods_per_core > 0 and kubelet.pods_per_core_enabled:
        count = min(kubelet.pods_per_core * it.vcpus, count)
    return count


def eviction_memory(memory_bytes: int, given: str | None, default_mib: int) -> int:
    """evictionThreshold's memory (types.go L554-L574, L599-L621): evictionHard memory.available
    replaces 100Mi; a percentage is of the memory after VM overhead, rounded up, 100 % meaning none.
    QuantityError on a value that is neither (the CRD's pattern: a percentage of at most 100)."""
    if given is None:
        return default_mib * MIB
    if given.endswith("%"):
        if not _PERCENT.fullmatch(given):
            raise QuantityError(f"memory.available: {given!r} is not a percentage of at most 100")
        percent = float(given[:-1])
        return 0 if percent == 100 else math.ceil(memory_bytes / 100 * percent)
    return quantity("memory", given)


def karpenter_allocatable(it: InstanceType, karpenter: Karpenter, eks: EksFacts, kubelet: NodeClassKubelet | None = None) -> dict[str, int]:
    """What Karpenter estimates a node of the type leaves to pods, before it launches one: the
    estimate it chooses the type by. Capacity less kube-reserved, system-reserved and the eviction
    threshold (core's InstanceType.Allocatable); `kubelet` the node class's settings (none: AL2023
    as the provider's reference table assumes)."""
    rule = karpenter.allocatable
    kubelet = kubelet or NodeClassKubelet()
    pods = _pods(it, rule, kubelet)
    # types.go L150-L151: kube-reserved memory counts the ENI-limited pods (card-0 efa-only interfaces
    # included, no reserved ENIs) where the AMI family says so, else the pods the node allows.
    overhead_pods = _eni_limited_pods(it, rule, kubelet.efa_only_on_card0) if kubelet.eni_limited_memory_overhead else pods
    memory_mib = it.memory_mib - (rule.arm64_reserved_mib if "arm64" in it.architectures else 0)
    memory_mib -= math.ceil(memory_mib * rule.vm_memory_overhead_percent / 100)
    millicores = it.vcpus * 1000
    reserved = {
        "cpu": kube_reserved_cpu(millicores, rule),
        "memory": (rule.kube_reserved_memory_mib.per_pod * overhead_pods + rule.kube_reserved_memory_mib.base) * MIB,
        **kubelet.kube_reserved,
    }
    eviction = eviction_memory(memory_mib * MIB, kubelet.eviction_hard_memory, rule.eviction_hard_memory_mib)
    found = {
        "cpu": millicores - reserved["cpu"] - kubelet.system_reserved.get("cpu", 0),
        "memory": memory_mib * MIB - reserved["memory"] - kubelet.system_reserved.get("memory", 0) - eviction,
        "pods": pods,
    }
    resources = eks.accelerator_resources
    if it.gpu is not None and it.gpu.manufacturer == "NVIDIA" and it.gpu.count:
        found[resources.nvidia] = it.gpu.count
    if it.neuron is not None:
        found[resources.neuron] = it.neuron.count
        found[eks.neuron_core_resource] = it.neuron.count * it.neuron.cores_per_device
    if it.max_efa_interfaces:
        found[eks.efa_resource] = it.max_efa_interfaces
    return found


def ack_node_shape(
    pool: str, instance_types: list[str], labels: Mapping[str, str], taints: Sequence[Mapping], sizes: tuple[int, int, int], ack: AckFacts
) -> NodeShape | None:
    """An ACK shared-GPU pool's nodes as the GPU-sharing scheduler sees them: per GPU, the GiB of
    aliyun.com/gpu-mem the plugin advertises and (core_mem) 100 % of aliyun.com/gpu-core.percentage,
    a pod's share taken from one GPU; for a pool of several types, what its smallest one guarantees.
    CPU, memory and the pod count of Alibaba types are not in the catalog: not judged. None when no
    type of the pool has sourced GPU facts."""
    smallest = ack_rules.smallest_gpu(instance_types, ack)
    gpus = ack_rules.pool_gpus(instance_types, ack)
    if smallest is None or not gpus:
        return None
    device = {ack.memory_resource: smallest.shared_gib}
    if ack_rules.pool_mode(dict(labels), ack) == "core_mem":
        device[ack.compute_resource] = ack.compute_percentage.maximum
    return _uncatalogued(
        pool,
        ", ".join(instance_types),
        labels,
        taints,
        {k: v * gpus for k, v in device.items()},
        sizes,
        devices=tuple(dict(device) for _ in range(gpus)),
    )


def _uncatalogued(
    group: str,
    machine: str,
    labels: Mapping[str, str],
    taints: Sequence[Mapping],
    allocatable: Mapping[str, int],
    sizes: tuple[int, int, int],
    **more: Any,
) -> NodeShape:
    """The nodes of a pool whose machine's CPU, memory and pod count the catalog does not hold (ACK,
    GKE, AKS): placed by labels, taints and the accelerator resources given, sized (min, desired,
    max) by the pool; what fits of the rest is not judged."""
    return NodeShape(
        group=group,
        instance_type=machine,
        labels=dict(labels),
        taints=tuple(taints),
        allocatable=allocatable,
        nodes=sizes[1],
        min_nodes=sizes[0],
        max_nodes=sizes[2],
        unknown_resources=frozenset({"cpu", "memory", "pods"}),
        unknown_reason=f"is not in the catalog for {machine} nodes: not checked",
        **more,
    )


def plain_node_shape(
    group: str,
    machine_type: str | None,
    labels: Mapping[str, str],
    taints: Sequence[Mapping],
    sizes: tuple[int, int, int],
    *,
    names: WellKnownLabels,
    cloud_deprecated: bool,
    os: str = "linux",
    zones: Sequence[str] = (),
) -> NodeShape:
    """A pool without accelerators on a cloud whose machine sizes the catalog does not hold (an AKS
    cluster's default pool, a GKE system pool): where a pod may go is judged (the pool's labels over
    the kubelet's and the cloud's, `node_labels`; its taints), what fits is not (CPU, memory and pod
    count unknown). Its machine type may be unknown (None); its architecture is (the catalog does not
    hold the cloud's machine types)."""
    kubelet, uncertain = node_labels(names, os=os, arch=None, instance_type=machine_type, zones=zones, cloud_deprecated=cloud_deprecated)
    return _uncatalogued(group, str(machine_type), {**kubelet, **labels}, taints, {}, sizes, uncertain_labels=uncertain)


def gke_node_shape(
    pool: str,
    gpus: gke_rules.GkeGpus,
    partition_size: str | None,
    sharing: tuple[str, int] | None,
    labels: Mapping[str, str],
    taints: Sequence[Mapping],
    sizes: tuple[int, int, int],
    resource: str,
    gke: GkeFacts,
    *,
    well_known: WellKnownLabels,
    zones: Sequence[str] = (),
) -> NodeShape:
    """A GKE GPU pool's nodes: the kubelet's and GCP's cloud controller's labels (`node_labels`: the
    machine type; `zones`, the pool's node locations), the labels GKE sets (pool, accelerator,
    partition size, sharing), its GPU taint, and nvidia.com/gpu per node (a GPU per partition, times
    the clients sharing each). Machine types' CPU, memory and architecture are not in the catalog:
    not judged."""
    names = gke.labels
    kubelet, uncertain = node_labels(well_known, os="linux", arch=None, instance_type=gpus.machine_type, zones=zones)
    labelled = {**kubelet, **labels, names.node_pool: pool, names.accelerator: gpus.accelerator}
    if partition_size is not None:
        labelled[names.partition_size] = partition_size
    if sharing is not None:
        labelled[names.sharing_strategy] = gke.sharing_strategies.get(sharing[0], sharing[0])
        labelled[names.max_shared_clients] = str(sharing[1])
    taint = gke.gpu_taint
    return _uncatalogued(
        pool,
        gpus.machine_type,
        labelled,
        (*taints, {"key": taint.key, "value": taint.value, "effect": taint.effect}),
        {resource: gke_rules.gpu_resources_per_node(gpus, partition_size, sharing[1] if sharing else None, gke)},
        sizes,
        single_unit_resources=frozenset({resource}) if sharing is not None else frozenset(),
        assumptions=(f"GKE taints GPU nodes {taint.key}={taint.value}:{taint.effect} (the cluster has non-GPU pools; {taint.source})",),
        uncertain_labels=uncertain,
        gpu=gke_gpu(gpus, gke),
    )


def gke_gpu(gpus: gke_rules.GkeGpus, gke: GkeFacts) -> Gpu:
    """A GKE node's GPUs as the catalog describes an instance type's (EC2's GpuInfo: maker "NVIDIA",
    name "A100", memory apart): GKE's accelerator table names each model with its maker first and its
    memory last ("NVIDIA A100 80GB") and gives the memory in GiB."""
    model = gke.accelerators[gpus.accelerator]
    maker, name = model.model.split()[:2]
    return Gpu(maker, name, gpus.count, model.memory_gib * 1024, 1.0, gpus.count)


def aks_node_shape(
    pool: str,
    gpus: aks_rules.AksGpus,
    mig_profile: str | None,
    labels: Mapping[str, str],
    taints: Sequence[Mapping],
    sizes: tuple[int, int, int],
    resource: str,
    aks: AksFacts,
    *,
    well_known: WellKnownLabels,
    os: str = "linux",
) -> NodeShape:
    """An AKS GPU pool's nodes: the kubelet's and Azure's cloud-node-manager's labels (`node_labels`:
    the VM size; not the deprecated spellings, aks.deprecatedNodeLabels; the zone not known), AKS's
    pool label, the pool's labels and taints, and nvidia.com/gpu per GPU or per MIG instance (the
    device plugin's single strategy), advertised only where the plugin's DaemonSet lands. VM sizes'
    CPU, memory and architecture are not in the catalog: not judged."""
    kubelet, uncertain = node_labels(
        well_known, os=os, arch=None, instance_type=gpus.vm_size, cloud_deprecated=aks.deprecated_node_labels.supported
    )
    return _uncatalogued(
        pool,
        gpus.vm_size,
        {**kubelet, **labels, aks.pool_label: pool},
        taints,
        {resource: aks_rules.gpu_resources_per_node(gpus, mig_profile, aks)},
        sizes,
        plugin_resources=frozenset({resource}),
        uncertain_labels=uncertain,
    )
