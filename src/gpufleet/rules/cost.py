"""Cost rules: the hourly price of one instance for a purchase option, what a group costs at its
sizes, and the budget ceilings `fleet-budget` holds. The preview, the diff, the pack and the library
call these functions; the prices are the catalog's snapshot (catalog/prices.py).

A price the snapshot does not hold is unknown (None) with its reason, never 0: Capacity Blocks,
reserved capacity and subscriptions have no public per-hour price in it.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable
from dataclasses import dataclass

from gpufleet.catalog.prices import PriceSnapshot, Quote, accelerator_key

# 24 x 365 / 12 hours: the month issue 42 prices by (a 365-day year's average month).
HOURS_PER_MONTH = 730
SIZES = ("min", "desired", "max")

# A group's purchase option as each API spells it -> the option priced.
ON_DEMAND, SPOT, CAPACITY_BLOCK, RESERVED, SUBSCRIPTION = "on-demand", "spot", "capacity-block", "reserved", "subscription"
_OPTIONS = {
    "ON_DEMAND": ON_DEMAND,  # EKS capacityType, gpufleet's ECS and GKE groups
    "on-demand": ON_DEMAND,  # Karpenter's karpenter.sh/capacity-type
    "Regular": ON_DEMAND,  # AKS priority
    "PostPaid": ON_DEMAND,  # ACK instanceChargeType (pay as you go)
    "SPOT": SPOT,
    "spot": SPOT,
    "Spot": SPOT,
    "CAPACITY_BLOCK": CAPACITY_BLOCK,
    "reserved": RESERVED,
    "PrePaid": SUBSCRIPTION,
}
_NO_PUBLIC_PRICE = {
    CAPACITY_BLOCK: "a Capacity Block's price is set when the block is bought; the snapshot has no Capacity Block prices",
    RESERVED: "reserved capacity is paid under its reservation; the snapshot has no reservation prices",
    SUBSCRIPTION: "a subscription (PrePaid) is paid up front; the snapshot has no subscription prices",
}


def purchase_options(value: str | None) -> tuple[str, ...]:
    """The options a group's purchase setting allows ('spot/on-demand' allows both); none given is on-demand."""
    if not value:
        return (ON_DEMAND,)
    return tuple(_OPTIONS.get(part.strip(), part.strip()) for part in value.split("/"))


@dataclass(frozen=True)
class Price:
    """What one instance costs per hour, or why that is unknown."""

    purchase: str
    dollars: float | None
    basis: str  # where the figure comes from, or the reason it is unknown
    sources: tuple[str, ...] = ()  # the snapshot's sources of the figure


def instance_price(
    snapshot: PriceSnapshot,
    cloud: str | None,
    region: str | None,
    instance_type: str,
    purchase: str | None,
    zones: tuple[str, ...] = (),
    accelerator: tuple[str, int] | None = None,
) -> Price:
    """The hourly price of one instance. `accelerator` (GPU name, count): GCP GPUs priced apart from
    the machine type. Several options allowed (Karpenter's spot/on-demand): the on-demand price, the
    most it pays."""
    options = purchase_options(purchase)
    option = ON_DEMAND if ON_DEMAND in options else options[0]
    if option in _NO_PUBLIC_PRICE:
        return Price(option, None, _NO_PUBLIC_PRICE[option])
    if option not in (ON_DEMAND, SPOT):
        return Price(option, None, f"purchase option {purchase!r} is not one the snapshot prices (on-demand, spot)")
    if cloud is None or cloud not in snapshot.quotes:
        return Price(option, None, "the snapshot has no prices for this cloud (no public source: Alibaba Cloud)")
    if region is None:
        return Price(option, None, "its region is not known before apply")
    parts = [(instance_type, instance_type)] + (
        [(f"{accelerator[1]} x {accelerator[0]}", accelerator_key(*accelerator))] if accelerator else []
    )
    total, bases, sources = 0.0, [], []
    for shown, key in parts:
        quote = snapshot.quote(cloud, region, key)
        if quote is None:
            listed = key in (snapshot.unpriced.get(cloud, {}).get(region) or [])
            why = "its source lists it without an on-demand price" if listed else "the snapshot has no price for it"
            named = "; ".join(snapshot.source_line(s) for s in snapshot.cloud_sources(cloud)) or "no source"
            return Price(option, None, f"{shown} in {region}: {why} ({named})")
        part = _part(quote, shown, option, zones)
        if part is None:
            return Price(option, None, f"{shown} in {region}: the snapshot has no spot price for it")
        total += part[0]
        bases.append(part[1] + (" (its GPUs included)" if quote.gpus_included and accelerator else ""))
        sources.append(quote.source if option == ON_DEMAND else quote.spot_source or quote.source)
        if quote.gpus_included:
            break  # the machine type's price holds its GPUs: no attached-GPU row is added
    several = " (it may launch spot or on-demand: priced at on-demand, the most it pays)" if len(options) > 1 else ""
    return Price(option, round(total, 6), f"{' + '.join(bases)} $/h in {region}{several}", tuple(dict.fromkeys(sources)))


