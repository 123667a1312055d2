"""The Kubernetes side of a plan's placement: node shapes of its EKS node groups and ACK pools (with
the device plugins that advertise their resources) and the pod templates of every object, read from
the resources of any program."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import Chart
from gpufleet.plans import dra, groups, libraries
from gpufleet.plans.index import CONFIG_FILES, Index, Resource, as_int, mapping, seq, str_or, truthy
from gpufleet.rules import aks as aks_rules
from gpufleet.rules import gke as gke_rules
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules.eks import node_group_name
from gpufleet.simulate import k8s_scheduler, k8s_workloads, node_capacity


def node_group_instance_type(index: Index, group: Resource, cat: Catalog):
    """The one type a managed group runs: its instanceTypes, else its launch template's (capacity blocks)."""
    return _instance_type(index, group, cat)[0]


def _instance_type(index: Index, group: Resource, cat: Catalog):
    """(the one type a managed group runs, why it is derived or None), as the group reader reads it."""
    names, derived = groups.eks_instance_types(group, index, cat)
    return (cat.find(names[0]) if len(names) == 1 else None), derived


def _zones(index: Index, group: Resource) -> list[str]:
    subnets = index.deps(group, tokens.SUBNET)
    zones = [s.props.get("availabilityZone") for s in subnets]
    return [z for z in zones if isinstance(z, str)] if subnets and all(isinstance(z, str) for z in zones) else []


def plugins(index: Index, cat: Catalog) -> list[tuple[str, Chart, Resource]]:
    by_chart = {c.chart: (key, c) for key, c in cat.facts.charts.plugins().items()}
    return [(*by_chart[r.props["chart"]], r) for r in index.of(tokens.HELM_RELEASE) if r.props.get("chart") in by_chart]


def _kubernetes_version(index: Index, group: Resource) -> str | None:
    """A node group's Kubernetes version: its own, else its cluster's (None where neither is known)."""
    clusters = index.deps(group, tokens.EKS_CLUSTER)
    version = group.props.get("version") or (clusters[0].props.get("version") if clusters else None)
    return version if isinstance(version, str) else None


def node_shapes(index: Index, cat: Catalog, gpu_sharing: dict) -> tuple[list[k8s_scheduler.NodeShape], list[str]]:
    shapes, gaps = [], []
    for group in index.of(tokens.EKS_NODE_GROUP):
        it, derived = _instance_type(index, group, cat)
        if it is None:
            gaps.append(f"node group {group.name!r}: its instance type is not one known type")
            continue
        scaling = group.props.get("scalingConfig") or {}
        sizes = (as_int(scaling.get("minSize")), as_int(scaling.get("desiredSize")), as_int(scaling.get("maxSize"), 1))
        taints = [k8s_rules.taint(t, cat.facts.eks) for t in group.props.get("taints") or [] if isinstance(t, Mapping)]
        ami_type = str_or(group.props.get("amiType"), "AL2023_x86_64_STANDARD")
        labels = {str(k): str(v) for k, v in (group.props.get("labels") or {}).items()}
        name = node_group_name(group.props, group.name)
        shapes.append(
            node_capacity.eks_node_shape(
                it,
                group=name,
                ami_type=ami_type,
                labels=labels,
                taints=taints,
                sizes=sizes,
                capacity_type=group.props.get("capacityType") or "ON_DEMAND",
                zones=_zones(index, group),
                efa_interfaces=groups.eks_efa_interfaces(group, index),
                gpu_sharing=gpu_sharing,
                facts=cat.facts,
                kubernetes_version=_kubernetes_version(index, group),
                derived=derived,
            )
        )
    # Each cloud's pools: a node shape, or why none; a pool of a cluster outside the plan shares it
    # with pools the plan does not hold (AKS's cluster, created or not, is read below).
    for cloud, pool_type, read, cluster_type in (
        ("ACK", tokens.ACK_NODE_POOL, _ack_shape, tokens.ACK_CLUSTER),
        ("GKE", tokens.GKE_NODE_POOL, _gke_shape, tokens.GKE_CLUSTER),
        ("AKS", tokens.AKS_NODE_POOL, _aks_shape, None),
    ):
        for pool in index.of(pool_type):
            shape = read(pool, cat)
            if isinstance(shape, str):
                gaps.append(f"{cloud} node pool {pool.name!r}: {shape}")
            else:
                shapes.append(shape)
        if cluster_type is not None and index.of(pool_type) and not index.of(cluster_type):
            gaps.append(f"the {cloud} node pools join an existing cluster: its other node pools are not in the plan")
    for cluster in index.of(tokens.AKS_CLUSTER):
        default_pool = _aks_default_pool(cluster, cat)
        if default_pool is not None:
            shapes.append(default_pool)
    derived, derived_gaps = libraries.library_node_shapes(index, cat, gpu_sharing)
    shapes += derived
    gaps += derived_gaps
    for cluster in index.of(tokens.GKE_CLUSTER):
        default_pool = _gke_default_pool(cluster, cat)
        if default_pool is not None:
            shapes.append(default_pool)
            if not cluster.props.get("nodeLocations") and not gke_rules.is_zone(cluster.props.get("location")):
                gaps.append(
                    f"GKE cluster {cluster.name!r} is regional or its location unknown: its default pool has {default_pool.nodes} nodes "
                    "in each of its zones, which the plan does not name"
                )
    if index.of(tokens.AKS_NODE_POOL) and not index.of(tokens.AKS_CLUSTER):
        gaps.append("the AKS node pools join an existing cluster: its other node pools are not in the plan")
    native, native_gaps = _aks_native_pools(index, cat)
    return shapes + native, gaps + native_gaps


