"""Rules over a whole EKS fleet spec: each check calls a catalog predicate and returns Violations.

Field paths use the stack file's keys (camelCase) so an error points at the line to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import cast

from gpufleet.apis import aws as aws_api
from gpufleet.catalog import cloudformation
from gpufleet.catalog.catalog import Catalog, InstanceType, UnknownInstanceType
from gpufleet.eks.args import EksFleetArgs, NodeGroupArgs
from gpufleet.eks.resolved import (
    auto_mode,
    dra,
    efa_zone,
    places_in_group,
    plugin_pools,
    resolve,
    served_groups,
    served_pools,
    system_ami_type,
    system_group_created,
    vpc_zones,
)
from gpufleet.k8s import releases
from gpufleet.k8s.args import KubernetesArgs
from gpufleet.k8s.dra_claims import claim_field, plugin_group_claim
from gpufleet.karpenter.checks import check_pools
from gpufleet.network import zones
from gpufleet.platform.capacity import offered_and_purchasable
from gpufleet.platform.model import Violation, duplicate_names, names_taken
from gpufleet.rules import dra as dra_rules
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import gpus as gpu_rules
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules import lifecycle
from gpufleet.rules import offerings as offering_rules
from gpufleet.rules.efa import default_layout, efa_count_problem, efa_supported


def _group_zones(ng: NodeGroupArgs, it, fleet: EksFleetArgs, region: str) -> Iterator[Violation]:
    """A group's named zones: with a created VPC, without EFA, each a VPC zone that offers the type."""
    if ng.zones is None:
        return
    if fleet.network.create is None:
        yield Violation(
            "node-group-zones", ("zones",), list(ng.zones), "zones place a group in a created VPC; with existing subnets give subnetIds"
        )
        return
    if ng.efa is not None:
        yield Violation("node-group-zones", ("zones",), list(ng.zones), "an EFA group runs in one zone: efa.availabilityZone")
        return
    for i, zone in enumerate(ng.zones):
        reason = offering_rules.offered_in(it, region, zone)
        if zone in ng.zones[:i]:
            yield Violation("names-unique", ("zones", i), zone, "each zone is named once")
        elif zone not in vpc_zones(fleet):
            yield Violation(
                "node-group-zones",
                ("zones", i),
                zone,
                "not one of the created VPC's zones: append it to network.create.zones (new subnets, additive)",
            )
        elif reason:
            yield Violation("vpc-zones-offered", ("zones", i), zone, reason)


def check_fleet(fleet: EksFleetArgs, region: str, cat: Catalog) -> list[Violation]:
    found: list[Violation] = []
    found += duplicate_names([ng.name for ng in fleet.node_groups], ("nodeGroups",), "node group")
    found += duplicate_names([p.name for p in fleet.node_pools], ("nodePools",), "NodePool")
    found += list(_pools(fleet, region, cat))
    known = True
    for i, ng in enumerate(fleet.node_groups):
        try:
            it = cat.get(ng.instance_type)
        except UnknownInstanceType as err:
            found.append(Violation("instance-type-known", ("nodeGroups", i, "instanceType"), ng.instance_type, str(err)))
            known = False
            continue
        found += [v.under("nodeGroups", i) for v in _node_group(ng, it, fleet, region, cat)]
    system = list(_system_node_group(fleet, region, cat))
    found += system
    found += list(_lifecycle(fleet, cat))
    # The VPC's zones and the placement need the system group's type too.
    if known and not any(v.field[-1] == "instanceType" for v in system):
        found += list(_network(fleet, region, cat))
        found += list(_kubernetes(fleet, cat))
        found += list(_workloads(fleet, cat))
        found += list(_dra(fleet, cat))
    if not found and fleet.kubernetes is not None:
        # The releases follow from the groups as resolved, which the checks above must pass first.
        found += [
            Violation("helm-names-fit", ("cluster", "name"), fleet.cluster.name, reason)
            for reason in releases.fleet_name_problems(fleet.cluster.name, lambda name: planned_releases(fleet, name, cat), cat)
        ]
    return found


