"""Regenerate the price snapshot, `data/prices.json`, from its sources.

    python -m gpufleet.catalog.generate.prices --from tests/fixtures/prices/skypilot-catalog
    python -m gpufleet.catalog.generate.prices --live [--aws-offer]
    python -m gpufleet.catalog.generate.prices --from DIR --check

Sources:
- skypilot-org/skypilot-catalog `catalogs/v8/<cloud>/vms.csv` (aws, gcp, azure): on-demand `Price`
  and `SpotPrice` per instance type and region, and per zone where the cloud has one (AWS rows name
  zone ids, the same in every account; GCP zone names). GCP's VM rows price the host only: attached
  GPUs are rows of their own (an empty InstanceType, the GPU's name and count), kept as such.
- AWS's public bulk price list (`--aws-offer`, no credentials): each region's `index.json`; its
  Linux, shared-tenancy, no-licence on-demand price replaces the catalog's for AWS.

`--from DIR` reads `aws-vms.csv`, `gcp-vms.csv`, `azure-vms.csv` and `provenance.json` (each file's
repository, path, commit and the day it was read) from DIR; `--live` downloads the files.

Every row is checked: one of the wrong shape, or with a missing, zero, negative or unreadable price,
stops the run (exit 2) naming the file, the line, the field, the value and the rule. A type the source
lists with no on-demand price at all (a Capacity-Block-only type such as p5e.48xlarge) is refused too,
unless `--allow-unpriced`, which records it under `unpriced` instead: never dropped, never 0.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import math
import sys
import urllib.request
from pathlib import Path
from typing import Literal, cast, overload

from gpufleet.catalog.prices import CLOUDS, PRICES_FILE, accelerator_key
from gpufleet.errors import InputError

REGENERATE = "python -m gpufleet.catalog.generate.prices"
CATALOG_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{cloud}/vms.csv"
OFFER_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.json"
# Downloads are bounded: the v8 AWS file is about 3 MB, a region's offer file several hundred MB.
MAX_DOWNLOAD = 2 * 1024**3

# The columns each cloud's file must have (v8 schema); others are read past.
REQUIRED = {
    "aws": ("InstanceType", "Price", "SpotPrice", "Region", "AvailabilityZone"),
    "gcp": ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone", "Price", "SpotPrice"),
    "azure": ("InstanceType", "Price", "SpotPrice", "Region"),
}

# The AWS offer file's on-demand Linux price: the filters SkyPilot's fetch_aws.py and lyft/awspricing apply.
OFFER_FILTERS = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "licenseModel": "No License required",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}
OFFER_FAMILIES = ("Compute Instance", "Compute Instance (bare metal)")


class SourceError(InputError):
    """A source row or file the generator refuses; the message names where and why."""


@overload
def _price(text: str, where: str, field: str, required: Literal[True]) -> float: ...
@overload
def _price(text: str, where: str, field: str, required: bool) -> float | None: ...
def _price(text: str, where: str, field: str, required: bool) -> float | None:
    if text.strip() == "":
        if required:
            raise SourceError(
                f"{where}: {field} is missing: every row needs an hourly price (use --allow-unpriced to record a type the source lists without one)"
            )
        return None
    try:
        value = float(text)
    except ValueError:
        raise SourceError(f"{where}: {field} {text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise SourceError(
            f"{where}: {field} {text!r} must be a positive number of dollars per hour (0 is the catalog's mark for an unknown price)"
        )
    return value


def _key(cloud: str, row: dict, where: str) -> str:
    name = row["InstanceType"].strip()
    if name:
        return name
    if cloud == "gcp" and row["AcceleratorName"].strip():
        count = row["AcceleratorCount"].strip()
        try:
            number = float(count)
        except ValueError:
            raise SourceError(f"{where}: AcceleratorCount {count!r} is not a number") from None
        if number <= 0 or not number.is_integer():
            raise SourceError(f"{where}: AcceleratorCount {count!r} must be a whole number of attached GPUs")
        return accelerator_key(row["AcceleratorName"].strip(), int(number))
    raise SourceError(f"{where}: InstanceType is empty" + (" and so is AcceleratorName" if cloud == "gcp" else ""))


def read_catalog(cloud: str, text: str, label: str, allow_unpriced: bool = False) -> tuple[dict, dict]:
    """(region -> type -> {onDemand, spot{zone: price}}, region -> [unpriced types]) of one vms.csv."""
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if not header:
        raise SourceError(f"{label}: the file is empty: a {cloud} vms.csv starts with its header")
    missing = [c for c in REQUIRED[cloud] if c not in header]
    if missing:
        raise SourceError(
            f"{label}: line 1: the header lacks {', '.join(missing)}: a {cloud} vms.csv (schema v8) has {', '.join(REQUIRED[cloud])}"
        )
    found: dict[str, dict[str, dict]] = {}
    unpriced: dict[str, set[str]] = {}
    for number, fields in enumerate(rows, start=2):
        where = f"{label}: line {number}"
        if not fields:
            continue
        if len(fields) != len(header):
            raise SourceError(f"{where}: the row has {len(fields)} fields, the header {len(header)}: a row of the wrong shape")
        row = dict(zip(header, fields))
        region = row["Region"].strip()
        if not region:
            raise SourceError(f"{where}: Region is empty")
        name = _key(cloud, row, where)
        zone = row.get("AvailabilityZone", "").strip() or region
        on_demand = _price(row["Price"], where, "Price", not allow_unpriced)
        spot = _price(row["SpotPrice"], where, "SpotPrice", False)
        if on_demand is None:
            unpriced.setdefault(region, set()).add(name)
            continue
        entry = found.setdefault(region, {}).setdefault(name, {"onDemand": on_demand, "spot": {}})
        if entry["onDemand"] != on_demand:
            raise SourceError(
                f"{where}: Price {row['Price']!r} of {name} in {region} differs from {entry['onDemand']} on another of the region's rows: the on-demand price is regional"
            )
        if spot is not None:
            entry["spot"][zone] = spot
    return found, {region: sorted(names) for region, names in unpriced.items()}


def read_offer(document: object, label: str) -> tuple[str, dict[str, float]]:
    """(publication date, type -> Linux shared on-demand price) of one region's offer file."""
    if not isinstance(document, dict) or not isinstance(document.get("products"), dict) or not isinstance(document.get("terms"), dict):
        raise SourceError(f"{label}: not an AWS offer file: it needs `products` and `terms` objects")
    published = document.get("publicationDate")
    if not isinstance(published, str):
        raise SourceError(f"{label}: publicationDate is missing: the offer file dates its prices")
    on_demand = document["terms"].get("OnDemand") or {}
    prices: dict[str, float] = {}
    for sku, product in document["products"].items():
        attributes = (product or {}).get("attributes") or {}
        if product.get("productFamily") not in OFFER_FAMILIES or any(attributes.get(k) != v for k, v in OFFER_FILTERS.items()):
            continue
        # A Compute Instance product always names its type (and build() would skip a None key).
        name = cast(str, attributes.get("instanceType"))
        dimensions = [
            d
            for term in (on_demand.get(sku) or {}).values()
            for d in (term.get("priceDimensions") or {}).values()
            if d.get("unit") == "Hrs"
        ]
        where = f"{label}: product {sku} ({name})"
        if len(dimensions) != 1:
            raise SourceError(f"{where}: {len(dimensions)} hourly on-demand price dimensions: exactly one is expected")
        price = _price(str((dimensions[0].get("pricePerUnit") or {}).get("USD", "")), where, "pricePerUnit.USD", True)
        if name in prices and prices[name] != price:
            raise SourceError(f"{where}: a second on-demand price {price} for {name} (first {prices[name]})")
        prices[name] = price
    return published, prices