# azure-native's agent pool fields, in the classic provider's names the AKS readers take.
_AKS_NATIVE_FIELDS = {"count": "nodeCount", "enableAutoScaling": "autoScalingEnabled", "gpuInstanceProfile": "gpuInstance"}


def _aks_native_pools(index: Index, cat: Catalog) -> tuple[list[k8s_scheduler.NodeShape], list[str]]:
    """azure-native's AKS pools (a ManagedCluster's agentPoolProfiles, and AgentPools), read as the
    classic provider's: a GPU VM size of the curated table as its GPUs; a System pool of another
    size by its labels and taints only, as a classic cluster's default pool."""
    pools = [(c, p) for c in index.of(tokens.AKS_NATIVE_CLUSTER) for p in seq(c.props.get("agentPoolProfiles")) if isinstance(p, Mapping)]
    pools += [(a, {**a.props, "name": a.props.get("agentPoolName", a.name)}) for a in index.of(tokens.AKS_NATIVE_AGENT_POOL)]
    shapes, gaps = [], []
    for owner, profile in pools:
        props = {_AKS_NATIVE_FIELDS.get(k, k): v for k, v in profile.items()}
        name = str_or(props.get("name"), owner.name)
        if props.get("mode") == "System" and props.get("vmSize") not in cat.facts.aks.vm_sizes:
            labels = {**{str(k): str(v) for k, v in mapping(props.get("nodeLabels")).items()}, cat.facts.aks.pool_label: name}
            taints = [t for t in (aks_rules.parse_taint(x) for x in seq(props.get("nodeTaints")) if isinstance(x, str)) if t]
            shapes.append(_aks_plain(name, props.get("vmSize"), labels, taints, _aks_sizes(props), cat, _aks_os(props)))
            continue
        shape = _aks_shape(Resource(owner.urn, tokens.AKS_NODE_POOL, name, {**props, "name": name}), cat)
        if isinstance(shape, str):
            gaps.append(f"AKS node pool {name!r}: {shape}")
        else:
            shapes.append(shape)
    if index.of(tokens.AKS_NATIVE_AGENT_POOL) and not index.of(tokens.AKS_NATIVE_CLUSTER):
        gaps.append("the AKS agent pools join an existing cluster: its other node pools are not in the plan")
    return shapes, gaps