def _pools(fleet: EksFleetArgs, region: str, cat: Catalog) -> Iterator[Violation]:
    """NodePools need a cluster gpufleet creates (Karpenter's controller runs on its system group)
    and the cluster's Kubernetes access; a workload names a group or a pool, so no name is both."""
    yield from _auto_mode(fleet, cat)
    if not fleet.node_pools:
        return
    if not system_group_created(fleet) and not auto_mode(fleet):
        yield Violation(
            "karpenter-cluster",
            ("nodePools",),
            [p.name for p in fleet.node_pools],
            "Karpenter is installed on a cluster gpufleet creates, its controller on the system node group (keep systemNodeGroup enabled)",
        )
    if fleet.kubernetes is None:
        yield Violation(
            "kubernetes-access",
            ("kubernetes",),
            None,
            "NodePools are Kubernetes objects: give kubernetes (the device plugins come with it)",
        )
    if fleet.karpenter.node_overlays and (fleet.kubernetes is None or fleet.kubernetes.nvidia_device_plugin.time_slicing_replicas is None):
        yield Violation(
            "karpenter-node-overlays",
            ("karpenter", "nodeOverlays"),
            True,
            "NodeOverlays correct what Karpenter sees of time-sliced GPUs: give kubernetes.nvidiaDevicePlugin.timeSlicingReplicas, or leave them off",
        )
    if not auto_mode(fleet):
        role = cloudformation.node_role_name(fleet.cluster.name)
        reason = aws_api.field_problem(role, "iam", "CreateRoleRequest", "RoleName")
        if reason:
            yield Violation(
                "aws-api-model",
                ("cluster", "name"),
                fleet.cluster.name,
                f"Karpenter's node role is named {role}: {reason}; a shorter cluster name",
            )
    yield from names_taken(
        [pool.name for pool in fleet.node_pools],
        {ng.name for ng in fleet.node_groups} | {"system"},
        ("nodePools",),
        "a NodePool and a node group share this name: a workload's nodePool could name either",
    )
    yield from check_pools(fleet.node_pools, region, vpc_zones(fleet) if fleet.network.create is not None else None, cat, auto_mode(fleet))


def _auto_mode(fleet: EksFleetArgs, cat: Catalog) -> Iterator[Violation]:
    """An Auto Mode cluster of gpufleet carries NodePools only: EKS runs its system pods and device
    plugins, so no managed node group, system group, GPU Operator or NodeOverlay of gpufleet's."""
    create = fleet.cluster.create
    if create is None or create.auto_mode is None:  # not auto_mode(fleet)
        return
    where = ("cluster", "create", "autoMode")
    if fleet.node_groups:
        yield Violation(
            "eks-auto-mode-capacity",
            ("nodeGroups",),
            [ng.name for ng in fleet.node_groups],
            "with Auto Mode, give nodePools (gpufleet builds no managed node group beside them)",
        )
    if "system_node_group" in fleet.model_fields_set:
        yield Violation(
            "eks-auto-mode-capacity",
            ("systemNodeGroup",),
            fleet.system_node_group.model_dump(by_alias=True, exclude_defaults=True),
            "with Auto Mode, its built-in system pool runs the cluster's pods (autoMode.builtInNodePools)",
        )
    if fleet.karpenter.node_overlays:
        yield Violation(
            "eks-auto-mode-node-class", ("karpenter", "nodeOverlays"), True, "Auto Mode reads no NodeOverlay (aws/containers-roadmap#2690)"
        )
    operator = fleet.kubernetes.gpu_operator if fleet.kubernetes is not None else None
    if operator is not None:
        # The GPU Operator's chart is always one too many on Auto Mode: a reason, never None.
        reason = cast(str, eks_rules.auto_mode_plugin(cat.facts.charts.gpu_operator.chart, cat.facts.eks, cat.facts.charts))
        yield Violation(
            "eks-auto-mode-one-device-plugin",
            ("kubernetes", "gpuOperator"),
            operator.model_dump(by_alias=True, exclude_defaults=True),
            reason,
        )
    if not fleet.node_pools and not create.auto_mode.built_in_node_pools:
        yield Violation(
            "eks-auto-mode-capacity",
            (*where, "builtInNodePools"),
            [],
            "with no built-in pool and no nodePools, nothing runs the cluster's pods",
        )


