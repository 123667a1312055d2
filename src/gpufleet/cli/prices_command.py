"""`gpufleet prices [update]`: which price snapshot is read, the date of each source, and how many of
the catalog's accelerated types have a price per cloud and region; `update` refreshes the snapshot
from the clouds' own public price data into the user's cache (docs/cost.md)."""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import TYPE_CHECKING

from gpufleet.errors import InputError

if TYPE_CHECKING:  # every command builds its parser; only `prices` needs the catalog
    from gpufleet.catalog.catalog import Catalog

EXIT_OK, EXIT_INVALID = 0, 2


def add_parser(sub) -> None:
    prices = sub.add_parser("prices", help="coverage and dates of the price data; update: refresh it online")
    prices.add_argument(
        "action", nargs="?", choices=("update",), help="fetch the clouds' public price data into your cache (AWS, Azure, GCP)"
    )
    prices.add_argument(
        "--region",
        action="append",
        metavar="REGION",
        help="with update: the AWS regions to refresh (repeatable); without it, every region the catalog holds",
    )


def cmd_prices(args: argparse.Namespace) -> int:
    if args.region and args.action != "update":
        raise InputError("--region REGION chooses the AWS regions `gpufleet prices update` fetches: it goes with update")
    from gpufleet.catalog import catalog

    cat = catalog.load()
    return _update(args.region, cat) if args.action == "update" else _show(cat)


def _show(cat: Catalog) -> int:
    from gpufleet.catalog import prices as price_catalog
    from gpufleet.catalog.generate.prices import coverage_table

    snapshot = price_catalog.read_current()
    print(f"Price snapshot: {snapshot.origin}")
    print(f"Prices of {snapshot.date or 'unknown date'} (the oldest source in use)")
    print("Sources in use:")
    for source_id, source in sorted(snapshot.sources.items()):
        if source.get("used", True):
            print(f"  {source_id}: {snapshot.source_line(source_id)}")
    print("\nAccelerated types with an on-demand price, per cloud and region:")
    print(coverage_table(snapshot, cat), end="")
    return EXIT_OK


def _regions(asked: list[str] | None, cat: Catalog) -> list[str]:
    unknown = sorted(set(asked or []) - set(cat.regions))
    if unknown:
        raise InputError(f"--region {unknown[0]!r}: not an AWS region of the catalog (rule: one of {', '.join(cat.regions)})")
    return sorted(set(asked)) if asked else list(cat.regions)


def _spot(regions: list[str], cat: Catalog):
    """(a client per region, the accelerated types offered per region) with AWS credentials, else None."""
    import boto3

    session = boto3.Session()
    if session.get_credentials() is None:
        return None
    types = {r: sorted(t.name for t in cat.types.values() if (t.gpu or t.neuron) and r in t.offerings) for r in regions}
    return (lambda region: session.client("ec2", region_name=region)), types


def _update(asked: list[str] | None, cat: Catalog) -> int:
    from gpufleet.catalog import prices as price_catalog
    from gpufleet.catalog.generate import price_update
    from gpufleet.cli import progress

    regions = _regions(asked, cat)
    document, origin = price_catalog.current_document()
    azure_sizes = sorted(set(cat.facts.aks.vm_sizes) | _azure_rows(document))
    spot = _spot(regions, cat)
    if spot is None:
        print("AWS spot: no AWS credentials found (boto3's chain): spot prices kept from the previous snapshot", file=sys.stderr)
    today = datetime.date.today().isoformat()
    with progress.downloads() as shown:
        planned, failed = price_update.jobs(price_update.ENDPOINTS, regions, azure_sizes, spot, today, shown)
        outcome = price_update.update(document, planned, failed, price_catalog.cache_file(), today)
    for name, error in outcome.failed:
        print(f"error: {name}: {error}", file=sys.stderr)
    if outcome.written is None:
        print(f"error: no source was refreshed: {origin} is kept as it was", file=sys.stderr)
        return EXIT_INVALID
    written = price_catalog.read_current()
    print(f"refreshed: {', '.join(outcome.refreshed)}", file=sys.stderr)
    if outcome.failed:
        print(f"partial: {len(outcome.failed)} sources failed; their rows are those of {origin}", file=sys.stderr)
    print(f"wrote {outcome.written}: prices of {written.date or 'unknown date'}", file=sys.stderr)
    return EXIT_INVALID if outcome.failed else EXIT_OK


def _azure_rows(document: dict) -> set[str]:
    """The VM sizes the snapshot in use prices (the system pools' among them)."""
    return {size for types in (document.get("azure") or {}).values() for size in types}
