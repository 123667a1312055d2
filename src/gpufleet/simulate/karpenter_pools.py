"""A Karpenter NodePool's spec (and its EC2NodeClass's) read as the pool the provisioning simulation
launches from: the catalog's types whose requirements intersect its own, as Karpenter estimates a
node of each under its EC2NodeClass's kubelet settings, with the zones, region and capacity types
each is offered in; its labels, taints, weight, limits and consolidation. The plan reader hands in any program's pools;
the stack spec hands in the NodePools gpufleet would create, so both doors judge the same pool.

What a pool's inputs leave unknown (an unknown value, a requirement on a label the catalog cannot
give) is a gap, written to `gaps`; the pool is judged without it, and verdicts on it are advisory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpufleet.apis.quantity import QuantityError, quantity
from gpufleet.catalog import prices as price_catalog
from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.catalog.prices import PriceSnapshot
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import karpenter as karpenter_rules
from gpufleet.rules import karpenter_requirements
from gpufleet.rules.cost import Price, cheapest_offering
from gpufleet.rules.karpenter_requirement import DOES_NOT_EXIST, IN, requirement
from gpufleet.rules.karpenter_requirements import Requirements
from gpufleet.simulate import karpenter, karpenter_gaps, node_capacity
from gpufleet.simulate.k8s_shapes import NodeShape
from gpufleet.simulate.loose import as_int, mapping, seq

_COMPARISONS = frozenset({"Gt", "Lt", "Gte", "Lte"})
_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"})
# A NodeOverlay as the reader hands it in: its requirements and the capacity it sets.
Overlay = tuple[list[karpenter.Requirement], dict[str, int]]
# gpufleet's own record, on the EC2NodeClasses it makes, of the instances their reservations hold
# (a stated count: Karpenter reads the reservations themselves, which a plan does not hold).
RESERVED_INSTANCES = "gpufleet.dev/reserved-instances"


def requirements_of(template: Mapping, name: str, gaps: list[str]) -> list[karpenter.Requirement]:
    found = []
    for r in seq(template.get("requirements")):
        if (
            not isinstance(r, Mapping)
            or not isinstance(r.get("key"), str)
            or r.get("operator") not in _OPERATORS
            or not isinstance(r.get("values", []), (list, tuple))
        ):
            gaps.append(f"Karpenter NodePool {name!r}: requirement {r!r} is not one the simulation reads: not judged")
            continue
        if tokens.UNKNOWN in r.get("values", []):
            gaps.append(f"Karpenter NodePool {name!r}: requirement on {r['key']} has a value not known until apply: not judged")
            continue
        values = tuple(str(v) for v in r.get("values") or [])
        found.append(karpenter.Requirement(r["key"], r["operator"], values, karpenter_requirements.min_values_of(r.get("minValues"))))
    return found


def quantities(given: object, what: str, gaps: list[str]) -> dict[str, int]:
    """A resource list (a NodePool's limits, a NodeOverlay's capacity); a value not known offline is a gap."""
    found = {}
    for resource, value in mapping(given).items():
        try:
            found[str(resource)] = quantity(str(resource), value)
        except QuantityError as err:
            known = value != tokens.UNKNOWN
            gaps.append(f"{what} {err}: not counted" if known else f"{what} {resource}={value!r} is not known offline: not counted")
    return found


def _allowed(requirements: list[karpenter.Requirement], key: str) -> frozenset[str] | None:
    """The capacity types a pool's requirements allow (None: left open)."""
    allowed = [frozenset(r.values) for r in requirements if r.key == key and r.operator == "In"]
    return frozenset.intersection(*allowed) if allowed else None


def ami_family(node_class: Mapping | None) -> str | None:
    """The AMI family Karpenter reads an EC2NodeClass as (its alias's family, else spec.amiFamily),
    lower case; None where it names neither (Custom)."""
    given = mapping(node_class).get("amiFamily")
    return alias_family(node_class) or (given.lower() if isinstance(given, str) else None)


def alias_family(node_class: Mapping | None) -> str | None:
    """The AMI family of an EC2NodeClass that selects its AMI by alias (the only term), else None."""
    terms = [t for t in seq((node_class or {}).get("amiSelectorTerms")) if isinstance(t, Mapping)]
    alias = terms[0].get("alias") if len(terms) == 1 else None
    return alias.split("@", 1)[0] if isinstance(alias, str) else None


