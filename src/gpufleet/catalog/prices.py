"""The price snapshot: on-demand and spot prices per cloud, region and instance type, each row with its
source, and each source with its licence (None: none found) and the date of its prices.

`data/prices.json` is generated (`python -m gpufleet.catalog.generate.prices`, whose docstring names
the sources: Karpenter's generated AWS table, a GCP pricing file, skypilot-catalog's rows where no
licensed source prices the row). What the snapshot lacks is absent here, so a caller gets None,
never 0: Capacity Blocks, reserved capacity and Alibaba Cloud have no source in it.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpufleet.catalog.catalog import DATA, Catalog

PRICES_FILE = DATA / "prices.json"
SHIPPED = "the shipped snapshot"
# A snapshot `gpufleet prices update` writes is a few MB (every region of three clouds); a cache file
# past this bound is not read.
MAX_CACHED = 256 * 1024**2
CLOUDS = ("aws", "gcp", "azure")
# Two sources more than this far apart on one row are a disagreement the generator reports (issue 55).
DISAGREEMENT = 0.05


def accelerator_key(name: str, count: int) -> str:
    """The snapshot's key of a GCP attached-accelerator row (SkyPilot's name, how many)."""
    return f"accelerator:{name}:{count}"


@dataclass(frozen=True)
class Quote:
    """One instance type's prices in one region, US dollars per hour, and the sources they come from."""

    on_demand: float
    spot: dict[str, float] = field(default_factory=dict)  # zone (AWS: zone id; a region where the source has no zones) -> spot price
    source: str = ""
    spot_source: str | None = None
    gpus_included: bool = False  # GCP: the machine type priced whole, its GPUs in the price


@dataclass(frozen=True)
class PriceSnapshot:
    date: str | None  # the oldest date of the sources in use (each source's own date, never the day it was read)
    sources: dict[str, dict]  # source id -> repository, path, commit, read, licence, licenceRead, date
    quotes: dict[str, dict[str, dict[str, Quote]]]  # cloud -> region -> type -> quote
    unpriced: dict[str, dict[str, list[str]]]  # cloud -> region -> types the source lists without a price
    origin: str = SHIPPED  # which snapshot this is, as every report says it

    def quote(self, cloud: str, region: str | None, name: str) -> Quote | None:
        if region is None:
            return None
        return self.quotes.get(cloud, {}).get(region, {}).get(name)

    def source_line(self, source_id: str) -> str:
        """A source as a report names it: repository, path, commit, its date and its licence."""
        s = self.sources.get(source_id) or {}
        commit = str(s.get("commit", "?"))[:8]
        dated = s.get("date") or f"undated, read {s.get('read', '?')}"
        licence = s.get("licence") or "no licence found"
        return f"{s.get('repository', '?')} {s.get('path', '')} @{commit}, {dated}, {licence}"

    def cloud_sources(self, cloud: str) -> list[str]:
        """The sources of a cloud's rows, in the order of their ids."""
        return sorted({q.source for types in self.quotes.get(cloud, {}).values() for q in types.values()})

    def oldest(self, source_ids: Iterable[str]) -> tuple[str | None, list[str]]:
        """(the oldest own date among the sources, compared as dates; the sources with none)."""
        dated, undated = [], []
        for source_id in sorted(set(source_ids)):
            day = (self.sources.get(source_id) or {}).get("date")
            if day:
                dated.append(datetime.date.fromisoformat(day))
            else:
                undated.append(source_id)
        return (min(dated).isoformat() if dated else None), undated


def parse(document: dict, origin: str = SHIPPED) -> PriceSnapshot:
    quotes = {
        cloud: {
            region: {
                name: Quote(q["onDemand"], dict(q.get("spot") or {}), q.get("source", ""), q.get("spotSource"), bool(q.get("gpusIncluded")))
                for name, q in types.items()
            }
            for region, types in (document.get(cloud) or {}).items()
        }
        for cloud in CLOUDS
    }
    generated = document["generated"]
    return PriceSnapshot(generated["date"], generated["sources"], quotes, document.get("unpriced") or {}, origin)


def cache_file() -> Path:
    """Where `gpufleet prices update` writes its snapshot: $GPUFLEET_CACHE, else the XDG cache folder
    ($XDG_CACHE_HOME, taken only when absolute, as the XDG Base Directory spec says), else ~/.cache;
    under gpufleet/."""
    explicit = os.environ.get("GPUFLEET_CACHE")
    if explicit:
        return Path(explicit) / "prices.json"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "gpufleet" / "prices.json"


