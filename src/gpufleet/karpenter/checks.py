"""Rules over an EKS fleet's NodePools: each pool is read back as the pack reads any program's
NodePool (manifests.read), and judged by the same rule functions (rules/karpenter.py), with what
only the stack knows (the region, the VPC's zones, EFA) added.

Field paths use the stack file's keys, under nodePools[i]."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from gpufleet.apis import karpenter as karpenter_api
from gpufleet.catalog.catalog import Catalog, UnknownInstanceType
from gpufleet.karpenter import manifests
from gpufleet.karpenter.args import GpuSelectorArgs, NeuronSelectorArgs, NodePoolArgs, PoolEfaArgs
from gpufleet.platform.model import Violation
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import k8s as k8s_rules
from gpufleet.rules import karpenter as karpenter_rules
from gpufleet.rules.efa import efa_count_problem, efa_supported


def check_pools(
    pools: Sequence[NodePoolArgs], region: str, vpc_zones: list[str] | None, cat: Catalog, auto: bool = False
) -> list[Violation]:
    """`vpc_zones`: the created VPC's zones (None: existing subnets); `auto`: an EKS Auto Mode cluster's pools."""
    found = []
    for i, pool in enumerate(pools):
        given = list(_auto_mode(pool, cat) if auto else _karpenter(pool))
        found += [v.under("nodePools", i) for v in given]
        if not given:
            found += [v.under("nodePools", i) for v in _pool(pool, region, vpc_zones, cat, auto)]
    return found


def _karpenter(pool: NodePoolArgs) -> Iterator[Violation]:
    if pool.ami_version is None:
        yield Violation(
            "karpenter-ami-pinned",
            ("amiVersion",),
            None,
            f"pin the AMI release the {pool.ami_family}@ alias resolves to (e.g. v20260724): @latest replaces every node at each release",
        )


def _auto_mode(pool: NodePoolArgs, cat: Catalog) -> Iterator[Violation]:
    """What an Auto Mode NodeClass cannot say (its specification's fields: curated eks.autoMode.build)."""
    build = cat.facts.eks.auto_mode.build
    fields = ", ".join(build.node_class_fields)
    source = f"an EKS Auto Mode NodeClass takes only {fields} ({build.source.split(':', 1)[0]}, create-node-class.adoc)"
    given = {
        "efa": pool.efa.model_dump(by_alias=True) if pool.efa is not None else None,
        "capacityReservations": [r.model_dump(by_alias=True) for r in pool.capacity_reservations] or None,
        "amiFamily": pool.ami_family if "ami_family" in pool.model_fields_set else None,
        "amiVersion": pool.ami_version,
    }
    for name, value in given.items():
        if value is not None:
            yield Violation(
                "eks-auto-mode-node-class",
                (name,),
                value,
                f"not with Auto Mode: {source}; its AMIs, interfaces, placement and reservations are Auto Mode's",
            )
    if pool.neuron is not None and (pool.neuron.names or pool.neuron.count):
        yield Violation(
            "eks-auto-mode-node-class",
            ("neuron",),
            pool.neuron.model_dump(exclude_none=True),
            f"Auto Mode's nodes carry no {', '.join(build.labels_not_given)} label: select Neuron nodes by instanceFamilies or instanceTypes",
        )
    elif pool.neuron is not None and not (pool.instance_families or pool.instance_types):
        yield Violation(
            "eks-auto-mode-node-class",
            ("instanceFamilies",),
            None,
            "a Neuron pool under Auto Mode names its families or types (Auto Mode labels no Neuron device)",
        )


def _known(pool: NodePoolArgs, cat: Catalog) -> Iterator[Violation]:
    for j, name in enumerate(pool.instance_types or []):
        try:
            cat.get(name)
        except UnknownInstanceType as err:
            yield Violation("instance-type-known", ("instanceTypes", j), name, str(err))
    families = {it.family for it in cat.types.values()}
    for j, family in enumerate(pool.instance_families or []):
        if family not in families:
            yield Violation(
                "instance-type-known", ("instanceFamilies", j), family, "no instance type of the catalog's EC2 data is of this family"
            )


def _refused(pool: NodePoolArgs) -> Iterator[Violation]:
    """What the API server or Karpenter's controller refuses though it fits the CRD's patterns: the
    pack's rules on the same values (karpenter-crd-schema, karpenter-values-in-range)."""
    for key in pool.labels:
        reason = karpenter_api.restricted_key_problem(key, karpenter_api.LABELS)
        if reason:
            yield Violation("karpenter-crd-schema", ("labels", key), key, reason)
    for name, value in (("consolidateAfter", pool.consolidate_after), ("expireAfter", pool.expire_after)):
        reason = karpenter_rules.duration_problem(value)
        if reason:
            yield Violation("karpenter-values-in-range", (name,), value, reason)


def _pool(pool: NodePoolArgs, region: str, vpc_zones: list[str] | None, cat: Catalog, auto: bool) -> Iterator[Violation]:
    yield from _refused(pool)
    unknown = list(_known(pool, cat))
    yield from unknown
    for where, value, problem in k8s_rules.node_label_problems(dict(pool.labels), manifests.taints(pool, cat), cat.facts.kubernetes):
        yield Violation("k8s-node-labels", where, value, problem)
    for j, zone in enumerate(pool.zones or []):
        if vpc_zones is not None and zone not in vpc_zones:
            yield Violation(
                "node-group-zones",
                ("zones", j),
                zone,
                "not one of the created VPC's zones: append it to network.create.zones (new subnets, additive)",
            )
    if unknown:
        return
    read = manifests.read(pool, cat, auto=auto)
    if read.ami_problem:
        yield Violation("karpenter-ami-runs-accelerator", ("amiFamily",), pool.ami_family, read.ami_problem)
        return
    reason = karpenter_rules.admits_no_type(len(read.candidates), read.unjudged)
    if reason:
        yield Violation("karpenter-nodepool-admits-a-type", (_selector(pool),), _selector_value(pool), reason)
        return
    types = [cat.get(c.shape.instance_type) for c in read.candidates]
    zones = pool.zones or vpc_zones
    reason = karpenter_rules.offered_nowhere(types, region, zones)
    if reason:
        yield Violation(
            "karpenter-nodepool-offered", ("zones",) if pool.zones else (_selector(pool),), pool.zones or _selector_value(pool), reason
        )
    if read.refused:
        yield Violation("karpenter-reserved-has-reservations", ("capacityTypes",), list(pool.capacity_types), read.refused)
    if pool.efa is not None:
        yield from _efa(pool, types, cat)


def _efa(pool: NodePoolArgs, types: list, cat: Catalog) -> Iterator[Violation]:
    efa = cast(PoolEfaArgs, pool.efa)  # given: _pool calls this only then
    for it in types:
        reason = efa_supported(it) or (efa_count_problem(it, efa.interfaces) if efa.interfaces is not None else None)
        if reason:
            yield Violation("eks-efa-supported", ("efa",), efa.model_dump(by_alias=True, exclude_defaults=True), reason)
            return
    reason = eks_rules.efa_single_zone(pool.zones or [], "the pool's zones are")
    if reason:
        yield Violation("eks-efa-single-az", ("zones",), pool.zones, reason)
    try:
        manifests.efa_interfaces(pool, cat)
    except ValueError as err:
        yield Violation("eks-efa-layout", ("efa",), efa.model_dump(by_alias=True, exclude_defaults=True), str(err))
    reason = eks_rules.efa_placement(bool(pool.capacity_reservations), manifests.places_in_group(pool))
    if reason:
        yield Violation("eks-efa-placement", ("efa", "placementGroup"), efa.placement_group, reason)


def _selector(pool: NodePoolArgs) -> str:
    return (
        "instanceTypes"
        if pool.instance_types
        else "instanceFamilies"
        if pool.instance_families
        else "gpu"
        if pool.gpu is not None
        else "neuron"
    )


def _selector_value(pool: NodePoolArgs):
    if pool.instance_types or pool.instance_families:
        return list(pool.instance_types or pool.instance_families or [])
    # A pool without types or families selects by gpu or neuron (its validator).
    selector = cast(GpuSelectorArgs | NeuronSelectorArgs, pool.gpu or pool.neuron)
    return selector.model_dump(exclude_none=True)