def _laid_out_efa(it: InstanceType, layout: list[Mapping]) -> int | None:
    """The EFA devices a node of the type gets from an EC2NodeClass's networkInterfaces: its efa-only
    entries (instancetype/types.go L472-L483); None where the type cannot take the layout, which
    Karpenter filters out (compatibility.go L39-L130: too few network cards, or EFA interfaces)."""
    cards = max((as_int(i.get("networkCardIndex")) for i in layout), default=0) + 1
    efa = sum(1 for i in layout if i.get("interfaceType") == "efa-only")
    if cards > max(it.max_network_cards, 1) or efa > it.max_efa_interfaces:
        return None
    return efa


_LABELLED: dict[tuple[int, str], tuple[Catalog, _Labelled]] = {}
# Provider labels a type's requirements hold as DoesNotExist unless its EC2 record gives a value, so
# a pool or pod requiring one excludes the types without it (karpenter-provider-aws
# pkg/providers/instancetype/types.go @bde00654 L193-L215, filled in at L246-L308).
_ABSENT_UNLESS_GIVEN = (
    "instance-cpu-manufacturer",
    "instance-ebs-bandwidth",
    "instance-local-nvme",
    "instance-category",
    "instance-generation",
    "instance-gpu-name",
    "instance-gpu-manufacturer",
    "instance-gpu-count",
    "instance-gpu-memory",
    "instance-accelerator-name",
    "instance-accelerator-manufacturer",
    "instance-accelerator-count",
)


@dataclass(frozen=True)
class _Labelled:
    """Every type of the catalog with Karpenter's labels of it and the requirements they make, and
    what every pool asks of them all: the keys any type carries and each key's values. A pool naming
    its types is judged on those alone, not on the whole catalog."""

    types: tuple[tuple[InstanceType, dict[str, str], Requirements], ...]
    keys: frozenset[str]
    values: Mapping[str, frozenset[str]]
    # Label key -> the key Karpenter reads it as: one mapping for every pool, so what is read
    # through it (a pod's requirements) is read once, not once per pool.
    aliases: Mapping[str, str]

    def candidates(self, wanted: Requirements, type_key: str) -> Sequence[tuple[InstanceType, dict[str, str], Requirements]]:
        """The types `wanted` may admit: those it names by type, where it names them (in catalog
        order, so a plan is the same as judging every type), else every type."""
        named = wanted.by_key.get(type_key)
        if named is None or named.complement:
            return self.types
        return [entry for entry in self.types if entry[0].name in named.values]


def _labelled(cat: Catalog, domain: str) -> _Labelled:
    """The catalog's types as every pool under `domain` reads them: the same for every pool, so read
    once per catalog (the catalog is kept with them, so its id is not reused)."""
    key = (id(cat), domain)
    if key not in _LABELLED:
        known = cat.facts.karpenter.requirement_labels
        aliases = {**known.aliases, **known.provider_aliases}
        found = []
        for it in cat.types.values():
            labels = node_capacity.karpenter_labels(it, cat.facts.karpenter, cat.facts.eks, domain)
            absent = [requirement(f"{domain}/{k}", DOES_NOT_EXIST) for k in _ABSENT_UNLESS_GIVEN if f"{domain}/{k}" not in labels]
            # Every type may launch on shared or dedicated tenancy (types.go @bde00654 L218).
            tenancy = requirement(f"{domain}/instance-tenancy", IN, "default", "dedicated")
            found.append((it, labels, karpenter_requirements.from_labels(labels, aliases).add(*absent, tenancy)))
        values: dict[str, set[str]] = {}
        for _, labels, _ in found:
            for k, v in labels.items():
                values.setdefault(k, set()).add(v)
        labelled = _Labelled(tuple(found), frozenset(values), {k: frozenset(v) for k, v in values.items()}, aliases)
        _LABELLED[key] = (cat, labelled)
    return _LABELLED[key][1]


