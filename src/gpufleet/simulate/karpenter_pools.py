"""A Karpenter NodePool's spec (and its EC2NodeClass's) read as the pool the provisioning simulation
launches from: the catalog's types its requirements admit, as Karpenter estimates a node of each,
its labels, taints, weight, limits and consolidation. The plan reader hands in any program's pools;
the stack spec hands in the NodePools gpufleet would create, so both doors judge the same pool.

What a pool's inputs leave unknown (an unknown value, a requirement on a label the catalog cannot
give) is a gap, written to `gaps`; the pool is judged without it, and verdicts on it are advisory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gpufleet.catalog import tokens
from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.rules import eks as eks_rules
from gpufleet.rules import karpenter as karpenter_rules
from gpufleet.rules import karpenter_requirements
from gpufleet.rules.karpenter_requirement import requirement
from gpufleet.simulate import karpenter, node_capacity
from gpufleet.simulate.k8s_shapes import NodeShape, QuantityError, quantity
from gpufleet.simulate.loose import as_int, mapping, seq

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
        found.append(karpenter.Requirement(r["key"], r["operator"], tuple(str(v) for v in r.get("values") or [])))
    return found


def quantities(given: object, what: str, gaps: list[str]) -> dict[str, int]:
    """A resource list (a NodePool's limits, a NodeOverlay's capacity); a value not known offline is a gap."""
    found = {}
    for resource, value in mapping(given).items():
        try:
            found[str(resource)] = quantity(str(resource), value)
        except QuantityError:
            gaps.append(f"{what} {resource}={value!r} is not known offline: not counted")
    return found


def _allowed(requirements: list[karpenter.Requirement], key: str) -> frozenset[str] | None:
    """The capacity types a pool's requirements allow (None: left open)."""
    allowed = [frozenset(r.values) for r in requirements if r.key == key and r.operator == "In"]
    return frozenset.intersection(*allowed) if allowed else None


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


_LABELLED: dict[tuple[int, str], tuple[Catalog, list]] = {}


def _labelled(cat: Catalog, domain: str) -> list[tuple[InstanceType, dict[str, str], frozenset[str]]]:
    """Every type of the catalog with Karpenter's labels of it (under `domain`): the same for every
    pool, so read once per catalog (the catalog is kept with them, so its id is not reused)."""
    key = (id(cat), domain)
    if key not in _LABELLED:
        found = []
        for it in cat.types.values():
            labels = node_capacity.karpenter_labels(it, cat.facts.karpenter, cat.facts.eks, domain)
            found.append((it, labels, frozenset(labels)))
        _LABELLED[key] = (cat, found)
    return _LABELLED[key][1]


def read_pool(
    name: str,
    spec: Mapping,
    node_class: tuple[str | None, Mapping | None],
    overlays: Sequence[Overlay],
    cat: Catalog,
    gaps: list[str],
    urn: str | None = None,
    reserved: int | None = None,
) -> karpenter.Pool | None:
    """The pool a NodePool's `spec` makes; `node_class` is (the name its template refers to, that
    EC2NodeClass's spec where known); `reserved` the instances its reservations hold, where stated.
    None when the spec itself is not known."""
    facts, eks = cat.facts.karpenter, cat.facts.eks
    auto = eks.auto_mode
    names = eks.well_known_labels
    known = facts.requirement_labels
    aliases = {**known.aliases, **known.provider_aliases}
    before = len(gaps)
    if not spec:
        gaps.append(f"Karpenter NodePool {name!r}: its spec is not known offline: the nodes it would launch are not judged")
        return None
    template = mapping(spec.get("template"))
    node, metadata = mapping(template.get("spec")), mapping(template.get("metadata"))
    # An EKS Auto Mode pool: its nodes' labels are under eks.amazonaws.com, its plugins built in.
    on_auto = mapping(node.get("nodeClassRef")).get("group") == auto.node_class_group
    domain = auto.label_domain if on_auto else facts.labels.domain
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
    type_keys: set[str] = set()
    candidates, ami_problem = [], None
    held = []  # every type's labels, as the catalog holds them
    layout = [] if on_auto else [i for i in seq(mapping(node_class[1]).get("networkInterfaces")) if isinstance(i, Mapping)]
    # Requirements on a label the catalog can give but a type lacks (its GPU labels, say) exclude it.
    judged_anyway = [
        r for r in requirements if r.key.startswith(domain + "/") and r.key.rsplit("/", 1)[-1] not in facts.labels.not_in_catalog
    ]
    for it, type_labels, keys in _labelled(cat, domain):
        held.append(type_labels)
        type_keys |= keys
        if not all(r.admits(type_labels) for r in requirements if r.key in keys) or not all(
            r.admits(type_labels) for r in judged_anyway if r.key not in keys
        ):
            continue
        allocatable = node_capacity.karpenter_allocatable(it, facts, eks)
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
        for wanted, capacity in () if on_auto else overlays:  # Auto Mode reads no NodeOverlay (containers-roadmap#2690)
            if all(r.admits(type_labels) for r in wanted):
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
        candidates.append(
            karpenter.Candidate(
                shape,
                capacity,
                it.vcpus,
                it.memory_mib,
                exotic=bool(it.gpu and it.gpu.count) or it.neuron is not None or "metal" in it.name,
                overlaid=frozenset(overlaid),
                requirements=karpenter_requirements.from_labels(shape.labels, aliases),
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
            if v not in {labels_of[r.key] for labels_of in held}
        }
    )
    if unheld:
        gaps.append(
            f"Karpenter NodePool {name!r}: requirements name {', '.join(unheld)}, which the catalog's EC2 data does not hold (a typo, or newer than the data): not judged"
        )
    # What leaves the pool's admitted types undecided (its requirements' gaps, not its AMI's).
    requirement_gaps = tuple(gaps[before:])
    refused = unseen = capacity_types = None
    if not on_auto:  # Auto Mode chooses its nodes' AMIs itself
        class_name, class_spec = node_class
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
        capacity_types = _allowed(requirements, facts.labels.capacity_type)
        refused = karpenter_rules.reserved_without_reservations(capacity_types, class_spec, facts)
        unseen = (
            class_name
            if class_spec is None and capacity_types is not None and capacity_types <= {facts.reserved_capacity.capacity_type}
            else None
        )
        if unseen is not None:
            gaps.append(
                f"Karpenter NodePool {name!r}: its EC2NodeClass {unseen!r} is not in the plan, so the capacity reservations it selects are not known"
            )
    return karpenter.Pool(
        name,
        as_int(spec.get("weight")),
        tuple(candidates),
        defined,
        quantities(spec.get("limits"), f"Karpenter NodePool {name!r}: limit", gaps),
        urn,
        requirements=karpenter_requirements.requirements(
            *(requirement(r.key, r.operator, *r.values, aliases=aliases) for r in requirements)
        ).merged(karpenter_requirements.from_labels(labels, aliases)),
        # The well-known labels (AllowUndefinedWellKnownLabels, core's and the provider's); on Auto
        # Mode, whose label domain is its own, the keys its types carry too.
        allow_undefined=frozenset(known.well_known) | frozenset(known.provider_well_known) | frozenset(type_keys),
        aliases=aliases,
        refused=refused,
        unseen_node_class=unseen,
        ami_problem=ami_problem,
        unjudged=requirement_gaps,
        plugins_built_in=on_auto,
        reserved=reserved if capacity_types and capacity_types <= {facts.reserved_capacity.capacity_type} else None,
        consolidation=str(mapping(spec.get("disruption")).get("consolidationPolicy") or facts.consolidation.default_policy),
    )
