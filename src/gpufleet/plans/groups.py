"""The accelerated groups of a plan, read from its resources alone (so `pulumi preview --json` output
reads the same as gpufleet's plans): EKS node groups, ECS capacity providers (through their Auto
Scaling group and launch template), ACK, GKE and AKS node pools and Karpenter NodePools, each with its instance type, sizes, AMI,
purchase option, taints and what one instance carries (GPUs, Neuron chips and cores, EFA interfaces).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from gpufleet.apis.values import decimal
from gpufleet.catalog import catalog, tokens
from gpufleet.catalog.catalog import Catalog, UnknownInstanceType
from gpufleet.plans.index import Index, Resource, mapping, seq, str_or
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
    derived: str | None = None  # why a fact of the group is not the plan's own but a default it implies

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


def _linked(resource: Resource, key: str, index: Index, type_: str) -> Resource | None:
    """The resource of `type_` that the input `key` was computed from (its id), if the plan has it."""
    return next(iter(index.deps(resource, type_, prop=key)), None)


def _accelerators(group: Group, cat: Catalog) -> None:
    """What one instance carries. Several types (a mixed policy, a managed group's list) count only
    where every one of them carries the same: whichever is launched, the count stands."""
    try:
        types = [cat.get(name) for name in group.instance_type.split(", ")]
    except UnknownInstanceType:
        return
    carried = {(gpu_rules.whole_gpus(it), it.gpu and it.gpu.fractional, it.neuron) for it in types}
    if len(carried) != 1:
        return
    it = types[0]
    group.gpus = gpu_rules.whole_gpus(it) or 0
    if it.gpu is not None and it.gpu.fractional:
        group.gpu_fraction = it.gpu.partition_size * it.gpu.logical_count
    if it.neuron is not None:
        group.neuron_chips = it.neuron.count
        group.neuron_cores = it.neuron.count * it.neuron.cores_per_device


def efa_interfaces(template: Resource | None) -> int:
    """The EFA interfaces (efa and efa-only) a launch template gives each instance."""
    interfaces = seq(template.props.get("networkInterfaces")) if template else []
    return sum(1 for i in interfaces if isinstance(i, Mapping) and i.get("interfaceType") in EFA_TYPES)


def eks_instance_types(group: Resource, index: Index, cat: Catalog) -> tuple[list[str], str | None]:
    """The types an EKS managed node group runs, and why they are derived (None: the plan names them):
    its instanceTypes, else its launch template's (a capacity block names the type there only), else,
    where neither names one, the type the EKS API launches for a group that names none."""
    given = group.props.get("instanceTypes")
    names = [t for t in seq(given) if isinstance(t, str)]
    templates = index.deps(group, tokens.LAUNCH_TEMPLATE)
    if not names:
        names = [t for t in (template.props.get("instanceType") for template in templates) if isinstance(t, str)]
    if not names and not given and (templates or "launchTemplate" not in group.props):
        default = cat.facts.eks.node_group_default_instance_type
        return [default.value], f"instance type {default.value}: EKS's default for a group that names none ({default.source})"
    return list(dict.fromkeys(names)), None


def eks_efa_interfaces(group: Resource, index: Index) -> int:
    """The EFA interfaces each of a managed group's instances gets: its launch template's."""
    return sum(efa_interfaces(template) for template in index.deps(group, tokens.LAUNCH_TEMPLATE))


def _eks(r: Resource, index: Index, cat: Catalog) -> Group:
    inputs = r.props
    template = _linked(r, "launchTemplate", index, tokens.LAUNCH_TEMPLATE)
    types, derived = eks_instance_types(r, index, cat)
    scaling = inputs.get("scalingConfig") or {}
    group = Group(
        "eks",
        node_group_name(inputs, r.name),
        r.urn,
        ", ".join(types) or "?",
        {"min": scaling.get("minSize"), "desired": scaling.get("desiredSize"), "max": scaling.get("maxSize")},
        inputs.get("amiType"),
        inputs.get("capacityType") or "ON_DEMAND",
        sorted(describe_taint(t) for t in inputs.get("taints") or [] if isinstance(t, dict)),
        efa_interfaces=eks_efa_interfaces(r, index),
        template_urn=template.urn if template else None,
        cloud="aws",
        derived=derived,
    )
    _accelerators(group, cat)
    return group


def _ecs(r: Resource, index: Index, cat: Catalog) -> Group | None:
    asg = _linked(r, "autoScalingGroupProvider", index, tokens.ASG)
    if asg is None:
        return None
    types, source = asg_launch(asg, index)
    if source is None:
        return None
    image = str_or(source.props.get("imageId"), None)
    ami = catalog.ecs_amis().get(image or "")
    group = Group(
        "ecs",
        str_or(r.props.get("name"), r.name),
        r.urn,
        ", ".join(types) or "?",
        asg_sizes(asg.props),
        f"{ami.accelerator} {ami.variant}" if ami else image,
        "SPOT" if _spot(source, asg.props) else "ON_DEMAND",
        efa_interfaces=efa_interfaces(source),
        template_urn=source.urn,
        cloud="aws",
    )
    _accelerators(group, cat)
    return group


def _size(value: object) -> int | None:
    """A size as given: the pack receives the plan's numbers as floats; anything else is not known."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def asg_sizes(inputs: Mapping) -> dict[str, int | None]:
    """An Auto Scaling group's sizes. Without desiredCapacity the group starts at its minimum
    (botocore's CreateAutoScalingGroup: "If you do not specify a desired capacity, the default is the
    minimum size of the group")."""
    low, desired = _size(inputs.get("minSize")), _size(inputs.get("desiredCapacity"))
    return {"min": low, "desired": desired if desired is not None else low, "max": _size(inputs.get("maxSize"))}


def asg_launch(asg: Resource, index: Index) -> tuple[list[str], Resource | None]:
    """The instance types an Auto Scaling group launches, and what it launches them from (its launch
    template, else its launch configuration): a mixed instances policy's overrides, else the
    template's type, else the configuration's. No types: the plan does not say (a template or a
    configuration outside it)."""
    policy = mapping(asg.props.get("mixedInstancesPolicy"))
    template = _linked(asg, "launchTemplate", index, tokens.LAUNCH_TEMPLATE) or _linked(
        asg, "mixedInstancesPolicy", index, tokens.LAUNCH_TEMPLATE
    )
    overrides = [mapping(o).get("instanceType") for o in seq(mapping(policy.get("launchTemplate")).get("overrides"))]
    types = [t for t in overrides if isinstance(t, str)]
    if not types and template is not None and isinstance(template.props.get("instanceType"), str):
        types = [template.props["instanceType"]]
    configuration = _linked(asg, "launchConfiguration", index, tokens.LAUNCH_CONFIGURATION)
    if template is None and configuration is not None and isinstance(configuration.props.get("instanceType"), str):
        types = [configuration.props["instanceType"]]
    return list(dict.fromkeys(types)), template or configuration


def _spot(source: Resource | None, asg_inputs: Mapping) -> bool:
    """Instances bought on Spot: the template's market type (a configuration's spot price), or a mixed
    policy with no on-demand share."""
    props = source.props if source else {}
    market = "spot" if props.get("spotPrice") else mapping(props.get("instanceMarketOptions")).get("marketType")
    distribution = mapping(mapping(asg_inputs.get("mixedInstancesPolicy")).get("instancesDistribution"))
    on_demand = distribution.get("onDemandPercentageAboveBaseCapacity", 100) != 0 or distribution.get("onDemandBaseCapacity")
    return market == "spot" or (bool(distribution) and not on_demand)


def _in_capacity_provider(asg: Resource, index: Index) -> bool:
    """An Auto Scaling group an ECS capacity provider of the plan draws on (that provider is its group)."""
    return any(asg.urn in cp.deps.get("autoScalingGroupProvider", ()) for cp in index.of(tokens.ECS_CAPACITY_PROVIDER))


def _ec2(r: Resource, index: Index, cat: Catalog) -> Group | None:
    """An EC2 instance (one, always running) or an Auto Scaling group no capacity provider of the plan
    draws on; several types (a mixed instances policy) are named together and priced as unknown."""
    if r.type == tokens.ASG:
        if _in_capacity_provider(r, index):
            return None
        types, template = asg_launch(r, index)
        sizes = asg_sizes(r.props)
        spot = _spot(template, r.props)
        zones = tuple(z for z in seq(r.props.get("availabilityZones")) if isinstance(z, str))
    else:
        template = _linked(r, "launchTemplate", index, tokens.LAUNCH_TEMPLATE)
        own = r.props.get("instanceType") or (template.props.get("instanceType") if template else None)
        types = [own] if isinstance(own, str) else []
        sizes = {"min": 1, "desired": 1, "max": 1}
        spot = _spot(template, {}) or mapping(r.props.get("instanceMarketOptions")).get("marketType") == "spot"
        zone = r.props.get("availabilityZone")
        zones = (zone,) if isinstance(zone, str) else ()
    group = Group(
        "ec2",
        str_or(mapping(r.props.get("tags")).get("Name"), r.name),
        r.urn,
        ", ".join(types) or "?",
        sizes,
        str_or(r.props.get("ami"), None) or (str_or(template.props.get("imageId"), None) if template else None),
        "SPOT" if spot else "ON_DEMAND",
        efa_interfaces=efa_interfaces(template),
        template_urn=template.urn if template else None,
        cloud="aws",
        zones=zones,
    )
    _accelerators(group, cat)
    return group


def _ack(r: Resource, cat: Catalog) -> Group:
    inputs, ack = r.props, cat.facts.ack
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
        inputs.get("nodePoolName") or r.name,
        r.urn,
        ", ".join(types),
        sizes,
        ack_rules.pool_mode(labels, ack),
        inputs.get("instanceChargeType") or "PostPaid",
        sorted(describe_taint(t) for t in inputs.get("taints") or [] if isinstance(t, dict)),
    )
    group.gpus = ack_rules.pool_gpus(types, ack)
    return group