def _kubelet(
    node_class: Mapping | None, family: str | None, layout: list[Mapping], name: str, gaps: list[str]
) -> node_capacity.NodeClassKubelet:
    """The node class's kubelet settings Karpenter's estimate reads (EC2NodeClass spec.kubelet); a
    value not known offline is a gap, and the default is used."""
    given = mapping(mapping(node_class).get("kubelet"))
    what = f"Karpenter NodePool {name!r}: its EC2NodeClass kubelet"
    eviction = mapping(given.get("evictionHard")).get("memory.available")
    for key in ("maxPods", "podsPerCore"):
        if key in given and not isinstance(given[key], int):
            gaps.append(f"{what} {key}={given[key]!r} is not known offline: not counted")
    if eviction is not None and not isinstance(eviction, str):
        gaps.append(f"{what} evictionHard memory.available={eviction!r} is not known offline: not counted")
    elif eviction is not None:
        try:
            node_capacity.eviction_memory(0, eviction, 0)
        except QuantityError as err:
            gaps.append(f"{what} evictionHard {err}: not counted")
            eviction = None
    bottlerocket = family == "bottlerocket"
    return node_capacity.NodeClassKubelet(
        max_pods=given["maxPods"] if isinstance(given.get("maxPods"), int) else None,
        pods_per_core=given["podsPerCore"] if isinstance(given.get("podsPerCore"), int) else None,
        kube_reserved=quantities(given.get("kubeReserved"), f"{what} kubeReserved", gaps),
        system_reserved=quantities(given.get("systemReserved"), f"{what} systemReserved", gaps),
        eviction_hard_memory=eviction if isinstance(eviction, str) else None,
        efa_only_on_card0=sum(1 for i in layout if i.get("interfaceType") == "efa-only" and as_int(i.get("networkCardIndex")) == 0),
        # bottlerocket.go @bde00654 L214-L220 (every other Linux family: resolver.go L127-L134).
        pods_per_core_enabled=not bottlerocket,
        eni_limited_memory_overhead=not bottlerocket,
    )


def _prices(
    it: InstanceType, region: str | None, offered: Requirements, unknown: frozenset[str], cat: Catalog, snapshot: PriceSnapshot
) -> dict[str, Price]:
    """Per capacity type the type is offered in, the price Karpenter orders it by (or why it has
    none); not `unknown` ones (reserved capacity, where the EC2NodeClass is not in the plan: whether
    it has reservations to launch into is not known)."""
    held = offered.get(cat.facts.karpenter.labels.capacity_type).values - unknown
    return {capacity: cheapest_offering(snapshot, region, it.name, capacity) for capacity in sorted(held)}


def _offering(
    it: InstanceType, region: str | None, capacity_types: tuple[str, ...], family: str | None, cat: Catalog
) -> tuple[Requirements, str | None]:
    """The zones, region and capacity types the type is offered in, as its requirements
    (computeRequirements, types.go @bde00654 L170-L192: on-demand and spot from its usage
    classes, reserved where the node class selects reservations; the zones EC2 offers it in), and
    why it has no offering Karpenter may launch (None: it has one). Zones are judged only where
    the region is known and the catalog holds the type's offerings; the node class's subnets'
    zones are not known offline."""
    names, reserved = cat.facts.eks.well_known_labels, cat.facts.karpenter.reserved_capacity.capacity_type
    offered = [c for c in capacity_types if c == reserved or c in it.usage_classes]
    held = [requirement(cat.facts.karpenter.labels.capacity_type, IN, *offered)]
    why = None if offered else f"{it.name} has no capacity type Karpenter launches (usage classes: {', '.join(it.usage_classes) or 'none'})"
    if region is not None:
        held.append(requirement(names.region, IN, region))
        if it.offerings:
            zones = it.offerings.get(region, ())
            held.append(requirement(names.zone, IN, *zones))
            why = why or (None if zones else f"{it.name} is not offered in {region}")
    why = why or karpenter_rules.ami_family_runs(family, it.name)
    return karpenter_requirements.requirements(*held), why