def _aks_shape(pool: Resource, cat: Catalog) -> k8s_scheduler.NodeShape | str:
    props, aks = pool.props, cat.facts.aks
    gpus = aks_rules.gpus(str(props.get("vmSize")), aks)
    if isinstance(gpus, str):
        return gpus
    profile = props.get("gpuInstance") if isinstance(props.get("gpuInstance"), str) else None
    if profile is not None and aks_rules.mig_problem(gpus, profile, aks):
        return f"{profile} is not a GPU instance profile of {gpus.vm_size}"
    sizes = _aks_sizes(props)
    taints = [t for t in (aks_rules.parse_taint(x) for x in props.get("nodeTaints") or [] if isinstance(x, str)) if t]
    labels = {str(k): str(v) for k, v in (props.get("nodeLabels") or {}).items()}
    name = str_or(props.get("name"), pool.name)
    return node_capacity.aks_node_shape(
        name,
        gpus,
        profile,
        labels,
        taints,
        sizes,
        cat.facts.eks.accelerator_resources.nvidia,
        aks,
        well_known=cat.facts.eks.well_known_labels,
        os=_aks_os(props),
    )


def _aks_os(props: Mapping) -> str:
    return "windows" if props.get("osType") == "Windows" else "linux"


def _aks_plain(
    name: str,
    vm_size: object,
    labels: Mapping[str, str],
    taints: Sequence[Mapping],
    sizes: tuple[int, int, int],
    cat: Catalog,
    os: str = "linux",
) -> k8s_scheduler.NodeShape:
    """An AKS pool of a VM size the catalog does not hold, with the labels AKS's kubelet and
    cloud-node-manager give it."""
    return node_capacity.plain_node_shape(
        name,
        vm_size if isinstance(vm_size, str) else None,
        labels,
        taints,
        sizes,
        names=cat.facts.eks.well_known_labels,
        cloud_deprecated=cat.facts.aks.deprecated_node_labels.supported,
        os=os,
    )


def _aks_sizes(props: Mapping) -> tuple[int, int, int]:
    if props.get("autoScalingEnabled"):
        return (as_int(props.get("minCount")), as_int(props.get("minCount")), as_int(props.get("maxCount"), 1))
    count = as_int(props.get("nodeCount"), 1)
    return (count, count, count)


def _aks_default_pool(cluster: Resource, cat: Catalog) -> k8s_scheduler.NodeShape | None:
    """A created cluster's default (system) pool: where CoreDNS and operators' controllers run. Its
    VM size's CPU and memory are not in the catalog: where a pod may go is judged, not what fits."""
    pool = cluster.props.get("defaultNodePool")
    if not isinstance(pool, Mapping):
        return None
    aks = cat.facts.aks
    name = str_or(pool.get("name"), "default")
    labels = {**{str(k): str(v) for k, v in (pool.get("nodeLabels") or {}).items()}, aks.pool_label: name}
    taint = aks.critical_addons_taint
    taints = [{"key": taint.key, "value": taint.value, "effect": taint.effect}] if truthy(pool.get("onlyCriticalAddonsEnabled")) else []
    # A system pool runs Linux (learn.microsoft.com/azure/aks/use-system-pools: its osType is Linux).
    return _aks_plain(name, pool.get("vmSize"), labels, taints, _aks_sizes(pool), cat)


