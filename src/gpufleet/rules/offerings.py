"""Where an instance type is offered (regions and zones) and how it may be bought."""

from __future__ import annotations

from gpufleet.catalog.catalog import InstanceType


def region_listed(region: str, regions: list[str], what: str) -> str | None:
    """Is the region among those a source document lists for a feature (`what ... supported`)?"""
    if region not in regions:
        return f"{what} not supported in {region} (supported: {', '.join(sorted(regions))})"
    return None


def offered_in(it: InstanceType, region: str, zone: str | None = None) -> str | None:
    """Is the type offered in the region (and availability zone, when given)?"""
    zones = it.offerings.get(region)
    if not zones:
        return f"{it.name} is not offered in {region}"
    if zone is not None and zone not in zones:
        return f"{it.name} is not offered in {zone} (offered in {', '.join(zones)})"
    return None


def spot_supported(it: InstanceType) -> str | None:
    if "spot" not in it.usage_classes:
        return f"{it.name} is not offered as Spot (usage classes: {', '.join(it.usage_classes) or 'none'})"
    return None


def zones_offering(types: list[InstanceType], region: str) -> tuple[str, ...]:
    """Availability zones of the region where every one of the types is offered, in order."""
    if not types:
        return ()
    common = set(types[0].offerings.get(region, ()))
    for it in types[1:]:
        common &= set(it.offerings.get(region, ()))
    return tuple(sorted(common))