def read_pool(
    name: str,
    spec: Mapping,
    node_class: tuple[str | None, Mapping | None],
    overlays: Sequence[Overlay],
    cat: Catalog,
    gaps: list[str],
    urn: str | None = None,
    reserved: int | None = None,
    region: str | None = None,
    prices: PriceSnapshot | None = None,
) -> karpenter.Pool | None:
    """The pool a NodePool's `spec` makes; `node_class` is (the name its template refers to, that
    EC2NodeClass's spec where known); `reserved` the instances its reservations hold, where stated;
    `region` where its nodes launch, where known (its types' zones are judged then, and their
    prices read from `prices`, the catalog's snapshot unless given). None when the spec itself is
    not known."""
    facts, eks = cat.facts.karpenter, cat.facts.eks
    auto = eks.auto_mode
    names = eks.well_known_labels
    known = facts.requirement_labels
    before = len(gaps)
    snapshot = prices or price_catalog.load()
    if not spec:
        gaps.append(f"Karpenter NodePool {name!r}: its spec is not known offline: the nodes it would launch are not judged")
        return None
    template = mapping(spec.get("template"))
    node, metadata = mapping(template.get("spec")), mapping(template.get("metadata"))
    # An EKS Auto Mode pool: its nodes' labels are under eks.amazonaws.com, its plugins built in.
    on_auto = mapping(node.get("nodeClassRef")).get("group") == auto.node_class_group
    domain = auto.label_domain if on_auto else facts.labels.domain
    labelled = _labelled(cat, domain)
    aliases = labelled.aliases
    requirements = requirements_of(node, name, gaps)
    labels = {str(k): str(v) for k, v in mapping(metadata.get("labels")).items()}
    labels[facts.labels.node_pool] = name
    taints = tuple(t for t in seq(node.get("taints")) if isinstance(t, Mapping))
    unjudged = sorted({r.key for r in requirements if r.key.rsplit("/", 1)[-1] in facts.labels.not_in_catalog and r.key.startswith(domain)})
    if unjudged:
        gaps.append(
            f"Karpenter NodePool {name!r}: requirements on {', '.join(unjudged)}, which EC2's record in the catalog does not give: not judged"
        )
    defined: dict[str, frozenset[str] | None] = {k: frozenset({v}) for k, v in labels.items()}
    candidates, ami_problem = [], None
    type_keys = labelled.keys
    class_name, class_spec = node_class
    layout = [] if on_auto else [i for i in seq(mapping(class_spec).get("networkInterfaces")) if isinstance(i, Mapping)]
    family = None if on_auto else ami_family(class_spec)
    kubelet = node_capacity.NodeClassKubelet() if on_auto else _kubelet(class_spec, family, layout, name, gaps)
    pool_requirements = karpenter_requirements.requirements(
        *(requirement(r.key, r.operator, *r.values, min_values=r.min_values, aliases=aliases) for r in requirements)
    ).merged(karpenter_requirements.from_labels(labels, aliases))
    # A type is kept where its requirements intersect the pool's (filterInstanceTypesByRequirements,
    # kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go @6e7eab7a
    # L154-L171, nodeclaim.go L620-L622); its offerings (zones, region, capacity types) are the
    # scheduler's to judge, per NodeClaim (nodeclaim.go L624-L639).
    offering_keys = {names.zone, names.region, facts.labels.capacity_type}
    label_requirements = Requirements({k: r for k, r in pool_requirements.by_key.items() if k not in offering_keys})
    capacity_types = tuple(
        c
        for c in facts.labels.capacity_types
        if c != facts.reserved_capacity.capacity_type or (class_spec is None or class_spec.get(facts.reserved_capacity.selector))
    )
    unknown_capacity = frozenset({facts.reserved_capacity.capacity_type} if class_spec is None else ())
    # The NodePool CRD refuses a comparison without one non-negative integer (karpenter.sh_nodepools.yaml
    # of chart 1.14.1 L345-L346): such a pool launches nothing.
    refused_by_crd = any(r.operator in _COMPARISONS and not (len(r.values) == 1 and r.values[0].isdigit()) for r in requirements)
    pooled = karpenter_requirements.from_labels(labels, aliases)  # the pool's name among them
    overlay_requirements = [
        (karpenter_requirements.requirements(*(requirement(r.key, r.operator, *r.values, aliases=aliases) for r in wanted)), capacity)
        for wanted, capacity in (() if on_auto else overlays)  # Auto Mode reads no NodeOverlay (containers-roadmap#2690)
    ]
    for it, type_labels, type_requirements in labelled.candidates(label_requirements, names.instance_type):
        if refused_by_crd or not type_requirements.meets(label_requirements):
            continue
        allocatable = node_capacity.karpenter_allocatable(it, facts, eks, kubelet)
        if layout:
            efa = _laid_out_efa(it, layout)
            if efa is None:
                continue
            allocatable.pop(eks.efa_resource, None)
            if efa:
                allocatable[eks.efa_resource] = efa
        if on_auto:
            allocatable["pods"] = min(allocatable["pods"], auto.max_pods)
        overlaid: set[str] = set()
        # An overlay applies where the type, under this pool's name and labels, is Compatible with
        # its requirements (kubernetes-sigs/karpenter pkg/controllers/nodeoverlay/controller.go
        # @v1.14.1 L231-L244: no key allowed undefined; the offerings' own filter is not modelled).
        as_pooled = type_requirements.merged(pooled)
        for wanted, capacity in overlay_requirements:
            if as_pooled.compatible(wanted) is None:
                for resource_name, amount in capacity.items():
                    if resource_name not in overlaid:  # the heaviest overlay sets it
                        allocatable[resource_name] = amount
                        overlaid.add(resource_name)
        shape = NodeShape(
            group=f"NodePool {name}",
            instance_type=it.name,
            # The node's kubelet and AWS's cloud controller add the deprecated spellings, which
            # Karpenter reads a pod's requirements on as the GA ones (kubernetes-sigs/karpenter
            # pkg/apis/v1/labels.go @v1.14.1 L119-L127, NormalizedLabels).
            labels={**node_capacity.with_deprecated(type_labels, names), **labels},
            taints=taints,
            allocatable=allocatable,
            nodes=0,
            max_nodes=0,
            min_nodes=0,
            plugin_resources=frozenset(r for r in allocatable if "/" in r),  # extended resources are domain-prefixed
        )
        capacity = {
            "cpu": it.vcpus * 1000,
            "memory": it.memory_mib * node_capacity.MIB,
            **{k: v for k, v in allocatable.items() if k not in ("cpu", "memory")},
        }
        offered, unoffered = _offering(it, region, capacity_types, family, cat)
        candidates.append(
            karpenter.Candidate(
                shape,
                capacity,
                it.vcpus,
                it.memory_mib,
                exotic=bool(it.gpu and it.gpu.count) or it.neuron is not None or "metal" in it.name,
                overlaid=frozenset(overlaid),
                requirements=type_requirements.merged(karpenter_requirements.from_labels(labels, aliases)).merged(offered),
                unoffered=unoffered,
                prices=_prices(it, region, offered, unknown_capacity, cat, snapshot),
            )
        )
    for r in requirements:
        if r.key in type_keys:
            continue
        defined[r.key] = frozenset(r.values) if r.operator == "In" else None
    # Types or families the catalog's EC2 data does not hold may be newer than it, not wrong.
    unheld = sorted(
        {
            v
            for r in requirements
            if r.operator == "In" and r.key in (names.instance_type, f"{domain}/instance-family")
            for v in r.values
            if v not in labelled.values.get(r.key, frozenset())
        }
    )
    if unheld:
        gaps.append(
            f"Karpenter NodePool {name!r}: requirements name {', '.join(unheld)}, which the catalog's EC2 data does not hold (a typo, or newer than the data): not judged"
        )
    # What leaves the pool's admitted types undecided (its requirements' gaps, not its AMI's).
    requirement_gaps = tuple(gaps[before:])
    refused = unseen = allowed = None
    if not on_auto:  # Auto Mode chooses its nodes' AMIs itself
        family = alias_family(class_spec)
        variants = facts.ami_variants.families.get(family) if family else None
        accelerated = [c for c in candidates if eks_rules.accelerator(cat.get(c.shape.instance_type))]
        if family and variants is not None and accelerated:  # (variants is None without a family)
            arch = names.arch
            kept = [
                c
                for c in candidates
                if (kind := eks_rules.accelerator(cat.get(c.shape.instance_type))) is None
                or kind in variants.get(c.shape.labels.get(arch, ""), [])  # (no variant is listed under "")
            ]
            if not kept:
                ami_problem = karpenter_rules.no_ami_for_accelerators(family, facts)
            candidates = kept
        elif accelerated:
            gaps.append(
                f"Karpenter NodePool {name!r}: its EC2NodeClass {class_name!r} does not select its AMI by one alias (or is not in the plan): whether its AMI runs the accelerators is not judged"
            )
        allowed = _allowed(requirements, facts.labels.capacity_type)
        refused = karpenter_rules.reserved_without_reservations(allowed, class_spec, facts)
        unseen = class_name if class_spec is None and allowed is not None and allowed <= {facts.reserved_capacity.capacity_type} else None
        if unseen is not None:
            gaps.append(
                f"Karpenter NodePool {name!r}: its EC2NodeClass {unseen!r} is not in the plan, so the capacity reservations it selects are not known"
            )
    unmodelled = _unmodelled(spec, class_spec, ami_family(class_spec), pool_requirements, cat)
    gaps.extend(f"Karpenter NodePool {name!r}: {u.what}" for u in unmodelled)
    return karpenter.Pool(
        name,
        as_int(spec.get("weight")),
        tuple(candidates),
        defined,
        quantities(spec.get("limits"), f"Karpenter NodePool {name!r}: limit", gaps),
        urn,
        requirements=pool_requirements,
        taints=taints,
        # The well-known labels (AllowUndefinedWellKnownLabels, core's and the provider's); on Auto
        # Mode, whose label domain is its own, the keys its types carry too.
        allow_undefined=frozenset(known.well_known) | frozenset(known.provider_well_known) | frozenset(type_keys),
        # The network bandwidth is the provider's own table; the zone id, the node class's subnets'
        # (types.go @bde00654 L222-L231): neither is in the plan or the catalog.
        unknown_keys=frozenset(f"{domain}/{k}" for k in facts.labels.not_in_catalog)
        | frozenset(k for k in known.provider_well_known if k.endswith("/zone-id")),
        aliases=aliases,
        refused=refused,
        unseen_node_class=unseen,
        ami_problem=ami_problem,
        unjudged=requirement_gaps,
        plugins_built_in=on_auto,
        reserved=reserved if allowed and allowed <= {facts.reserved_capacity.capacity_type} else None,
        consolidation=str(mapping(spec.get("disruption")).get("consolidationPolicy") or facts.consolidation.default_policy),
        unmodelled=unmodelled,
        passed_over=_static(spec),
        capacity_key=facts.labels.capacity_type,
        region=region,
    )