def _gke(r: Resource, cat: Catalog, plain: bool = False) -> Group | None:
    """A GKE pool with GPUs: nvidia.com/gpu per node counts MIG slices and sharing clients. `plain`:
    a pool without GPUs too (it costs money), with none counted."""
    inputs, gke = r.props, cat.facts.gke
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
    ami: str | None = None  # a pool without GPUs has no driver, partition or sharing to name
    if gpus is not None:
        sharing = first.get("gpuSharingConfig") or {}
        ami = (first.get("gpuDriverInstallationConfig") or {}).get("gpuDriverVersion")
        if first.get("gpuPartitionSize"):
            ami = f"{ami}, MIG {first['gpuPartitionSize']}"
        if sharing:
            ami = f"{ami}, {sharing.get('gpuSharingStrategy')} x{sharing.get('maxSharedClientsPerGpu')}"
    group = Group(
        "gke",
        gke_rules.pool_name(inputs, r.name),
        r.urn,
        machine_type,
        sizes,
        ami,
        "SPOT" if config.get("spot") else "ON_DEMAND",
        cloud="gcp",
        region=gke_rules.location_region(inputs.get("location")),
    )
    if gpus is None:
        group.zones = tuple(z for z in inputs.get("nodeLocations") or [] if isinstance(z, str))
        return group
    group.gpus = gpus.count
    locations = inputs.get("nodeLocations") or ([inputs["location"]] if gke_rules.is_zone(inputs.get("location")) else [])
    group.zones = tuple(z for z in locations if isinstance(z, str))
    group.priced_accelerator = (gke.price_names.get(gpus.accelerator, gpus.accelerator), gpus.count)
    return group


