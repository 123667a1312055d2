"""The zones of a VPC gpufleet creates: named in the stack, never chosen by gpufleet, so no later
change of an instance type can move them (a moved zone deletes subnets the cluster and its network
interfaces still sit in). One statement for ECS and EKS.

Each group runs in the VPC's zones that offer its type; a type offered in none of them is refused,
with the fix that is additive: a new zone (a new subnet) that offers it.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufleet.catalog.catalog import Catalog, InstanceType
from gpufleet.platform.model import Violation
from gpufleet.rules import offerings as offering_rules


def region_zones(cat: Catalog, region: str) -> set[str]:
    """The availability zones of the region that the catalog's offerings name."""
    return {zone for it in cat.types.values() for zone in it.offerings.get(region, ())}


def group_zones(it: InstanceType, zones: list[str], region: str) -> list[str]:
    """The VPC's zones (in the stack's order) that offer the type."""
    return [z for z in zones if offering_rules.offered_in(it, region, z) is None]


def suggested_zones(types: list[InstanceType], region: str, count: int) -> list[str]:
    return list(offering_rules.zones_offering(types, region)[:count])


def zone_problems(
    zones: list[str],
    region: str,
    groups: list[tuple[tuple, InstanceType]],
    cat: Catalog,
    field: tuple,
    followers: Sequence[tuple[str, InstanceType]] = (),
) -> list[Violation]:
    """What is wrong with the stack's VPC zones for its groups ((field of the group's type, type)).
    `followers` are the groups (name, type) that run in every VPC zone offering their type and are
    replaced when that set grows (EKS node groups that name no zones): the additive fix names them."""
    found = []
    known = region_zones(cat, region)
    for i, zone in enumerate(zones):
        if zone not in known:
            found.append(
                Violation("vpc-zone-known", (*field, i), zone, f"not an availability zone of {region} (known: {', '.join(sorted(known))})")
            )
        if zone in zones[:i]:
            found.append(Violation("names-unique", (*field, i), zone, "each zone is named once"))
    if found:
        return found
    for where, it in groups:
        if not group_zones(it, zones, region):
            offered = sorted(it.offerings.get(region, ()))
            spread = sorted(name for name, other in followers if other is not it and set(other.offerings.get(region, ())) & set(offered))
            caveat = (
                f"; node groups {', '.join(spread)} name no zones and are offered there too: a new zone that offers them "
                "spreads them to it, which replaces them (give them zones first)"
                if spread
                else ""
            )
            found.append(
                Violation(
                    "vpc-zones-offered",
                    where,
                    it.name,
                    f"{it.name} is offered in none of the VPC's zones ({', '.join(zones)}); it is offered in "
                    f"{', '.join(offered) or 'no zone of ' + region}. Add one of those to {'.'.join(map(str, field))} "
                    f"(a new subnet: additive, nothing is replaced{caveat}), or choose a type the VPC's zones offer",
                )
            )
    return found