def build(
    catalogs: dict[str, tuple[str, str]],
    provenance: dict,
    offers: dict[str, tuple[object, str]] | None = None,
    allow_unpriced: bool = False,
) -> dict:
    """The snapshot document from each cloud's (vms.csv text, label) and their provenance."""
    document: dict = {"generated": {"by": REGENERATE, "sources": {}}, "unpriced": {}}
    reads = []
    for cloud in CLOUDS:
        text, label = catalogs[cloud]
        source = provenance.get(cloud)
        if not isinstance(source, dict) or not all(isinstance(source.get(k), str) for k in ("repository", "path", "commit", "read")):
            raise SourceError(f"provenance.json: {cloud} needs repository, path, commit and read (the day its file was read, YYYY-MM-DD)")
        try:
            datetime.date.fromisoformat(source["read"])
        except ValueError:
            raise SourceError(f"provenance.json: {cloud}.read {source['read']!r} is not a date (YYYY-MM-DD)") from None
        reads.append(source["read"])
        found, unpriced = read_catalog(cloud, text, label, allow_unpriced)
        document[cloud] = found
        document["generated"]["sources"][cloud] = {k: source[k] for k in sorted(source)}
        if unpriced:
            document["unpriced"][cloud] = unpriced
    for region, (offer, label) in (offers or {}).items():
        published, prices = read_offer(offer, label)
        for name, price in prices.items():
            if name in document["aws"].get(region, {}):
                document["aws"][region][name]["onDemand"] = price
        document["generated"]["sources"].setdefault("awsOnDemand", {})[region] = {
            "url": OFFER_URL.format(region=region),
            "publicationDate": published,
        }
    # The snapshot is as old as its oldest source.
    document["generated"]["date"] = min(reads)
    return document


