"""The price snapshot: on-demand and spot prices per cloud, region and instance type, dated and sourced.

`data/prices.json` is generated (`python -m gpufleet.catalog.generate.prices`) from
skypilot-org/skypilot-catalog's `vms.csv` files, and for AWS on-demand optionally from AWS's public
bulk price list. What the snapshot lacks is absent here, so a caller gets None, never 0: Capacity
Blocks, reserved capacity and Alibaba Cloud have no source in it.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

from gpufleet.catalog.catalog import DATA

PRICES_FILE = DATA / "prices.json"
CLOUDS = ("aws", "gcp", "azure")


def accelerator_key(name: str, count: int) -> str:
    """The snapshot's key of a GCP attached-accelerator row (SkyPilot's name, how many)."""
    return f"accelerator:{name}:{count}"


@dataclass(frozen=True)
class Quote:
    """One instance type's prices in one region, US dollars per hour."""

    on_demand: float
    spot: dict[str, float] = field(default_factory=dict)  # zone (AWS: zone id) -> spot price


@dataclass(frozen=True)
class PriceSnapshot:
    date: str  # the day the snapshot's rows were read from their sources
    sources: dict[str, dict]  # cloud -> where its rows came from
    quotes: dict[str, dict[str, dict[str, Quote]]]  # cloud -> region -> type -> quote
    unpriced: dict[str, dict[str, list[str]]]  # cloud -> region -> types the source lists without a price

    def quote(self, cloud: str, region: str | None, name: str) -> Quote | None:
        if region is None:
            return None
        return self.quotes.get(cloud, {}).get(region, {}).get(name)

    def source_line(self, cloud: str) -> str:
        s = self.sources.get(cloud) or {}
        return f"{s.get('repository', '?')} {s.get('path', '')} @{str(s.get('commit', '?'))[:8]}".strip()


def parse(document: dict) -> PriceSnapshot:
    quotes = {
        cloud: {
            region: {name: Quote(q["onDemand"], dict(q.get("spot") or {})) for name, q in types.items()}
            for region, types in (document.get(cloud) or {}).items()
        }
        for cloud in CLOUDS
    }
    generated = document["generated"]
    return PriceSnapshot(generated["date"], generated["sources"], quotes, document.get("unpriced") or {})


@functools.cache
def load() -> PriceSnapshot:
    with PRICES_FILE.open(encoding="utf-8") as f:
        return parse(json.load(f))
