"""`gpufleet prices update`: the clouds' public price data over the snapshot in use, written to the
user's cache (catalog.prices.cache_file) whole or not at all.

Each source is one job (the AWS offer file of one region, AWS spot in one region, Azure's API, the GCP
file): a job that fails leaves its rows as the previous snapshot had them and is named with its
error; the others' rows replace theirs. The new snapshot is written to a temporary file beside the
cache and renamed over it at the end, so a reader sees the previous snapshot or the new one, never a
part; when no job succeeds nothing is written at all.
"""

from __future__ import annotations

import copy
import datetime
import functools
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from gpufleet.catalog.generate import price_fetch
from gpufleet.catalog.generate.price_fetch import Progress, Refreshed
from gpufleet.catalog.generate.price_files import SourceError, cyclenerd_listing, gpus_by_exact_name, read_cyclenerd
from gpufleet.catalog.generate.prices import SOURCES, date_used, provenance_record, render, source_content

UPDATE = "gpufleet prices update"
GCP = next(s for s in SOURCES if s.kind == "cyclenerd")


@dataclass(frozen=True)
class Endpoints:
    """Where each source is asked (tests point them at recorded responses)."""

    aws_pricing: str = price_fetch.AWS_PRICING
    azure: str = price_fetch.AZURE_PRICES
    gcp: str = GCP.url


ENDPOINTS = Endpoints()


@dataclass(frozen=True)
class Outcome:
    """What an update did: the sources refreshed, those that failed with their error, and the file
    written (None: nothing written)."""

    refreshed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    written: Path | None = None


Job = tuple[str, Callable[[], Refreshed]]


def fetch_gcp(today: str, url: str, progress: Progress) -> Refreshed:
    """The GCP file the shipped snapshot is generated from, at its current version: every region's
    GPU machine types (priced whole) and system families, checked as the generator checks them."""
    document = source_content(GCP, price_fetch.download(url, progress), url)
    dated, found = read_cyclenerd(document, url)
    gpus_by_exact_name(found, url)
    record = {
        **provenance_record({GCP.id: {"commit": "the default branch's head", "read": today}}, GCP),
        "date": dated.isoformat(),
        "listing": cyclenerd_listing(cast(dict, document), found),
    }
    rows = {
        region: {
            name: {"onDemand": row["onDemand"], "source": GCP.id, "spot": row["spot"], "spotSource": GCP.id, "gpusIncluded": True}
            for name, row in types.items()
        }
        for region, types in found.items()
    }
    return Refreshed(GCP.id, "gcp", record, rows)


def merge(document: dict, refreshed: list[Refreshed], today: str) -> dict:
    """The snapshot with each refreshed source's rows set over the previous ones, re-dated by the
    oldest source still in use. A spot price of a type with no on-demand row is left out (a row is an
    on-demand price first; a spot price alone prices nothing the cost reads)."""
    out = copy.deepcopy(document)
    for fresh in refreshed:
        out["generated"]["sources"][fresh.source_id] = fresh.record
        for region, types in fresh.rows.items():
            rows = out[fresh.cloud].setdefault(region, {})
            for name, fields in types.items():
                if name in rows or "onDemand" in fields:
                    rows[name] = {**rows.get(name, {"spot": {}}), **fields}
    # A cross-check recorded for a row stands while the row is still the kept source's.
    out["generated"]["crossCheck"] = [
        c
        for c in out["generated"].get("crossCheck", [])
        if (out.get(c["cloud"], {}).get(c["region"], {}).get(c["instanceType"]) or {}).get("source") == c["kept"]["source"]
    ]
    out["generated"].update(by=UPDATE, updated=today)
    return date_used(out)


def write(document: dict, path: Path) -> None:
    """Write the snapshot whole: a temporary file beside `path`, renamed over it once complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(render(document))
            f.flush()
            os.fsync(f.fileno())
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def jobs(
    endpoints: Endpoints,
    regions: list[str],
    azure_sizes: list[str],
    spot: tuple[Callable[[str], object], dict[str, list[str]]] | None,
    today: str,
    progress: Progress,
) -> tuple[list[Job], list[tuple[str, str]]]:
    """Every source's job, and the failures found before any job runs (AWS's region index)."""
    found: list[Job] = []
    failed: list[tuple[str, str]] = []
    try:
        offers = price_fetch.aws_offer_urls(endpoints.aws_pricing, progress)
    except SourceError as e:
        failed.append(("aws-price-list (the EC2 region index)", str(e)))
        offers = {}
    for region in regions:
        if offers and region not in offers:
            failed.append(
                (f"aws-price-list-{region}", f"{endpoints.aws_pricing}{price_fetch.AWS_REGION_INDEX} lists no offer file for {region}")
            )
        elif region in offers:
            found.append(
                (f"aws-price-list-{region}", functools.partial(price_fetch.fetch_aws_offer, region, offers[region], today, progress))
            )
    if spot is not None:
        client, types = spot
        found += [(f"aws-spot-{r}", functools.partial(_spot_job, client, r, types[r], today)) for r in regions if types.get(r)]
    found.append(("azure-retail-prices", lambda: price_fetch.fetch_azure(azure_sizes, today, endpoints.azure, progress)))
    found.append((GCP.id, lambda: fetch_gcp(today, endpoints.gcp, progress)))
    return found, failed


def _spot_job(client: Callable[[str], object], region: str, types: list[str], today: str) -> Refreshed:
    return price_fetch.fetch_aws_spot(client(region), region, types, today)


def update(document: dict, planned: list[Job], failed: list[tuple[str, str]], path: Path, today: str | None = None) -> Outcome:
    """Run every job; write the merged snapshot to `path` when at least one succeeded."""
    today = today or datetime.date.today().isoformat()
    refreshed: list[Refreshed] = []
    failed = list(failed)
    for name, job in planned:
        try:
            refreshed.append(job())
        except SourceError as e:
            failed.append((name, str(e)))
    if not refreshed:
        return Outcome([], failed)
    write(merge(document, refreshed, today), path)
    return Outcome([r.source_id for r in refreshed], failed, path)