def _gke_default_pool(cluster: Resource, cat: Catalog) -> k8s_scheduler.NodeShape | None:
    """The pool GKE makes from a cluster's own initialNodeCount and nodeConfig, unless the program
    removes it (pulumi-gcp's removeDefaultNodePool) or gives node pools in the cluster instead. Its
    machine type's CPU and memory are not in the catalog: where a pod may go is judged, not what fits."""
    props = cluster.props
    count = props.get("initialNodeCount")
    if (
        truthy(props.get("removeDefaultNodePool"))
        or props.get("nodePools")
        or isinstance(count, bool)
        or not isinstance(count, (int, float))
        or count < 1
    ):
        return None
    config = mapping(props.get("nodeConfig"))
    default = cat.facts.gke.default_machine_type
    machine_type = str_or(config.get("machineType"), default.value)
    locations = [z for z in props.get("nodeLocations") or [] if isinstance(z, str)]
    zones = len(locations) or 1  # a zonal cluster's own zone; a regional one's zones are a gap (node_shapes)
    taints = [k8s_rules.taint(t, cat.facts.eks) for t in config.get("taints") or [] if isinstance(t, Mapping)]
    labels = {str(k): str(v) for k, v in (config.get("labels") or {}).items()}
    nodes = int(count) * zones
    shape = node_capacity.plain_node_shape(
        f"{cluster.name} default pool",
        machine_type,
        labels,
        taints,
        (nodes, nodes, nodes),
        names=cat.facts.eks.well_known_labels,
        cloud_deprecated=True,
        zones=_gke_zones(props),
    )
    where = f"{zones} zones named" if locations else "its location"
    why = f"the pool GKE makes from the cluster's initialNodeCount ({int(count)} a zone, {where})"
    if machine_type == default.value and "machineType" not in config:
        why += f"; machine type {default.value}, GKE's default ({default.source})"
    return dataclasses.replace(shape, derived=why)


def _gke_shape(pool: Resource, cat: Catalog) -> k8s_scheduler.NodeShape | str:
    """A GKE pool as the scheduler sees it (one without GPUs, a system pool, judged by its labels
    and taints only: the catalog does not hold machine types' CPU and memory); the reason when its
    GPUs are not known."""
    props, gke = pool.props, cat.facts.gke
    config = mapping(props.get("nodeConfig"))
    accelerators = [a for a in config.get("guestAccelerators") or [] if isinstance(a, Mapping)]
    machine_type = config.get("machineType")
    zones = gke_rules.pool_zones(props) or 1  # a regional pool's zones are its cluster's: placement counts one at least
    scaling = props.get("autoscaling") if isinstance(props.get("autoscaling"), Mapping) else None
    if scaling:
        low, high = as_int(scaling.get("minNodeCount")), as_int(scaling.get("maxNodeCount"), 1)
        sizes = (low * zones, low * zones, high * zones)
    else:
        count = as_int(props.get("nodeCount"), as_int(props.get("initialNodeCount"), 1))
        sizes = (count * zones, count * zones, count * zones)
    labels = {str(k): str(v) for k, v in (config.get("labels") or {}).items()}
    taints = [k8s_rules.taint(t, cat.facts.eks) for t in config.get("taints") or [] if isinstance(t, Mapping)]
    name = gke_rules.pool_name(props, pool.name)
    well_known = cat.facts.eks.well_known_labels
    if not accelerators and not (isinstance(machine_type, str) and machine_type in gke.machine_types):
        return node_capacity.plain_node_shape(
            name,
            machine_type if isinstance(machine_type, str) else None,
            {**labels, gke.labels.node_pool: name},
            taints,
            sizes,
            names=well_known,
            cloud_deprecated=True,
            zones=_gke_zones(props),
        )
    first = accelerators[0] if accelerators else {}
    accelerator_count = first.get("count")
    gpus = gke_rules.gpus(
        str(machine_type), first.get("type"), int(accelerator_count) if isinstance(accelerator_count, (int, float)) else None, gke
    )
    if isinstance(gpus, str):
        return gpus
    partition = first.get("gpuPartitionSize") if isinstance(first.get("gpuPartitionSize"), str) else None
    if partition is not None and gke_rules.partition_problem(gpus.accelerator, partition, gke):
        return f"partition size {partition} is not one of {gpus.accelerator}'s"
    sharing_config = first.get("gpuSharingConfig") if isinstance(first.get("gpuSharingConfig"), Mapping) else {}
    sharing = (
        (str(sharing_config.get("gpuSharingStrategy")), as_int(sharing_config.get("maxSharedClientsPerGpu"), 1)) if sharing_config else None
    )
    return node_capacity.gke_node_shape(
        name,
        gpus,
        partition,
        sharing,
        labels,
        taints,
        sizes,
        cat.facts.eks.accelerator_resources.nvidia,
        gke,
        well_known=well_known,
        zones=_gke_zones(props),
    )


