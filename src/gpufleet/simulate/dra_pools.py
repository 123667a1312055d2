"""The resource pools a node can allocate from, as k8s.io/dynamic-resource-allocation's stable
allocator gathers them (tag v0.35.6, commit c181a505b8c74dfba3c9bcb0e2e4d53d00a7334d,
structured/internal/stable/pools_stable.go): the node's own slices, the slices for all nodes and
those whose node selector takes the node; per pool only its newest generation; a pool missing some
of its slices incomplete, one naming a device twice invalid."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpufleet.simulate.dra_objects import Node, NodeSelector, Requirement, ResourceSlice, Term
from gpufleet.simulate.k8s_filters import expression_matches

# the field a NodeSelectorTerm's matchFields may name (nodeaffinity's only supported field)
NODE_NAME_FIELD = "metadata.name"


@dataclass(frozen=True)
class GatheredPool:
    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]
    incomplete: bool
    invalid: bool

    @property
    def shown(self) -> str:
        return f"{self.driver}/{self.name}"  # PoolID.String (pools_stable.go L227-L229)


def _requirement_matches(requirement: Requirement, values: dict[str, str]) -> bool:
    return expression_matches({"key": requirement.key, "operator": requirement.operator, "values": list(requirement.values)}, values)


def _term_matches(term: Term, node: Node) -> bool:
    # a term with no requirement selects no node (component-helpers nodeaffinity)
    if not term.match_expressions and not term.match_fields:
        return False
    return all(_requirement_matches(r, dict(node.labels)) for r in term.match_expressions) and all(
        _requirement_matches(r, {NODE_NAME_FIELD: node.name}) for r in term.match_fields
    )


def selector_matches(selector: NodeSelector, node: Node | None) -> bool:
    """Any term matches (the terms are ORed); no node matches nothing."""
    return node is not None and any(_term_matches(term, node) for term in selector.terms)


def slice_matches(s: ResourceSlice, node: Node | None) -> bool | None:
    """NodeMatches (pools_stable.go L31-L46) on the slice's node selection; None where the slice
    sets none of nodeName, allNodes, nodeSelector (L86-L95: skipped as a future extension)."""
    if s.node_name:
        return node is not None and s.node_name == node.name
    if s.all_nodes:
        return True
    if s.node_selector is not None:
        return selector_matches(s.node_selector, node)
    return None


def _add(pools: dict[tuple[str, str], list[ResourceSlice]], s: ResourceSlice) -> None:
    """addSlice (L138-L169): an older generation is dropped, a newer one replaces the pool's slices."""
    key = (s.driver, s.pool.name)
    kept = pools.setdefault(key, [])
    if kept and s.pool.generation < kept[0].pool.generation:
        return
    if kept and s.pool.generation > kept[0].pool.generation:
        kept.clear()
    kept.append(s)


def _newest_count(slices: Sequence[ResourceSlice], key: tuple[str, str], generation: int) -> int | None:
    """checkSlicesInPool (L192-L213): None when a newer generation exists elsewhere (obsolete)."""
    same = [s for s in slices if (s.driver, s.pool.name) == key]
    if any(s.pool.generation > generation for s in same):
        return None
    return sum(1 for s in same if s.pool.generation == generation)


def _duplicate_device(slices: Sequence[ResourceSlice]) -> bool:
    """poolIsInvalid (L171-L182): one device name twice in the pool."""
    names = [d.name for s in slices for d in s.devices]
    return len(names) != len(set(names))


def gather_pools(slices: Sequence[ResourceSlice], node: Node | None) -> tuple[GatheredPool, ...]:
    """GatherPools (L54-L136) with every alpha gate off: a slice with per-device node selection is
    skipped (L58-L60, DRAPartitionableDevices). Pools keep the order their first slice came in;
    upstream walks a Go map, so no upstream case depends on the order across pools."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in slices:
        if not s.per_device_node_selection and slice_matches(s, node):
            _add(pools, s)
    out = []
    for key, kept in pools.items():
        wanted = kept[0].pool.resource_slice_count
        complete = len(kept) == wanted
        if not complete:
            count = _newest_count(slices, key, kept[0].pool.generation)
            if count is None:
                continue  # L115-L122: the driver is replacing this generation
            complete = count == wanted
        out.append(GatheredPool(key[0], key[1], tuple(kept), incomplete=not complete, invalid=_duplicate_device(kept)))
    return tuple(out)