def _shipped_document() -> dict:
    with PRICES_FILE.open(encoding="utf-8") as f:
        return json.load(f)


def load_shipped() -> PriceSnapshot:
    return parse(_shipped_document())


def current_document() -> tuple[dict, str]:
    """(the snapshot document in use, which one it is): the user's cache where `gpufleet prices
    update` wrote one, else the shipped one; a cache that cannot be read falls back to the shipped
    snapshot, and the origin says why."""
    path = cache_file()
    if not path.is_file():
        return _shipped_document(), SHIPPED
    try:
        if path.stat().st_size > MAX_CACHED:
            raise ValueError(f"larger than {MAX_CACHED} bytes")
        document = json.loads(path.read_bytes().decode("utf-8"))
        origin = f"your cache {path} (`gpufleet prices update`, {document['generated'].get('updated', '?')})"
        parse(document, origin)
        return document, origin
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        return _shipped_document(), f"{SHIPPED} (your cache {path} could not be read: {type(e).__name__}: {str(e)[:120]})"


def read_current() -> PriceSnapshot:
    return parse(*current_document())


@functools.cache
def load() -> PriceSnapshot:
    """The snapshot every report prices with, read once per process (read_current)."""
    return read_current()


def coverage(snapshot: PriceSnapshot, cat: Catalog) -> list[dict]:
    """Per cloud and region, how many of the catalog's accelerated types have an on-demand price, of how
    many are offered there, and the sources of those prices with their dates. AWS: of the GPU and
    Neuron types EC2 offers in the region (the catalog's offerings). GCP: of the catalog's GPU machine
    types the GCP source lists in the region (gcp_listing; one another source prices there counts
    too), in every region the source lists, the snapshot prices or the catalog's GKE zones name;
    `listed` says whether the source lists the region at all. Azure: the rows the snapshot has,
    against no list of offered sizes."""
    rows = []
    for region in cat.regions:
        offered = sorted(t.name for t in cat.types.values() if (t.gpu or t.neuron) and region in t.offerings)
        rows.append(_coverage_row(snapshot, "aws", region, offered, len(offered)))
    listed_regions, listed = gcp_listing(snapshot)
    machines = sorted(cat.facts.gke.machine_types)
    zoned = {region for regions in cat.facts.gke.zones.values() for region in regions}
    for region in sorted(set(snapshot.quotes.get("gcp", {})) | listed_regions | zoned):
        offered = [n for n in machines if region in listed.get(n, ()) or snapshot.quote("gcp", region, n) is not None]
        rows.append(_coverage_row(snapshot, "gcp", region, offered, len(offered), region in listed_regions))
    for region, types in sorted(snapshot.quotes.get("azure", {}).items()):
        rows.append(_coverage_row(snapshot, "azure", region, sorted(types), None))
    return rows


def gcp_listing(snapshot: PriceSnapshot) -> tuple[set[str], dict[str, set[str]]]:
    """(the regions, GPU machine type -> its regions) the GCP sources list, as the snapshot recorded them
    (a source's `listing`); a snapshot that recorded none lists the regions it prices."""
    listings = [s["listing"] for s in snapshot.sources.values() if isinstance(s.get("listing"), dict)]
    if not listings:
        return set(snapshot.quotes.get("gcp", {})), {}
    machines: dict[str, set[str]] = {}
    for listing in listings:
        for name, regions in listing["machineTypes"].items():
            machines.setdefault(name, set()).update(regions)
    return {region for listing in listings for region in listing["regions"]}, machines


def unlisted_machine_types(snapshot: PriceSnapshot, cat: Catalog) -> list[str]:
    """The catalog's GPU machine types that no source lists or prices in any region."""
    _, listed = gcp_listing(snapshot)
    priced = {name for types in snapshot.quotes.get("gcp", {}).values() for name in types}
    return sorted(set(cat.facts.gke.machine_types) - set(listed) - priced)


def _coverage_row(
    snapshot: PriceSnapshot, cloud: str, region: str, names: list[str], offered: int | None, listed: bool | None = None
) -> dict:
    quotes = [q for q in (snapshot.quote(cloud, region, n) for n in names) if q is not None]
    sources = sorted({q.source for q in quotes})
    return {
        "cloud": cloud,
        "region": region,
        "priced": len(quotes),
        "offered": offered,
        "of": len(names),
        "listed": listed,  # GCP: whether the source lists the region (None: not asked)
        "unpriced": sorted(n for n in names if snapshot.quote(cloud, region, n) is None) if offered is not None else [],
        "sources": {s: (snapshot.sources.get(s) or {}).get("date") or "undated" for s in sources},
    }