def _gke_zones(props: Mapping) -> list[str]:
    """The zones a GKE cluster's or pool's nodes run in, where the plan names them: its node
    locations, else its location when that is a zone (a regional one's zones are not named)."""
    locations = [z for z in seq(props.get("nodeLocations")) if isinstance(z, str)]
    location = props.get("location")
    return locations or ([location] if isinstance(location, str) and gke_rules.is_zone(location) else [])


def _ack_shape(pool: Resource, cat: Catalog) -> k8s_scheduler.NodeShape | str:
    props = pool.props
    labels = {str(label.get("key")): str(label.get("value")) for label in props.get("labels") or [] if isinstance(label, Mapping)}
    taints = [k8s_rules.taint(t, cat.facts.eks) for t in props.get("taints") or [] if isinstance(t, Mapping)]
    scaling = props.get("scalingConfig") or {}
    if scaling.get("enable"):
        sizes = (as_int(scaling.get("minSize")), as_int(scaling.get("minSize")), as_int(scaling.get("maxSize"), 1))
    else:
        desired = as_int(props.get("desiredSize"))
        sizes = (desired, desired, desired)
    name = str_or(props.get("nodePoolName"), pool.name)
    types = [t for t in props.get("instanceTypes") or [] if isinstance(t, str)]
    shape = node_capacity.ack_node_shape(name, types, labels, taints, sizes, cat.facts.ack)
    return shape if shape is not None else "none of its instance types has sourced GPU facts"


def _addon_overrides(index: Index) -> dict[str, Mapping]:
    found = {}
    for addon in index.of(tokens.EKS_ADDON):
        text = addon.props.get("configurationValues")
        try:
            values = json.loads(text) if isinstance(text, str) else {}
        except ValueError:
            values = {}
        if isinstance(values, Mapping) and isinstance(addon.props.get("addonName"), str):
            found[addon.props["addonName"]] = values
    return found


def _pinned(release: Resource) -> str | None:
    """The chart version a Helm release pins (None: it pins none, or it is not known offline)."""
    version = release.props.get("version")
    return version if isinstance(version, str) else None


def _uncarried_charts(index: Index, cat: Catalog) -> list[str]:
    """A gap for each Helm release of a chart gpufleet does not carry: which pods it runs, with
    which requests, tolerations and node selectors, is not known, and any pod of the cluster may
    depend on them: they take CPU and memory from the nodes the others are placed on, and such a
    chart may label nodes (node feature discovery), advertise devices (a DRA driver, a device
    plugin) or launch nodes (an autoscaler). The ACK GPU-sharing chart is read as its pools: the
    shared GPU resources it advertises are the ACK shapes' (ack.sharingChart), and its own pods'
    CPU and memory ACK shapes do not judge. The NVIDIA DRA driver charts are carried (catalog
    `dra.charts`), at any version: their pods are read from the version gpufleet holds."""
    carried = {
        *(c.chart for c in cat.facts.charts.plugins().values()),
        cat.facts.charts.gpu_operator.chart,
        cat.facts.karpenter.chart.chart,
        cat.facts.ack.sharing_chart,
    }
    gaps = []
    for release in index.of(tokens.HELM_RELEASE):
        chart = release.props.get("chart")
        if chart in carried or dra.driver_chart(release, cat) is not None:
            continue
        name = str_or(release.props.get("name"), release.name)
        if not isinstance(chart, str) or chart == tokens.UNKNOWN:
            gaps.append(f"Helm release {name!r}: its chart is not known offline: which pods it runs, and on which nodes, is not known")
            continue
        version = _pinned(release)
        pinned = f" {version}" if version not in (None, tokens.UNKNOWN) else ""
        gaps.append(
            f"Helm release {name!r} installs chart {chart}{pinned}, which gpufleet does not carry: "
            "which pods it runs, and on which nodes, is not known"
        )
    return gaps