def _cluster_location(r: Resource, index: Index) -> str | None:
    """An AKS pool's region: its cluster's location, where the plan holds the cluster."""
    for cluster in index.deps(r, tokens.AKS_CLUSTER, tokens.AKS_NATIVE_CLUSTER, prop="kubernetesClusterId"):
        location = cluster.props.get("location")
        if isinstance(location, str):
            return location
    return None


def _aks_sizes(inputs: Mapping) -> dict[str, int | None]:
    if inputs.get("autoScalingEnabled"):
        return {"min": inputs.get("minCount"), "desired": inputs.get("minCount"), "max": inputs.get("maxCount")}
    return {"min": inputs.get("nodeCount"), "desired": inputs.get("nodeCount"), "max": inputs.get("nodeCount")}


def _aks(r: Resource, index: Index, cat: Catalog, plain: bool = False) -> Group | None:
    inputs, aks = r.props, cat.facts.aks
    node = aks_rules.gpus(str(inputs.get("vmSize")), aks)
    sizes = _aks_sizes(inputs)
    if isinstance(node, str):
        if not plain or not isinstance(inputs.get("vmSize"), str):
            return None
        return Group(
            "aks",
            inputs.get("name") or r.name,
            r.urn,
            inputs["vmSize"],
            sizes,
            None,
            inputs.get("priority") or "Regular",
            cloud="azure",
            region=_cluster_location(r, index),
        )
    ami = f"driver {inputs.get('gpuDriver') or 'Install'}" + (f", {inputs['gpuInstance']}" if inputs.get("gpuInstance") else "")
    taints = sorted(t for t in inputs.get("nodeTaints") or [] if isinstance(t, str))
    group = Group(
        "aks",
        inputs.get("name") or r.name,
        r.urn,
        node.vm_size,
        sizes,
        ami,
        inputs.get("priority") or "Regular",
        taints,
        cloud="azure",
        region=_cluster_location(r, index),
    )
    group.gpus = node.count
    return group


def _karpenter(r: Resource, cat: Catalog, plain: bool = False) -> Group | None:
    """A Karpenter NodePool whose every type has accelerators (whole GPUs, GPU slices or Neuron
    chips): none at rest, at most as many of its largest type as its limits allow (unbounded without
    limits), that type standing for the pool. `plain`: a pool of other types too (it costs money)."""
    metadata, spec = mapping(r.props.get("metadata")), mapping(r.props.get("spec"))
    name = str_or(metadata.get("name"), r.name)
    pool = karpenter_pools.read_pool(name, spec, (None, None), [], cat, [])
    if pool is None:
        return None
    types = [cat.get(c.shape.instance_type) for c in pool.candidates]
    if not types or (not plain and any(it.gpu is None and it.neuron is None for it in types)):
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
        r.urn,
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


