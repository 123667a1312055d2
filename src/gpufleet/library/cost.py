"""What a group or pool costs, for a program's own exports: the functions the preview, the diff and
the pack price with, over the dated price snapshot in use (the one `gpufleet prices update` wrote to
your cache, else the shipped one; `prices` says which).

    from gpufleet.library.cost import group_cost
    pulumi.export("p5Cost", group_cost("p5.48xlarge", "us-east-1", min_size=0, desired_size=2, max_size=4))

Prices are US dollars per hour (per month: 730 hours). A price the snapshot lacks (a Capacity Block,
reserved capacity, Alibaba Cloud, a type or region it has no row for) is None with the reason under
`basis`, never 0.
"""

from __future__ import annotations

from gpufleet.catalog import prices
from gpufleet.rules import cost as cost_rules


def group_cost(
    instance_type: str,
    region: str,
    min_size: int = 0,
    desired_size: int = 0,
    max_size: int = 0,
    purchase: str = "ON_DEMAND",
    cloud: str = "aws",
    accelerators_per_instance: float = 0,
    zones: tuple[str, ...] = (),
    gcp_gpus: tuple[str, int] | None = None,
) -> dict:
    """The cost of a group of `instance_type` in `region` at its min, desired and max size.

    `purchase`: as the group's API spells it (ON_DEMAND, SPOT, CAPACITY_BLOCK, Regular, Spot,
    spot/on-demand). `gcp_gpus`: a GKE pool's GPUs (their price name, such as A100, and count),
    priced apart from the machine type where the snapshot prices it without them. The result carries
    `pricePerHour`, `hourly` and `monthly` per size, `idleMonthly`, `perAcceleratorHour`, the date of
    the prices used (`pricesDate`, the oldest of their sources') and `prices`, which names them."""
    snapshot = prices.load()
    price = cost_rules.instance_price(snapshot, cloud, region, instance_type, purchase, tuple(zones), gcp_gpus)
    sizes: dict[str, int | None] = {"min": min_size, "desired": desired_size, "max": max_size}
    return {
        **cost_rules.group_cost(price, sizes, accelerators_per_instance),
        "pricesDate": snapshot.oldest(price.sources)[0],
        "prices": cost_rules.prices_stated(snapshot, price.sources),
    }