def pod_templates(index: Index, cat: Catalog) -> tuple[list[k8s_scheduler.PodTemplate], list[str]]:
    """Device-plugin DaemonSets, EKS's default add-ons, pinned manifests, then the plan's workloads."""
    eks, charts_facts = cat.facts.eks, cat.facts.charts
    pods: list[k8s_scheduler.PodTemplate] = []
    gaps = _uncarried_charts(index, cat)
    for key, chart, release in plugins(index, cat):
        values = release.props.get("values") if isinstance(release.props.get("values"), Mapping) else {}
        name = str_or(release.props.get("name"), release.name)
        namespace = release.props.get("namespace") if isinstance(release.props.get("namespace"), str) else None
        pods += k8s_workloads.device_plugin_pods(
            key, chart, values, name, release.urn, k8s_workloads.advertised(chart, values, eks), namespace, _pinned(release)
        )
    gpu_operator = charts_facts.gpu_operator
    for release in index.of(tokens.HELM_RELEASE):
        if release.props.get("chart") == gpu_operator.chart:
            values = release.props.get("values") if isinstance(release.props.get("values"), Mapping) else {}
            name = str_or(release.props.get("name"), release.name)
            pods += k8s_workloads.gpu_operator_pods(
                gpu_operator, values, name, release.urn, eks.accelerator_resources.nvidia, cat.facts.dra.device_plugin_off, _pinned(release)
            )
    for release in index.of(tokens.HELM_RELEASE):
        driver = dra.driver_chart(release, cat)
        if driver is not None:
            namespace = str_or(release.props.get("namespace"), "default")
            values = mapping(release.props.get("values"))
            gpu = eks.accelerator_resources.nvidia
            pods += k8s_workloads.dra_driver_pods(driver, values, namespace, release.urn, _pinned(release), gpu)
    for release in index.of(tokens.HELM_RELEASE):
        if release.props.get("chart") == cat.facts.karpenter.chart.chart:
            values = release.props.get("values") if isinstance(release.props.get("values"), Mapping) else {}
            namespace = release.props.get("namespace") if isinstance(release.props.get("namespace"), str) else None
            pods += k8s_workloads.karpenter_pods(cat.facts.karpenter, values, namespace, release.urn, _pinned(release))
    clusters = index.of(tokens.EKS_CLUSTER)
    library_clusters = libraries.library_clusters(index)
    if clusters:
        if any(c.props.get("bootstrapSelfManagedAddons") is not False for c in clusters):
            pods += k8s_workloads.addon_pods(eks.default_addons, _addon_overrides(index), clusters[0].urn)
    elif library_clusters:
        pods += k8s_workloads.addon_pods(eks.default_addons, _addon_overrides(index), library_clusters[0].urn)
    elif index.of(tokens.EKS_NODE_GROUP):
        gaps.append("the plan joins an existing cluster: its other node groups and running pods are not in the plan")
    elif any(k8s_workloads.kind_of(r.type) for r in index.resources) and not any(
        index.of(t) for t in (tokens.ACK_NODE_POOL, tokens.GKE_NODE_POOL, tokens.AKS_NODE_POOL, *tokens.CLUSTERS)
    ):
        gaps.append("the plan creates no cluster and no node group: the nodes its pods run on are not in the plan")
    monitoring = eks.node_health.monitoring_addon
    for addon in index.of(tokens.EKS_ADDON):
        if addon.props.get("addonName") == monitoring:
            pods += k8s_workloads.monitoring_pods(eks.node_health, _addon_overrides(index).get(monitoring), addon.urn)
    if len(clusters) + len(index.of(tokens.PULUMI_EKS_CLUSTER)) > 1:
        gaps.append("the plan has several clusters: pods are judged against every node group")
    operator = charts_facts.mpi_operator
    for config in (r for t in CONFIG_FILES for r in index.of(t)):
        if config.props.get("file") == operator.manifest:
            pods += k8s_workloads.manifest_pods(operator.operator, config.urn)
    runtime_classes = {str_or(mapping(r.props.get("metadata")).get("name"), r.name): r.props for r in index.of(tokens.RUNTIME_CLASS)}
    for r in index.resources:
        if k8s_workloads.kind_of(r.type) and r.type != tokens.HELM_RELEASE:
            pods += k8s_workloads.object_pods(r.type, r.name, r.props, r.urn, runtime_classes)
    return pods, gaps
