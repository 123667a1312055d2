"""The nodes of component libraries whose provider builds the resources (pulumi-eks's Cluster,
NodeGroupV2, the deprecated NodeGroup and ManagedNodeGroup): derived from the component's inputs and the library's own
defaults at a pinned version (curated libraries.pulumiEks), each shape marked as derived.

A `pulumi preview` runs the component's provider, so its plan holds the launch template and Auto
Scaling group it makes; gpufleet's offline engine does not, so its plan holds the component alone.
Either way the nodes are read from the component's inputs: the placement reads no self-managed
Auto Scaling group as Kubernetes nodes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.facts import EksLibraryNodeGroup
from gpufleet.plans.index import Index, Resource, as_int, mapping, seq, truthy
from gpufleet.simulate import k8s_scheduler, node_capacity

# The Cluster's own node arguments, which nodeGroupOptions replaces (pulumi-eks takes one or the other).
_CLUSTER_ARGS = ("instanceType", "desiredCapacity", "minSize", "maxSize", "gpu", "nodeAmiId")


def default_node_group_options(cluster: Resource) -> Mapping | None:
    """The options of a pulumi-eks Cluster's default node group, or None when it makes none."""
    props = cluster.props
    auto = mapping(props.get("autoMode"))
    if (
        truthy(props.get("skipDefaultNodeGroup"))
        or truthy(props.get("fargate"))
        or isinstance(props.get("fargate"), Mapping)
        or truthy(auto.get("enabled"))
    ):
        return None
    options = props.get("nodeGroupOptions")
    return options if isinstance(options, Mapping) else {k: props[k] for k in _CLUSTER_ARGS if k in props}


def _ami_type(options: Mapping, defaults: EksLibraryNodeGroup) -> str:
    """What decides the node's accelerator setup: the NVIDIA AMI where `gpu` asks for it. (An arm64
    type's AMI is the arm64 variant; its nodes' labels come from the type's EC2 record either way.)"""
    if isinstance(options.get("amiType"), str):
        return options["amiType"]
    return defaults.ami_types["gpu" if truthy(options.get("gpu")) else "standard"]


def _taints(options: Mapping) -> list[Mapping]:
    """pulumi-eks's taints: a map of key -> {value, effect} in Kubernetes spelling."""
    given = options.get("taints")
    if isinstance(given, Mapping):
        return [{"key": str(k), "value": v.get("value"), "effect": v.get("effect")} for k, v in given.items() if isinstance(v, Mapping)]
    return [t for t in seq(given) if isinstance(t, Mapping)]  # ManagedNodeGroup: aws.eks taints


def _shape(
    name: str, options: Mapping, defaults: EksLibraryNodeGroup, version: str | None, cat: Catalog, gpu_sharing: dict, why: str
) -> k8s_scheduler.NodeShape | str:
    instance_type = options.get("instanceType") if isinstance(options.get("instanceType"), str) else defaults.instance_type
    it = cat.find(instance_type)
    if it is None:
        return f"{name}: instance type {instance_type!r} is not one known type"
    sizes = (
        as_int(options.get("minSize"), defaults.min_size),
        as_int(options.get("desiredCapacity"), defaults.desired_capacity),
        as_int(options.get("maxSize"), defaults.max_size),
    )
    labels = {str(k): str(v) for k, v in (options.get("labels") or {}).items()} if isinstance(options.get("labels"), Mapping) else {}
    shape = node_capacity.eks_node_shape(
        it,
        group=name,
        ami_type=_ami_type(options, defaults),
        labels=labels,
        taints=_taints(options),
        sizes=sizes,
        capacity_type="ON_DEMAND",
        zones=[],
        efa_interfaces=0,
        gpu_sharing=gpu_sharing,
        facts=cat.facts,
        kubernetes_version=version,
    )
    return dataclasses.replace(shape, derived=f"{why}, as pulumi-eks {cat.facts.libraries.pulumi_eks.version} makes it ({defaults.source})")


def _add(found: k8s_scheduler.NodeShape | str, shapes: list[k8s_scheduler.NodeShape], gaps: list[str]) -> None:
    """A node shape to the shapes, or why there is none to the gaps."""
    if isinstance(found, str):
        gaps.append(found)
    else:
        shapes.append(found)


def library_node_shapes(index: Index, cat: Catalog, gpu_sharing: dict) -> tuple[list[k8s_scheduler.NodeShape], list[str]]:
    """The node shapes pulumi-eks components bring, and the gaps of those that cannot be known."""
    eks_lib = cat.facts.libraries.pulumi_eks
    shapes: list[k8s_scheduler.NodeShape] = []
    gaps: list[str] = []
    for cluster in index.of(tokens.PULUMI_EKS_CLUSTER):
        options = default_node_group_options(cluster)
        version = cluster.props.get("version") if isinstance(cluster.props.get("version"), str) else None
        if options is not None:
            found = _shape(
                f"{cluster.name} default node group",
                options,
                eks_lib.default_node_group,
                version,
                cat,
                gpu_sharing,
                f"the default node group of pulumi-eks Cluster {cluster.name!r}",
            )
            _add(found, shapes, gaps)
    for token in (tokens.PULUMI_EKS_NODE_GROUP_V2, tokens.PULUMI_EKS_NODE_GROUP):
        for group in index.of(token):
            found = _shape(
                group.name,
                group.props,
                eks_lib.default_node_group,
                None,
                cat,
                gpu_sharing,
                f"pulumi-eks {token.rsplit(':', 1)[-1]} {group.name!r}",
            )
            _add(found, shapes, gaps)
    for group in index.of(tokens.PULUMI_EKS_MANAGED_NODE_GROUP):
        props = dict(group.props)
        scaling = mapping(props.get("scalingConfig"))
        types = [t for t in props.get("instanceTypes") or [] if isinstance(t, str)]
        options = {
            **props,
            "minSize": scaling.get("minSize"),
            "desiredCapacity": scaling.get("desiredSize"),
            "maxSize": scaling.get("maxSize"),
        }
        # pulumi-eks leaves a managed group's AMI type to EKS: `gpu` alone picks no NVIDIA AMI there.
        options = {k: v for k, v in options.items() if v is not None and k != "gpu"}
        if types:
            options["instanceType"] = types[0]
        if len(types) > 1:
            gaps.append(f"pulumi-eks ManagedNodeGroup {group.name!r} runs several instance types: judged as its first, {types[0]}")
        found = _shape(group.name, options, eks_lib.managed_scaling, None, cat, gpu_sharing, f"pulumi-eks ManagedNodeGroup {group.name!r}")
        _add(found, shapes, gaps)
    if shapes:
        # The defaults are pulumi-eks's at the pinned version; the program's own may differ.
        gaps.append(
            f"node groups {', '.join(repr(s.group) for s in shapes)} are derived from pulumi-eks {eks_lib.version}'s defaults, "
            "not read from the plan: verdicts on their nodes are advisory"
        )
    return shapes, gaps


def library_clusters(index: Index) -> list[Resource]:
    """pulumi-eks Clusters that run EKS's default add-ons on the nodes they bring (CoreDNS where the
    library adds it: with a default node group, unless its options turn CoreDNS off)."""
    found = []
    for cluster in index.of(tokens.PULUMI_EKS_CLUSTER):
        coredns = mapping(cluster.props.get("corednsAddonOptions"))
        if coredns.get("enabled") is False or coredns.get("enabled") == "false":
            continue
        if truthy(coredns.get("enabled")) or default_node_group_options(cluster) is not None:
            found.append(cluster)
    return found