def _lifecycle(fleet: EksFleetArgs, cat: Catalog) -> Iterator[Violation]:
    """What EKS refuses by date or version: a created cluster's version past its windows, and an AMI
    type with no AMI for that version (an existing cluster's version is not in the stack)."""
    create = fleet.cluster.create
    if create is None:
        return
    reason = lifecycle.kubernetes_version_problem(cat.facts.lifecycle.kubernetes.eks, "EKS", create.version, lifecycle.today())
    if reason:
        yield Violation("kubernetes-version-supported", ("cluster", "create", "version"), create.version, reason)
    for i, ng in enumerate(fleet.node_groups):
        reason = lifecycle.eks_ami_type_problem(ng.ami_type, create.version, cat.facts)
        if reason:
            yield Violation("eks-ami-type-available", ("nodeGroups", i, "amiType"), ng.ami_type, reason)


def _workloads(fleet: EksFleetArgs, cat: Catalog) -> Iterator[Violation]:
    yield from duplicate_names([w.name for w in fleet.workloads], ("workloads",), "workload")
    if fleet.workloads and fleet.kubernetes is None:
        yield Violation(
            "kubernetes-access",
            ("kubernetes",),
            None,
            "workloads are installed through the cluster: give kubernetes (the device plugins come with it)",
        )
    groups = {ng.name: ng for ng in fleet.node_groups}
    pools = {p.name: p for p in fleet.node_pools}
    for i, wl in enumerate(fleet.workloads):
        ng = groups.get(wl.node_pool)
        if wl.node_pool in pools:
            if pools[wl.node_pool].gpu is None:
                yield Violation(
                    "node-pool-exists",
                    ("workloads", i, "nodePool"),
                    wl.node_pool,
                    f"a workload asks for nvidia.com/gpu: NodePool {wl.node_pool} has Neuron devices",
                )
        elif ng is None:
            yield Violation(
                "node-pool-exists",
                ("workloads", i, "nodePool"),
                wl.node_pool,
                f"no node group or NodePool of that name (have: {', '.join([*groups, *pools])})",
            )
        elif eks_rules.accelerator(cat.get(ng.instance_type)) != "nvidia":
            yield Violation(
                "node-pool-exists",
                ("workloads", i, "nodePool"),
                wl.node_pool,
                f"a workload asks for nvidia.com/gpu: node group {ng.name} ({ng.instance_type}) has no NVIDIA GPUs",
            )


def _dra(fleet: EksFleetArgs, cat: Catalog) -> Iterator[Violation]:
    """Node groups whose GPUs the DRA driver serves, and the claims of the workloads on them."""
    facts = cat.facts.dra
    create = fleet.cluster.create
    for i, ng in enumerate(fleet.node_groups):
        if not dra(ng):
            continue
        group = resolve(ng, cat)
        where = ("nodeGroups", i, "allocation")
        if group.accelerator != "nvidia":
            yield Violation(
                "dra-nvidia-gpus", where, ng.allocation, f"the NVIDIA DRA driver serves NVIDIA GPUs: {ng.instance_type} has none"
            )
            continue
        reason = dra_rules.api_version_problem(facts.api.api_version, create.version if create else None, facts)
        if reason:
            at = ("cluster", "create", "version") if create else where
            yield Violation("dra-api-version", at, create.version if create else ng.allocation, f"node group {ng.name}: {reason}")
        plugin_on = group.labels.get(facts.device_plugin_off.key) != facts.device_plugin_off.value
        reason = dra_rules.two_allocators_problem(plugin_on, True, facts)
        if reason:
            yield Violation(
                "dra-one-allocator",
                ("nodeGroups", i, "labels", facts.device_plugin_off.key),
                group.labels.get(facts.device_plugin_off.key),
                reason,
            )
    groups = {ng.name: ng for ng in fleet.node_groups}
    for i, wl in enumerate(fleet.workloads):
        claimed = claim_field(wl)
        if claimed is None:
            continue
        field, value = claimed
        target = groups.get(wl.node_pool)
        if target is None:
            if wl.node_pool in {p.name for p in fleet.node_pools}:
                yield Violation("dra-provisioner", ("workloads", i, field), value, _pool_claims_reason(fleet, cat))
            continue
        if not dra(target):
            yield plugin_group_claim(i, field, value, f"node group {target.name}")
        elif wl.mig_profile:
            yield from (v.under("workloads", i) for v in _mig_claim(wl.mig_profile, target, fleet, cat))


