"""The accelerated groups of a plan, read from its resources alone (so `pulumi preview --json` output
reads the same as gpufleet's plans): EKS node groups, ECS capacity providers (through their Auto
Scaling group and launch template), ACK, GKE and AKS node pools and Karpenter NodePools, each with its instance type, sizes, AMI,
purchase option, taints and what one instance carries (GPUs, Neuron chips and cores, EFA interfaces).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from gpufleet.apis.values import decimal
from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import UnknownInstanceType
from gpufleet.plans.index import mapping, str_or
from gpufleet.rules import ack as ack_rules
from gpufleet.rules import aks as aks_rules
from gpufleet.rules import gke as gke_rules
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules.efa import EFA_TYPES
from gpufleet.rules.eks import node_group_name
from gpufleet.rules.k8s import describe_taint
from gpufleet.simulate import karpenter_pools

# What a group's instances carry, as counted in findings, diffs and diagrams: totals() key, noun.
CARRIED = (("gpus", "GPU"), ("neuronChips", "Neuron chip"), ("efaInterfaces", "EFA interface"))


@dataclass
class Group:
    platform: str  # eks | ecs | ack
    name: str
    urn: str
    instance_type: str
    sizes: dict[str, int | None]  # min, desired, max
    ami: str | None  # EKS AMI type, ECS AMI variant, ACK sharing mode
    purchase: str | None
    taints: list[str] = field(default_factory=list)
    gpus: int = 0  # per instance
    neuron_chips: int = 0
    neuron_cores: int = 0
    efa_interfaces: int = 0
    template_urn: str | None = None  # the launch template whose change rolls the group's instances
    cloud: str | None = None  # whose prices apply: aws, gcp, azure (None: no price source, Alibaba)
    zones: tuple[str, ...] = ()  # the zones the plan names for the group (spot prices differ by zone)
    priced_accelerator: tuple[str, int] | None = None  # GCP: the GPUs priced apart from the machine type
    gpu_fraction: float = 0  # a fractional-GPU type's share of a GPU per instance (G6f)
    region: str | None = None  # where the resource itself says (a GKE pool's location, an AKS cluster's); else its provider's

    def totals(self) -> dict[str, int]:
        n = self.sizes.get("desired") or 0
        return {
            "gpus": self.gpus * n,
            "neuronChips": self.neuron_chips * n,
            "neuronCores": self.neuron_cores * n,
            "efaInterfaces": self.efa_interfaces * n,
        }

    def as_dict(self) -> dict:
        return {
            "platform": self.platform,
            "group": self.name,
            "urn": self.urn,
            "instanceType": self.instance_type,
            "instances": self.sizes,
            "ami": self.ami,
            "purchase": self.purchase,
            "taints": self.taints,
            "perInstance": {
                "gpus": self.gpus,
                "neuronChips": self.neuron_chips,
                "neuronCores": self.neuron_cores,
                "efaInterfaces": self.efa_interfaces,
            },
            "total": self.totals(),
        }


def _linked(resource: Mapping, key: str, by_urn: Mapping[str, Mapping], type_: str) -> Mapping | None:
    for urn in (resource.get("propertyDependencies") or {}).get(key, []):
        if by_urn.get(urn, {}).get("type") == type_:
            return by_urn[urn]
    return None


def _accelerators(group: Group) -> None:
    try:
        it = catalog.load().get(group.instance_type)
    except UnknownInstanceType:
        return
    group.gpus = gpu_rules.whole_gpus(it) or 0
    if it.gpu is not None and it.gpu.fractional:
        group.gpu_fraction = it.gpu.partition_size * it.gpu.logical_count
    if it.neuron is not None:
        group.neuron_chips = it.neuron.count
        group.neuron_cores = it.neuron.count * it.neuron.cores_per_device


def _efa(template: Mapping | None) -> int:
    interfaces = (template or {}).get("inputs", {}).get("networkInterfaces") or []
    return sum(1 for i in interfaces if isinstance(i, dict) and i.get("interfaceType") in EFA_TYPES)


def _eks(r: Mapping, by_urn: Mapping[str, Mapping]) -> Group:
    inputs = r["inputs"]
    template = _linked(r, "launchTemplate", by_urn, tokens.LAUNCH_TEMPLATE)
    types = inputs.get("instanceTypes") or [(template or {}).get("inputs", {}).get("instanceType") or "?"]
    scaling = inputs.get("scalingConfig") or {}
    group = Group(
        "eks",
        node_group_name(inputs, r["name"]),
        r["urn"],
        types[0],
        {"min": scaling.get("minSize"), "desired": scaling.get("desiredSize"), "max": scaling.get("maxSize")},
        inputs.get("amiType"),
        inputs.get("capacityType") or "ON_DEMAND",
        sorted(describe_taint(t) for t in inputs.get("taints") or [] if isinstance(t, dict)),
        efa_interfaces=_efa(template),
        template_urn=template["urn"] if template else None,
        cloud="aws",
    )
    _accelerators(group)
    return group


def _ecs(r: Mapping, by_urn: Mapping[str, Mapping]) -> Group | None:
    asg = _linked(r, "autoScalingGroupProvider", by_urn, tokens.ASG)
    # A Spot group names its template inside its mixed instances policy.
    template = (
        (
            _linked(asg, "launchTemplate", by_urn, tokens.LAUNCH_TEMPLATE)
            or _linked(asg, "mixedInstancesPolicy", by_urn, tokens.LAUNCH_TEMPLATE)
        )
        if asg
        else None
    )
    if asg is None or template is None:  # (no template without asg)
        return None
    lt, sizes = template["inputs"], asg["inputs"]
    ami = catalog.ecs_amis().get(lt.get("imageId") or "")
    market = (lt.get("instanceMarketOptions") or {}).get("marketType")
    distribution = (sizes.get("mixedInstancesPolicy") or {}).get("instancesDistribution") or {}
    if distribution and distribution.get("onDemandPercentageAboveBaseCapacity", 100) == 0 and not distribution.get("onDemandBaseCapacity"):
        market = "spot"
    group = Group(
        "ecs",
        r["inputs"].get("name") or r["name"],
        r["urn"],
        lt.get("instanceType") or "?",
        {"min": sizes.get("minSize"), "desired": sizes.get("desiredCapacity"), "max": sizes.get("maxSize")},
        f"{ami.accelerator} {ami.variant}" if ami else lt.get("imageId"),
        "SPOT" if market == "spot" else "ON_DEMAND",
        efa_interfaces=_efa(template),
        template_urn=template["urn"],
        cloud="aws",
    )
    _accelerators(group)
    return group


def _ack(r: Mapping) -> Group:
    inputs, ack = r["inputs"], catalog.load().facts.ack
    types = inputs.get("instanceTypes") or ["?"]
    scaling = inputs.get("scalingConfig") or {}
    if scaling.get("enable"):
        sizes = {"min": scaling.get("minSize"), "desired": None, "max": scaling.get("maxSize")}
    else:
        desired = decimal(str(inputs.get("desiredSize", "")))
        sizes = {"min": desired, "desired": desired, "max": desired}
    labels = {label.get("key"): label.get("value") for label in inputs.get("labels") or [] if isinstance(label, dict)}
    group = Group(
        "ack",
        inputs.get("nodePoolName") or r["name"],
        r["urn"],
        ", ".join(types),
        sizes,
        ack_rules.pool_mode(labels, ack),
        inputs.get("instanceChargeType") or "PostPaid",
        sorted(describe_taint(t) for t in inputs.get("taints") or [] if isinstance(t, dict)),
    )
    group.gpus = ack_rules.pool_gpus(types, ack)
    return group


def _gke(r: Mapping, plain: bool = False) -> Group | None:
    """A GKE pool with GPUs: nvidia.com/gpu per node counts MIG slices and sharing clients. `plain`:
    a pool without GPUs too (it costs money), with none counted."""
    inputs, gke = r["inputs"], catalog.load().facts.gke
    config = inputs.get("nodeConfig") or {}
    first: Mapping = next(iter(config.get("guestAccelerators") or []), {}) or {}
    machine_type = config.get("machineType") or gke.default_machine_type.value
    count = first.get("count")
    gpus: gke_rules.GkeGpus | str | None = gke_rules.gpus(machine_type, first.get("type"), count if isinstance(count, int) else None, gke)
    if isinstance(gpus, str):
        if not plain or first or machine_type in gke.machine_types:
            return None  # a GPU pool the rules refuse is not counted as one without GPUs
        gpus = None
    zones = gke_rules.pool_zones(inputs)  # None: a regional pool's zones are its cluster's (sizes unknown)
    scaling = inputs.get("autoscaling") or {}
    if scaling:
        low, high = scaling.get("minNodeCount"), scaling.get("maxNodeCount")
        sizes = {"min": _times(low, zones), "desired": _times(low, zones), "max": _times(high, zones)}
    else:
        n = _times(inputs.get("nodeCount"), zones)
        sizes = {"min": n, "desired": n, "max": n}
    if gpus is None:
        group = Group(
            "gke",
            gke_rules.pool_name(inputs, r["name"]),
            r["urn"],
            machine_type,
            sizes,
            None,
            "SPOT" if config.get("spot") else "ON_DEMAND",
            cloud="gcp",
            region=gke_rules.location_region(inputs.get("location")),
        )
        group.zones = tuple(z for z in inputs.get("nodeLocations") or [] if isinstance(z, str))
        return group
    sharing = first.get("gpuSharingConfig") or {}
    ami = (first.get("gpuDriverInstallationConfig") or {}).get("gpuDriverVersion")
    if first.get("gpuPartitionSize"):
        ami = f"{ami}, MIG {first['gpuPartitionSize']}"
    if sharing:
        ami = f"{ami}, {sharing.get('gpuSharingStrategy')} x{sharing.get('maxSharedClientsPerGpu')}"
    group = Group(
        "gke",
        gke_rules.pool_name(inputs, r["name"]),
        r["urn"],
        machine_type,
        sizes,
        ami,
        "SPOT" if config.get("spot") else "ON_DEMAND",
        cloud="gcp",
        region=gke_rules.location_region(inputs.get("location")),
    )
    group.gpus = gpus.count
    locations = inputs.get("nodeLocations") or ([inputs["location"]] if gke_rules.is_zone(inputs.get("location")) else [])
    group.zones = tuple(z for z in locations if isinstance(z, str))
    group.priced_accelerator = (gke.price_names.get(gpus.accelerator, gpus.accelerator), gpus.count)
    return group


def _cluster_location(r: Mapping, by_urn: Mapping[str, Mapping]) -> str | None:
    """An AKS pool's region: its cluster's location, where the plan holds the cluster."""
    for urn in (r.get("propertyDependencies") or {}).get("kubernetesClusterId", []):
        location = (by_urn.get(urn, {}).get("inputs") or {}).get("location")
        if isinstance(location, str):
            return location
    return None


def _aks_sizes(inputs: Mapping) -> dict[str, int | None]:
    if inputs.get("autoScalingEnabled"):
        return {"min": inputs.get("minCount"), "desired": inputs.get("minCount"), "max": inputs.get("maxCount")}
    return {"min": inputs.get("nodeCount"), "desired": inputs.get("nodeCount"), "max": inputs.get("nodeCount")}


def _aks(r: Mapping, by_urn: Mapping[str, Mapping], plain: bool = False) -> Group | None:
    inputs, aks = r["inputs"], catalog.load().facts.aks
    node = aks_rules.gpus(str(inputs.get("vmSize")), aks)
    sizes = _aks_sizes(inputs)
    if isinstance(node, str):
        if not plain or not isinstance(inputs.get("vmSize"), str):
            return None
        return Group(
            "aks",
            inputs.get("name") or r["name"],
            r["urn"],
            inputs["vmSize"],
            sizes,
            None,
            inputs.get("priority") or "Regular",
            cloud="azure",
            region=_cluster_location(r, by_urn),
        )
    ami = f"driver {inputs.get('gpuDriver') or 'Install'}" + (f", {inputs['gpuInstance']}" if inputs.get("gpuInstance") else "")
    taints = sorted(t for t in inputs.get("nodeTaints") or [] if isinstance(t, str))
    group = Group(
        "aks",
        inputs.get("name") or r["name"],
        r["urn"],
        node.vm_size,
        sizes,
        ami,
        inputs.get("priority") or "Regular",
        taints,
        cloud="azure",
        region=_cluster_location(r, by_urn),
    )
    group.gpus = node.count
    return group


def _karpenter(r: Mapping) -> Group | None:
    """A Karpenter NodePool whose every type has accelerators: none at rest, at most as many of its
    largest type as its limits allow (unbounded without limits), that type standing for the pool."""
    cat = catalog.load()
    metadata, spec = mapping(r["inputs"].get("metadata")), mapping(r["inputs"].get("spec"))
    name = str_or(metadata.get("name"), r["name"])
    pool = karpenter_pools.read_pool(name, spec, (None, None), [], cat, [])
    if pool is None:
        return None
    types = [cat.get(c.shape.instance_type) for c in pool.candidates]
    if not types or any(not (it.gpu and it.gpu.count) and it.neuron is None for it in types):
        return None
    largest = max(
        pool.candidates,
        key=lambda c: (
            c.capacity.get(cat.facts.eks.accelerator_resources.nvidia, 0) + c.capacity.get(cat.facts.eks.accelerator_resources.neuron, 0),
            c.vcpus,
            c.shape.instance_type,
        ),
    )
    bounds = [limit // largest.capacity[k] for k, limit in pool.limits.items() if largest.capacity.get(k)] + (
        [pool.limits["nodes"]] if "nodes" in pool.limits else []
    )
    capacity = next(
        (
            t
            for t in mapping(spec.get("template")).get("spec", {}).get("requirements") or []
            if isinstance(t, dict) and t.get("key") == cat.facts.karpenter.labels.capacity_type
        ),
        {},
    )
    group = Group(
        "karpenter",
        name,
        r["urn"],
        largest.shape.instance_type,
        {"min": 0, "desired": 0, "max": min(bounds) if bounds else None},
        None,
        "/".join(capacity.get("values") or []) or None,
        sorted(describe_taint(cast(dict, t)) for t in largest.shape.taints),  # describe_taint reads a taint's keys only
        cloud="aws",
    )
    it = cat.get(largest.shape.instance_type)
    group.gpus = gpu_rules.whole_gpus(it) or 0
    if it.neuron is not None:
        group.neuron_chips, group.neuron_cores = it.neuron.count, it.neuron.count * it.neuron.cores_per_device
    group.efa_interfaces = largest.capacity.get(cat.facts.eks.efa_resource, 0)
    return group


def _times(value: object, zones: int | None) -> int | None:
    return value * zones if isinstance(value, int) and zones is not None else None


def accelerated_groups(resources: Sequence[Mapping]) -> dict[str, Group]:
    """The plan's groups by URN."""
    by_urn = {r["urn"]: r for r in resources}
    groups: dict[str, Group] = {}
    for r in resources:
        group: Group | None
        if r["type"] == tokens.EKS_NODE_GROUP:
            group = _eks(r, by_urn)
        elif r["type"] == tokens.ECS_CAPACITY_PROVIDER:
            group = _ecs(r, by_urn)
        elif r["type"] == tokens.ACK_NODE_POOL:
            group = _ack(r)
        elif r["type"] == tokens.GKE_NODE_POOL:
            group = _gke(r)
        elif r["type"] == tokens.AKS_NODE_POOL:
            group = _aks(r, by_urn)
        elif r["type"] == tokens.KARPENTER_NODE_POOL:
            group = _karpenter(r)
        else:
            continue
        if group is not None:
            groups[r["urn"]] = group
    return groups