def cheapest_offering(snapshot: PriceSnapshot, region: str | None, instance_type: str, capacity_type: str) -> Price:
    """What Karpenter orders an AWS type by for one capacity type: its cheapest offering's price
    (OrderByPrice, kubernetes-sigs/karpenter pkg/cloudprovider/types.go @6e7eab7a L336-L355): the
    on-demand price, or the lowest of the region's zones' spot prices (the zones an account's zone
    names map to are its own, so the lowest is what some zone offers)."""
    quote = snapshot.quote("aws", region, instance_type)
    if region is not None and capacity_type in (ON_DEMAND, SPOT) and (quote is None or (capacity_type == SPOT and not quote.spot)):
        return Price(capacity_type, None, f"no {capacity_type} price for {instance_type} in {region}")
    price = instance_price(snapshot, "aws", region, instance_type, capacity_type)
    if price.dollars is None or capacity_type != SPOT or quote is None:
        return price
    lowest = min(quote.spot.values())
    return Price(
        SPOT, lowest, f"{instance_type} spot {lowest:g} (lowest of the region's {len(quote.spot)} zones) $/h in {region}", price.sources
    )


def _part(quote: Quote, shown: str, option: str, zones: tuple[str, ...]) -> tuple[float, str] | None:
    """One row's price for the option, and how it was read (None: no spot price)."""
    if option == ON_DEMAND:
        return quote.on_demand, f"{shown} on-demand {quote.on_demand:g}"
    named = [quote.spot[z] for z in zones if z in quote.spot]
    if named:
        return max(named), f"{shown} spot {max(named):g} (highest of zones {', '.join(z for z in zones if z in quote.spot)})"
    if quote.spot:
        # AWS zone names map to zone ids per account: the region's highest spot price bounds any zone's.
        return max(quote.spot.values()), f"{shown} spot {max(quote.spot.values()):g} (highest of the region's {len(quote.spot)} zones)"
    return None


# Prices older than this, on the day judged (GPUFLEET_TODAY, as lifecycles are), are said to be old (issue 55).
STALE_AFTER_DAYS = 90


def prices_stated(snapshot: PriceSnapshot, used: Iterable[str]) -> str:
    """ "prices of <the oldest date in use> (<each source in use and its date>), from <which snapshot>"."""
    used = sorted(set(used))
    if not used:
        return "no group priced"
    oldest, _ = snapshot.oldest(used)
    each = "; ".join(
        f"{s} {(snapshot.sources.get(s) or {}).get('date') or 'undated, read ' + str((snapshot.sources.get(s) or {}).get('read'))}"
        for s in used
    )
    return f"prices of {oldest or 'unknown date'} ({each}), from {snapshot.origin}"