def _pool_claims_reason(fleet: EksFleetArgs, cat: Catalog) -> str:
    """Why a workload on a NodePool cannot claim DRA devices: its provisioner's version (Karpenter as
    gpufleet pins it, or Auto Mode by the cluster's Kubernetes), else gpufleet's own reach."""
    create = fleet.cluster.create
    if auto_mode(fleet):
        verdict = dra_rules.provisioner_problem("auto-mode", create.version if create else None, cat.facts.dra)
    else:
        verdict = dra_rules.provisioner_problem("karpenter", cat.facts.karpenter.version, cat.facts.dra)
    return verdict.message if verdict else "gpufleet writes DRA claims for managed node groups only (allocation: dra); use one"


def _mig_claim(profile: str, ng: NodeGroupArgs, fleet: EksFleetArgs, cat: Catalog) -> Iterator[Violation]:
    """A MIG profile the group's GPU offers, on a group whose MIG layout the GPU Operator's MIG manager applies."""
    facts = cat.facts.dra
    reason = dra_rules.mig_profile_problem(cat.get(ng.instance_type), profile, facts)
    if reason:
        yield Violation("dra-mig-profile", ("migProfile",), profile, reason)
    label = facts.mig_config_label
    if label not in ng.labels or fleet.kubernetes is None or fleet.kubernetes.gpu_operator is None:
        yield Violation(
            "dra-mig-layout",
            ("migProfile",),
            profile,
            f"node group {ng.name} must carry the {label} label and kubernetes.gpuOperator must be installed: the GPU "
            f"Operator's MIG manager lays the GPUs out by that label (NVIDIA/gpu-operator @v26.7.0 controllers/state_manager.go L49)",
        )


def _system_node_group(fleet: EksFleetArgs, region: str, cat: Catalog) -> Iterator[Violation]:
    sys = fleet.system_node_group
    where = ("systemNodeGroup",)
    if fleet.cluster.create is None:
        if "system_node_group" in fleet.model_fields_set:
            yield Violation(
                "eks-system-node-group",
                where,
                sys.model_dump(by_alias=True, exclude_defaults=True),
                "gpufleet adds a system node group only to a cluster it creates; an existing cluster keeps its own",
            )
        return
    if not sys.enabled:
        return  # the placement rules judge whether CoreDNS still has an untainted node
    families = cat.facts.eks.system_node_families.values
    try:
        it = cat.get(sys.instance_type)
    except UnknownInstanceType as err:
        yield Violation("instance-type-known", (*where, "instanceType"), sys.instance_type, str(err))
        return
    if it.family not in families or gpu_rules.accelerated(it):
        yield Violation(
            "eks-system-node-group",
            (*where, "instanceType"),
            sys.instance_type,
            f"a system node group uses a general-purpose type of {', '.join(families)} (the families whose zones the catalog keeps)",
        )
        return
    if system_ami_type(it, cat.facts.eks) is None:
        yield Violation(
            "eks-system-node-group",
            (*where, "instanceType"),
            sys.instance_type,
            f"no AL2023 standard AMI type runs {'/'.join(it.architectures)}",
        )
    yield from (v.under(*where) for v in offered_and_purchasable(it, region, False, ("instanceType", sys.instance_type)))
    if "system" in {ng.name for ng in fleet.node_groups}:
        i = [ng.name for ng in fleet.node_groups].index("system")
        yield Violation("names-unique", ("nodeGroups", i, "name"), "system", "the system node group is named system; rename this group")


def _api_model(ng: NodeGroupArgs, taints: list[dict]) -> Iterator[Violation]:
    """The node group's labels and taints as CreateNodegroup's model takes them (it is stricter than
    Kubernetes: keys and values of 1..63 characters)."""
    for key, value in ng.labels.items():
        for part, given in (("key", key), ("value", value)):
            reason = aws_api.field_problem(given, "eks", "CreateNodegroupRequest", "labels", part)
            if reason:
                yield Violation("aws-api-model", ("labels", key), given, f"label {part}: {reason}")
    for i, taint in enumerate(taints):
        for part in ("key", "value"):
            if part in taint:
                reason = aws_api.field_problem(taint[part], "eks", "Taint", part)
                if reason:
                    yield Violation("aws-api-model", ("taints", i, part), taint[part], reason)