def _aks_default_pool(r: Mapping) -> Group | None:
    """The default (system) pool an AKS cluster resource carries: no GPUs, but instances all the same."""
    pool = r["inputs"].get("defaultNodePool") or {}
    if not isinstance(pool, dict) or not isinstance(pool.get("vmSize"), str):
        return None
    location = r["inputs"].get("location")
    return Group(
        "aks",
        pool.get("name") or "default",
        r["urn"],
        pool["vmSize"],
        _aks_sizes(pool),
        None,
        "Regular",
        cloud="azure",
        region=location if isinstance(location, str) else None,
    )


def priced_groups(resources: Sequence[Mapping]) -> dict[str, Group]:
    """Every group whose instances cost money: the accelerated groups, and the GKE and AKS pools
    without GPUs (system pools, an AKS cluster's default pool) that accelerated_groups leaves out."""
    groups = accelerated_groups(resources)
    by_urn = {r["urn"]: r for r in resources}
    for r in resources:
        if r["urn"] in groups:
            continue
        if r["type"] == tokens.GKE_NODE_POOL:
            group = _gke(r, plain=True)
        elif r["type"] == tokens.AKS_NODE_POOL:
            group = _aks(r, by_urn, plain=True)
        elif r["type"] == tokens.AKS_CLUSTER:
            group = _aks_default_pool(r)
        else:
            continue
        if group is not None:
            groups[r["urn"]] = group
    return groups