def prices_advisories(snapshot: PriceSnapshot, used: Iterable[str], today: datetime.date) -> list[str]:
    """Each source in use whose prices are older than STALE_AFTER_DAYS on `today`, or carry no date."""
    found = []
    for s in sorted(set(used)):
        source = snapshot.sources.get(s) or {}
        if not source.get("date"):
            found.append(f"{s}: its prices carry no date of their own (read {source.get('read')}): how old they are is unknown")
            continue
        age = (today - datetime.date.fromisoformat(source["date"])).days
        if age > STALE_AFTER_DAYS:
            found.append(
                f"{s}: prices of {source['date']} are {age} days old on {today.isoformat()}, more than {STALE_AFTER_DAYS}: "
                "they may have changed since"
            )
    return found


def _money(value: float, places: int) -> float:
    return round(value, places)


def _count(value: object) -> int | None:
    """A size as a whole number of instances (the policy protocol carries numbers as doubles)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
        return None
    return int(value)


def group_cost(price: Price, sizes: dict[str, int | None], accelerators_per_instance: float = 0) -> dict:
    """A group's cost at its min, desired and max size, per hour and per month (730 hours), the
    idle cost of its minimum, and the price per accelerator-hour. Unknown stays None."""
    hourly_each = price.dollars
    counts = {k: _count(sizes.get(k)) for k in SIZES}
    hourly = {k: (_money(hourly_each * n, 4) if hourly_each is not None and n is not None else None) for k, n in counts.items()}
    monthly = {k: (_money(v * HOURS_PER_MONTH, 2) if v is not None else None) for k, v in hourly.items()}
    per_accelerator = _money(hourly_each / accelerators_per_instance, 4) if hourly_each is not None and accelerators_per_instance else None
    return {
        "purchase": price.purchase,
        "pricePerHour": hourly_each,
        "basis": price.basis,
        "hourly": hourly,
        "monthly": monthly,
        "idleMonthly": monthly["min"],
        "perAcceleratorHour": per_accelerator,
    }


def nodes_cost(price: Price, nodes: int) -> dict:
    """What `nodes` instances cost, per hour and per month (the nodes the workloads need)."""
    if price.dollars is None:
        return {"nodes": nodes, "hourly": None, "monthly": None}
    hourly = _money(price.dollars * nodes, 4)
    return {"nodes": nodes, "hourly": hourly, "monthly": _money(hourly * HOURS_PER_MONTH, 2)}


def add(values: list[float | None]) -> float | None:
    """A sum of known amounts (None when none is known)."""
    known = [v for v in values if v is not None]
    return _money(math.fsum(known), 4) if known else None


# --- budget ceilings (fleet-budget) -------------------------------------------------------------


def over_monthly_max(total_monthly_max: float | None, ceiling: float | None) -> str | None:
    """The fleet's monthly cost at max size above the ceiling."""
    if ceiling is None or total_monthly_max is None or total_monthly_max <= ceiling:
        return None
    return f"the fleet costs ${total_monthly_max:,.2f} a month at max size, over the ceiling of ${ceiling:,.2f}"


def over_idle(idle_monthly: float | None, ceiling: float | None) -> str | None:
    """What the groups' minimum sizes cost a month with no work on them, above the ceiling."""
    if ceiling is None or idle_monthly is None or idle_monthly <= ceiling:
        return None
    return f"the groups' minimum sizes cost ${idle_monthly:,.2f} a month idle, over the ceiling of ${ceiling:,.2f}"


def over_accelerator_hour(per_accelerator_hour: float | None, purchase: str, ceilings: dict[str, float]) -> str | None:
    """A group's price per GPU (or Neuron chip) hour above its purchase option's ceiling."""
    ceiling = ceilings.get(purchase)
    if ceiling is None or per_accelerator_hour is None or per_accelerator_hour <= ceiling:
        return None
    return f"${per_accelerator_hour:,.4f} per accelerator-hour ({purchase}), over the ceiling of ${ceiling:,.4f}"