def _per_group(
    fleet: EksFleetArgs, problem: Callable[[NodeGroupArgs], str | None], rule: str, where: tuple[str, ...], value: object
) -> Iterator[Violation]:
    """A cluster-wide setting held against each node group: one violation at the setting per group
    it does not suit, naming the group (the setting is one field, the groups it fails are many)."""
    for ng in fleet.node_groups:
        reason = problem(ng)
        if reason:
            yield Violation(rule, where, value, f"node group {ng.name}: {reason}")


def _kubernetes(fleet: EksFleetArgs, cat: Catalog) -> Iterator[Violation]:
    k8s = fleet.kubernetes
    if k8s is None:
        return
    if k8s.nvidia_device_plugin.mig_strategy != "none":
        models = cat.facts.mig_capable_gpu_models.values

        def mig_problem(ng: NodeGroupArgs) -> str | None:
            it = cat.get(ng.instance_type)
            return k8s_rules.mig_supported(it, models) if eks_rules.accelerator(it) == "nvidia" else None

        yield from _per_group(
            fleet,
            mig_problem,
            "eks-mig-supported",
            ("kubernetes", "nvidiaDevicePlugin", "migStrategy"),
            k8s.nvidia_device_plugin.mig_strategy,
        )
    if k8s.gpu_operator is not None:
        driver = k8s.gpu_operator.driver

        def driver_problem(ng: NodeGroupArgs) -> str | None:
            group = resolve(ng, cat)
            if group.accelerator != "nvidia":
                return None
            return k8s_rules.one_driver_problem(eks_rules.ami_driver(group.ami_type, cat.facts.eks), f"amiType {group.ami_type}", driver)

        yield from _per_group(fleet, driver_problem, "eks-gpu-driver", ("kubernetes", "gpuOperator", "driver"), driver)
    if k8s.nccl_test is not None:
        groups = {ng.name: ng for ng in fleet.node_groups}
        target = groups.get(k8s.nccl_test.node_group)
        where = ("kubernetes", "ncclTest", "nodeGroup")
        if target is None:
            yield Violation(
                "nccl-test-node-group", where, k8s.nccl_test.node_group, f"no node group of that name (have: {', '.join(groups)})"
            )
        elif target.efa is None or eks_rules.accelerator(cat.get(target.instance_type)) != "nvidia":
            yield Violation("nccl-test-node-group", where, target.name, "the NCCL test runs on a node group with NVIDIA GPUs and EFA")


def planned_releases(fleet: EksFleetArgs, name: str, cat: Catalog) -> list[releases.PlannedRelease]:
    """The Helm releases EksFleet writes under the fleet name `name` (its _kubernetes, _node_pools)."""
    k8s = cast(KubernetesArgs, fleet.kubernetes)
    served = served_pools(served_groups(fleet.node_groups, cat), plugin_pools(fleet), cat)
    found = []
    if k8s.gpu_operator is not None:
        found.append(releases.gpu_operator_release(name, cat))
        served = served.without("nvidia")
    found += releases.device_plugin_releases(name, served, k8s.nvidia_device_plugin, cat)
    if served.needs("dra"):
        found.append(releases.dra_driver_release(name, cat))
    if fleet.node_pools and not auto_mode(fleet):
        found.append(releases.karpenter_release(name, cat))
    return found


def _network(fleet: EksFleetArgs, region: str, cat: Catalog) -> Iterator[Violation]:
    create = fleet.network.create
    if create is None:
        if len(fleet.network.subnet_ids) < 2:
            yield Violation(
                "eks-cluster-zones",
                ("network", "subnetIds"),
                fleet.network.subnet_ids,
                "an EKS cluster needs subnets in at least two availability zones",
            )
        return
    field = ("network", "create", "zones")
    names = [ng.instance_type for ng in fleet.node_groups] + (
        [fleet.system_node_group.instance_type] if system_group_created(fleet) else []
    )
    if create.zones is None:
        suggestion = zones.suggested_zones([cat.get(n) for n in names], region, 2)
        yield Violation(
            "vpc-zones-required",
            field,
            None,
            f"name the VPC's zones (for example [{', '.join(suggestion)}], which offer every node group's type): "
            "gpufleet does not choose them, so a later change cannot move them",
        )
        return
    if len(create.zones) < 2:
        yield Violation("eks-cluster-zones", field, list(create.zones), "an EKS cluster needs at least two availability zones")
    groups: list[tuple[tuple, InstanceType]] = [
        (("nodeGroups", i, "instanceType"), cat.get(ng.instance_type)) for i, ng in enumerate(fleet.node_groups)
    ]
    if system_group_created(fleet):
        groups.append((("systemNodeGroup", "instanceType"), cat.get(fleet.system_node_group.instance_type)))
    followers = [(ng.name, cat.get(ng.instance_type)) for ng in fleet.node_groups if ng.efa is None and ng.zones is None]
    yield from zones.zone_problems(list(create.zones), region, groups, cat, field, followers)


