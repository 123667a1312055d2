"""Karpenter NodePools of any plan (`karpenter.sh/v1` CustomResources, and EKS Auto Mode's built-in
pools), each with the EC2NodeClass and NodeOverlays the plan holds for it, read as the pools the
provisioning simulation launches from (simulate/karpenter_pools.py reads one pool's spec).

What a pool's inputs leave unknown (an unknown value, a requirement on a label the catalog cannot
give) is a gap; the pool is then judged without it, and the verdicts on it are advisory."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog
from gpufleet.catalog.charts import at
from gpufleet.plans.groups import provider_region
from gpufleet.plans.index import Index, Resource, as_int, mapping, seq, truthy
from gpufleet.rules import eks as eks_rules
from gpufleet.simulate import karpenter, karpenter_pools


def _spec(pool: Resource) -> Mapping:
    return mapping(pool.props.get("spec"))


def _name(pool: Resource) -> str:
    name = mapping(pool.props.get("metadata")).get("name")
    return name if isinstance(name, str) else pool.name


def _overlays(index: Index, cat: Catalog, gaps: list[str]) -> list[karpenter_pools.Overlay]:
    """The plan's NodeOverlays that Karpenter reads, highest weight first: (requirements, capacity).
    Karpenter reads them only with its NodeOverlay feature gate on; a Karpenter release of the plan
    that leaves it off makes them inert, and without one in the plan the gate is taken as on, said."""
    facts = cat.facts.karpenter
    found: list[karpenter_pools.Overlay] = []
    overlays = index.of(tokens.KARPENTER_NODE_OVERLAY)
    if not overlays:
        return found
    releases = [r for r in index.of(tokens.HELM_RELEASE) if r.props.get("chart") == facts.chart.chart]
    gate = [at(mapping(r.props.get("values")), facts.node_overlay.feature_gate) for r in releases]
    on = any(truthy(g) for g in gate)
    for overlay in sorted(overlays, key=lambda o: (-as_int(_spec(o).get("weight")), _name(o))):
        name, spec = _name(overlay), _spec(overlay)
        if releases and not on:
            gaps.append(
                f"Karpenter NodeOverlay {name!r}: the plan's Karpenter release leaves its NodeOverlay feature gate off "
                f"({'.'.join(facts.node_overlay.feature_gate)}), so Karpenter ignores it ({facts.node_overlay.source})"
            )
            continue
        if not releases:
            gaps.append(
                f"Karpenter NodeOverlay {name!r}: the Karpenter release is not in the plan; its NodeOverlay feature gate is taken as on"
            )
        capacity = karpenter_pools.quantities(spec.get("capacity"), f"Karpenter NodeOverlay {name!r}: capacity", gaps)
        found.append((karpenter_pools.requirements_of(spec, name, gaps), capacity))
    return found


def _node_class(index: Index, node: Mapping) -> tuple[str | None, Mapping | None, int | None]:
    """(the name of the EC2NodeClass a pool's template refers to, its spec where the plan holds it,
    the instances its reservations hold where gpufleet recorded them)."""
    ref = mapping(node.get("nodeClassRef"))
    name = ref.get("name") if isinstance(ref.get("name"), str) else None
    for resource in index.of(tokens.KARPENTER_EC2_NODE_CLASS):
        if name is not None and _name(resource) == name:
            stated = mapping(mapping(resource.props.get("metadata")).get("annotations")).get(karpenter_pools.RESERVED_INSTANCES)
            return name, _spec(resource), as_int(stated, -1) if stated is not None and as_int(stated, -1) >= 0 else None
    return name, None, None


def _library_child(cluster: Resource) -> bool:
    """Is an aws.eks Cluster the one a pulumi-eks Cluster's provider made (its parent's type in its
    URN)? That component's inputs are read instead: its compute configuration waits on the node
    role's ARN, so under `pulumi preview` the child's is known only after apply."""
    return f"{tokens.PULUMI_EKS_CLUSTER}$" in cluster.urn.rsplit("::", 2)[1]


def _built_in_pools(index: Index, cat: Catalog, gaps: list[str]) -> list[Resource]:
    """EKS Auto Mode's built-in NodePools of each cluster that turns them on, as NodePool resources
    (curated eks.autoMode.builtInPools: the user guide's description): an aws.eks Cluster's, or a
    pulumi-eks Cluster's as its provider turns them on."""
    auto = cat.facts.eks.auto_mode
    library = cat.facts.libraries.pulumi_eks
    found = []
    for cluster in [*index.of(tokens.EKS_CLUSTER), *index.of(tokens.PULUMI_EKS_CLUSTER)]:
        names = None if _library_child(cluster) else eks_rules.auto_mode_pools(cluster.type, cluster.props, cat.facts.eks, library)
        if names is None:
            continue
        if cluster.type == tokens.PULUMI_EKS_CLUSTER:
            gaps.append(
                f"pulumi-eks Cluster {cluster.name!r} runs EKS Auto Mode: its built-in pools ({', '.join(names) or 'none'}) are read from "
                f"its autoMode input as pulumi-eks {library.version} sets them ({library.auto_mode.source})"
            )
        for name in names:
            pool = auto.built_in_pools.get(name)
            if pool is None:
                continue
            template = {
                "requirements": pool.requirements,
                "taints": pool.taints,
                "nodeClassRef": {"group": auto.node_class_group, "kind": "NodeClass", "name": "default"},
            }
            props = {"metadata": {"name": name}, "spec": {"template": {"spec": template}}}
            found.append(
                Resource(
                    cluster.urn,
                    tokens.KARPENTER_NODE_POOL,
                    name,
                    props,
                    derived=f"EKS Auto Mode's built-in NodePool of cluster {cluster.name!r}",
                )
            )
    return found


# (apiVersion, kind) -> type token; looked up with whatever an object gives.
_KARPENTER_KINDS: dict[tuple[object, object], str] = {
    ("karpenter.sh/v1", "NodePool"): tokens.KARPENTER_NODE_POOL,
    ("karpenter.k8s.aws/v1", "EC2NodeClass"): tokens.KARPENTER_EC2_NODE_CLASS,
    ("karpenter.sh/v1alpha1", "NodeOverlay"): tokens.KARPENTER_NODE_OVERLAY,
}


def _from_yaml(index: Index, cat: Catalog, gaps: list[str]) -> list[Resource]:
    """The Karpenter objects of yaml/v2 ConfigGroups and ConfigFiles, which the provider expands (so a
    plan holds their inputs, not their objects): a ConfigGroup's `objs` and `yaml` are read as the
    objects it creates; a file's YAML is not in the plan, said where the plan runs Karpenter."""
    found = []
    for group in index.of(tokens.K8S_CONFIG_GROUP):
        given = [o for o in seq(group.props.get("objs")) if isinstance(o, Mapping)]
        texts = group.props.get("yaml")
        for text in [texts] if isinstance(texts, str) else [t for t in seq(texts) if isinstance(t, str)]:
            try:
                given += [d for d in YAML(typ="safe", pure=True).load_all(text) if isinstance(d, Mapping)]
            except YAMLError as err:
                gaps.append(f"ConfigGroup {group.name!r}: its YAML does not parse ({type(err).__name__}): its objects are not read")
        for obj in given:
            token = _KARPENTER_KINDS.get((obj.get("apiVersion"), obj.get("kind")))
            name = mapping(obj.get("metadata")).get("name")
            if token is not None and isinstance(name, str):
                found.append(Resource(f"{group.urn}${token}::{name}", token, name, obj, derived=f"an object of ConfigGroup {group.name!r}"))
        if seq(group.props.get("files")) or isinstance(group.props.get("files"), str):
            gaps.append(f"ConfigGroup {group.name!r}: the YAML of its files is not in the plan: Karpenter objects there are not read")
    karpenter_chart = cat.facts.karpenter.chart.chart
    uses_karpenter = (
        found
        or any(index.of(t) for t in _KARPENTER_KINDS.values())
        or any(r.props.get("chart") == karpenter_chart for r in index.of(tokens.HELM_RELEASE))
    )
    for config in index.of(tokens.K8S_CONFIG_FILE) if uses_karpenter else ():
        gaps.append(
            f"ConfigFile {config.name!r} ({config.props.get('file')!r}): its YAML is not in the plan: Karpenter objects there are not read"
        )
    return found


def pools(index: Index, cat: Catalog) -> tuple[list[karpenter.Pool], list[str]]:
    """Every NodePool of the plan (EKS Auto Mode's built-in ones too, and those of ConfigGroups) as the
    simulation launches from it, and what of them is unknown."""
    gaps: list[str] = []
    from_yaml = _from_yaml(index, cat, gaps)
    if from_yaml:
        index = Index([*index.resources, *from_yaml])
    overlays = _overlays(index, cat, gaps)
    found = []
    built_in = _built_in_pools(index, cat, gaps)
    for resource in [*index.of(tokens.KARPENTER_NODE_POOL), *built_in]:
        pool = _read_pool(resource, index, cat, overlays, gaps)
        if pool is not None:
            found.append(dataclasses.replace(pool, provisioner=_provisioner(pool, resource, index, cat)))
    if built_in:
        gaps.append(
            f"NodePools {', '.join(repr(r.name) for r in built_in)} are EKS Auto Mode's built-in pools, derived from the user guide's "
            "description (their YAML is not published): verdicts on their nodes are advisory"
        )
    return found, gaps


def _only(values: list[object]) -> str | None:
    return values[0] if len(set(values)) == 1 and isinstance(values[0], str) else None


def _provisioner(
    pool: karpenter.Pool, resource: Resource, index: Index, cat: Catalog
) -> tuple[Literal["karpenter", "auto-mode"], str | None]:
    """Who launches the pool's nodes, and its version where the plan says it: EKS Auto Mode by its
    cluster's Kubernetes version (a built-in pool's own cluster, else the plan's one EKS cluster),
    Karpenter by the chart version its Helm release pins (the plan's one Karpenter release)."""
    if pool.plugins_built_in:
        cluster = index.by_urn.get(resource.urn) if resource.derived else None
        clusters = [cluster] if cluster is not None else index.of(tokens.EKS_CLUSTER)
        return "auto-mode", _only([c.props.get("version") for c in clusters])
    releases = [r for r in index.of(tokens.HELM_RELEASE) if r.props.get("chart") == cat.facts.karpenter.chart.chart]
    return "karpenter", _only([r.props.get("version") for r in releases])


def _read_pool(resource: Resource, index: Index, cat: Catalog, overlays, gaps: list[str]) -> karpenter.Pool | None:
    node = mapping(mapping(_spec(resource).get("template")).get("spec"))
    class_name, node_class, reserved = _node_class(index, node)
    return karpenter_pools.read_pool(
        _name(resource),
        _spec(resource),
        (class_name, node_class),
        overlays,
        cat,
        gaps,
        resource.urn,
        reserved,
        provider_region(resource, index, "aws"),
    )