# The provider whose `region` places a cloud's groups that do not say where they are themselves.
_PROVIDERS = {"aws": tokens.AWS_PROVIDER, "gcp": tokens.GCP_PROVIDER}


def provider_region(resource: Resource, index: Index, cloud: str) -> str | None:
    """The region of the resource's provider (a default provider's is the stack's `aws:region`), or
    the one region every provider of the cloud in the plan names."""
    ref = resource.provider
    if ref is not None:
        provider = index.by_urn.get(ref) or index.by_urn.get(ref.rsplit("::", 1)[0])  # a plan's reference ends in the provider's id
        region = provider.props.get("region") if provider is not None else None
        if isinstance(region, str):
            return region
    found = {r.props.get("region") for r in index.of(_PROVIDERS[cloud])} if cloud in _PROVIDERS else set()
    found.discard(None)
    return next(iter(found)) if len(found) == 1 and isinstance(next(iter(found)), str) else None


def _located(group: Group, r: Resource, index: Index) -> Group:
    """The group with its region: its resource's own, else its provider's (worked out here once)."""
    if group.region is not None or group.cloud is None:
        return group
    return replace(group, region=provider_region(r, index, group.cloud))


def _given(cat: Catalog | None) -> Catalog:
    """The catalog the groups are read against. The diff, its picture and the updates policy call
    `accelerated_groups` without one until issue 51's plan-view work ports them; every other
    caller passes its own."""
    return cat if cat is not None else catalog.load()


def accelerated_groups(resources: Sequence[Resource], cat: Catalog | None = None) -> dict[str, Group]:
    """The plan's groups by URN: every EKS node group, ECS capacity provider and Karpenter NodePool,
    the ACK, GKE and AKS pools with accelerators, and the EC2 instances and Auto Scaling groups of
    accelerated types."""
    cat = _given(cat)
    index = Index(resources)
    groups: dict[str, Group] = {}
    for r in resources:
        group: Group | None
        if r.type == tokens.EKS_NODE_GROUP:
            group = _eks(r, index, cat)
        elif r.type == tokens.ECS_CAPACITY_PROVIDER:
            group = _ecs(r, index, cat)
        elif r.type == tokens.ACK_NODE_POOL:
            group = _ack(r, cat)
        elif r.type == tokens.GKE_NODE_POOL:
            group = _gke(r, cat)
        elif r.type == tokens.AKS_NODE_POOL:
            group = _aks(r, index, cat)
        elif r.type == tokens.KARPENTER_NODE_POOL:
            group = _karpenter(r, cat)
        elif r.type in (tokens.EC2_INSTANCE, tokens.ASG):
            group = _ec2(r, index, cat)
            group = group if group is not None and (group.gpus or group.gpu_fraction or group.neuron_chips) else None
        else:
            continue
        if group is not None:
            groups[r.urn] = _located(group, r, index)
    return groups


def _aks_default_pool(r: Resource) -> Group | None:
    """The default (system) pool an AKS cluster resource carries: no GPUs, but instances all the same."""
    pool = r.props.get("defaultNodePool") or {}
    if not isinstance(pool, dict) or not isinstance(pool.get("vmSize"), str):
        return None
    location = r.props.get("location")
    return Group(
        "aks",
        pool.get("name") or "default",
        r.urn,
        pool["vmSize"],
        _aks_sizes(pool),
        None,
        "Regular",
        cloud="azure",
        region=location if isinstance(location, str) else None,
    )


def priced_groups(resources: Sequence[Resource], cat: Catalog) -> dict[str, Group]:
    """Every group whose instances cost money: the accelerated groups, and what accelerated_groups
    leaves out: GKE and AKS pools without GPUs (system pools, an AKS cluster's default pool), EC2
    instances, Auto Scaling groups and Karpenter NodePools of other types."""
    groups = accelerated_groups(resources, cat)
    index = Index(resources)
    for r in resources:
        if r.urn in groups:
            continue
        group: Group | None
        if r.type == tokens.GKE_NODE_POOL:
            group = _gke(r, cat, plain=True)
        elif r.type == tokens.AKS_NODE_POOL:
            group = _aks(r, index, cat, plain=True)
        elif r.type == tokens.AKS_CLUSTER:
            group = _aks_default_pool(r)
        elif r.type in (tokens.EC2_INSTANCE, tokens.ASG):
            group = _ec2(r, index, cat)
        elif r.type == tokens.KARPENTER_NODE_POOL:
            group = _karpenter(r, cat, plain=True)
        else:
            continue
        if group is not None:
            groups[r.urn] = _located(group, r, index)
    return groups