def _node_group(ng: NodeGroupArgs, it, fleet: EksFleetArgs, region: str, cat: Catalog) -> Iterator[Violation]:
    taints = [t.model_dump(exclude_none=True) for t in ng.taints or []]
    for where, value, problem in k8s_rules.node_label_problems(dict(ng.labels), taints, cat.facts.kubernetes):
        yield Violation("k8s-node-labels", where, value, problem)
    yield from _api_model(ng, taints)
    reason = eks_rules.ami_type_support(it, ng.ami_type, cat.facts.eks)
    if reason:
        yield Violation(
            "eks-ami-type-supported", ("amiType",) if ng.ami_type else ("instanceType",), ng.ami_type or ng.instance_type, reason
        )
    yield from offered_and_purchasable(it, region, ng.capacity_type == "SPOT", ("capacityType", ng.capacity_type))
    yield from _group_zones(ng, it, fleet, region)
    if ng.efa is None:
        return  # the cluster's subnets (or the created VPC's private subnets)
    reason = efa_supported(it)
    if reason:
        yield Violation("eks-efa-supported", ("efa",), ng.efa.model_dump(by_alias=True, exclude_defaults=True), reason)
        return
    reason = efa_count_problem(it, ng.efa.interfaces) if ng.efa.interfaces is not None else None
    if reason:
        yield Violation("eks-efa-interfaces", ("efa", "interfaces"), ng.efa.interfaces, reason)
        return
    layout = ng.efa.layout or default_layout(it, ng.efa.interfaces)
    if layout == "recommended" and "secondary_interface_type" in ng.efa.model_fields_set:
        yield Violation(
            "eks-efa-layout",
            ("efa", "secondaryInterfaceType"),
            ng.efa.secondary_interface_type,
            "the recommended layout makes every EFA interface efa-only; secondaryInterfaceType is for layout: efa-primary",
        )
    try:
        resolve(ng, cat)  # lays out the interfaces, once for everything that reads them later
    except ValueError as err:
        yield Violation("eks-efa-layout", ("efa", "layout"), layout, str(err))
    reason = eks_rules.efa_placement(ng.capacity_reservation_id is not None, places_in_group(ng))
    if reason:
        yield Violation("eks-efa-placement", ("efa", "placementGroup"), ng.efa.placement_group, reason)
    if fleet.network.create is None:
        if ng.efa.availability_zone is None:
            yield Violation(
                "eks-efa-single-az", ("efa", "availabilityZone"), None, "an EFA group on existing subnets names the zone of its subnet"
            )
        if len(ng.subnet_ids) != 1:
            yield Violation(
                "eks-efa-single-az",
                ("subnetIds",),
                ng.subnet_ids,
                "an EFA group on existing subnets gives exactly one subnet, in its availabilityZone",
            )
    elif ng.subnet_ids:
        yield Violation(
            "eks-efa-single-az", ("subnetIds",), ng.subnet_ids, "with a created VPC, the group uses the VPC's subnet of its zone"
        )
    zone = efa_zone(ng, fleet, cat, region)
    if zone is not None:
        reason = offering_rules.offered_in(it, region, zone)
        if reason:
            yield Violation("eks-efa-single-az", ("efa", "availabilityZone"), zone, reason)
        elif fleet.network.create is not None and zone not in vpc_zones(fleet):
            yield Violation(
                "eks-efa-single-az",
                ("efa", "availabilityZone"),
                zone,
                "not one of the created VPC's zones: append it to network.create.zones (a new subnet, additive)",
            )