def _static(spec: Mapping) -> str | None:
    """A static NodePool (spec.replicas): Karpenter's provisioner leaves it out of the pools it
    launches from for pods (kubernetes-sigs/karpenter pkg/controllers/provisioning/provisioner.go
    @6e7eab7a L276-L279; nodepoolutils.IsStatic, pkg/utils/nodepool/nodepool.go L43)."""
    if spec.get("replicas") is None:
        return None
    return f"a static NodePool (spec.replicas {spec['replicas']!r}): Karpenter's provisioner launches no node from it for pods"


def _unmodelled(
    spec: Mapping, class_spec: Mapping | None, family: str | None, requirements: Requirements, cat: Catalog
) -> tuple[karpenter_gaps.Unmodelled, ...]:
    """What of the pool's nodes the simulation does not model: a static pool's own nodes, Windows
    nodes, the instance store as ephemeral storage (curated karpenter.unmodelled)."""
    facts = cat.facts.karpenter.unmodelled
    found = []
    if spec.get("replicas") is not None:
        found.append(
            karpenter_gaps.Unmodelled(
                f"static (spec.replicas {spec['replicas']!r}): its nodes are not simulated, so whether a pod runs on them is not judged"
            )
        )
    linux_only = "gpufleet's simulated nodes are Linux only, so what they hold is not judged"
    if family in facts.windows_families:
        found.append(karpenter_gaps.Unmodelled(f"its EC2NodeClass's AMI family {family} runs Windows nodes: {linux_only}"))
    elif karpenter_gaps.selects_windows(requirements, cat):
        found.append(karpenter_gaps.Unmodelled(f"its requirements admit Windows nodes only: {linux_only}"))
    if mapping(class_spec).get("instanceStorePolicy") == facts.instance_store_policy:
        found.append(
            karpenter_gaps.Unmodelled(
                f"its EC2NodeClass's instanceStorePolicy {facts.instance_store_policy} makes the instance store the node's "
                "ephemeral storage, which gpufleet does not model: a pod requesting ephemeral-storage is not judged",
                requested="ephemeral-storage",
            )
        )
    return tuple(found)