def render(document: dict) -> str:
    """One instance type per line, keys sorted: a regeneration reads as a small diff."""

    def line(value: object) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))

    out = ["{", f'"generated":{line(document["generated"])},', f'"unpriced":{line(document["unpriced"])},']
    for c, cloud in enumerate(CLOUDS):
        out.append(f"{json.dumps(cloud)}:{{")
        regions = sorted(document[cloud].items())
        for r, (region, types) in enumerate(regions):
            out.append(f"{json.dumps(region)}:{{")
            rows = sorted(types.items())
            out += [f"{json.dumps(n)}:{line(q)}{',' if i < len(rows) - 1 else ''}" for i, (n, q) in enumerate(rows)]
            out.append("}" + ("," if r < len(regions) - 1 else ""))
        out.append("}" + ("," if c < len(CLOUDS) - 1 else ""))
    out.append("}")
    return "\n".join(out) + "\n"


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:  # noqa: S310 (https URLs named above)
            data = response.read(MAX_DOWNLOAD + 1)
    except OSError as e:
        raise SourceError(f"{url}: could not be read ({e})") from None
    if len(data) > MAX_DOWNLOAD:
        raise SourceError(f"{url}: larger than {MAX_DOWNLOAD} bytes: refused")
    return data


def _read_dir(folder: Path) -> tuple[dict[str, tuple[str, str]], dict]:
    if not folder.is_dir():
        raise SourceError(f"--from {folder}: not a directory")
    catalogs = {}
    for cloud in CLOUDS:
        path = folder / f"{cloud}-vms.csv"
        if not path.is_file():
            raise SourceError(
                f"--from {folder}: {path.name} is missing: the folder holds aws-vms.csv, gcp-vms.csv, azure-vms.csv and provenance.json"
            )
        catalogs[cloud] = (path.read_text(encoding="utf-8"), str(path))
    try:
        provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SourceError(
            f"--from {folder}: provenance.json is missing: it names each file's repository, path, commit and the day it was read"
        ) from None
    except json.JSONDecodeError as e:
        raise SourceError(f"{folder / 'provenance.json'}: not JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(provenance, dict):
        raise SourceError(f"{folder / 'provenance.json'}: an object keyed by cloud is expected")
    return catalogs, provenance


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.splitlines()[0])
    origin = parser.add_mutually_exclusive_group(required=True)
    origin.add_argument("--from", dest="folder", type=Path, help="a folder of recorded vms.csv files and their provenance.json")
    origin.add_argument("--live", action="store_true", help="download skypilot-catalog's v8 vms.csv files")
    parser.add_argument("--aws-offer", action="store_true", help="with --live: take AWS on-demand prices from AWS's bulk price list")
    parser.add_argument(
        "--allow-unpriced", action="store_true", help="record types listed without an on-demand price as unpriced instead of refusing them"
    )
    parser.add_argument("--out", type=Path, default=PRICES_FILE, help="where to write the snapshot")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the snapshot differs")
    args = parser.parse_args(argv)
    try:
        offers = None
        if args.folder is not None:
            catalogs, provenance = _read_dir(args.folder)
        else:
            today = datetime.date.today().isoformat()
            catalogs = {c: (_download(CATALOG_URL.format(cloud=c)).decode("utf-8"), CATALOG_URL.format(cloud=c)) for c in CLOUDS}
            provenance = {
                c: {"repository": "skypilot-org/skypilot-catalog", "path": f"catalogs/v8/{c}/vms.csv", "commit": "master", "read": today}
                for c in CLOUDS
            }
        document = build(catalogs, provenance, None, args.allow_unpriced)
        if args.aws_offer:
            if not args.live:
                raise SourceError("--aws-offer downloads AWS's price list: it goes with --live")
            offers = {r: (json.loads(_download(OFFER_URL.format(region=r))), OFFER_URL.format(region=r)) for r in sorted(document["aws"])}
            document = build(catalogs, provenance, offers, args.allow_unpriced)
    except SourceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = render(document)
    if args.check:
        if (args.out.read_text(encoding="utf-8") if args.out.exists() else "") != text:
            print(f"{args.out} is stale against its sources: run `{REGENERATE} --from ...`", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: prices of {document['generated']['date']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
