"""How each price source's file is read, row by row, and refused with one message naming the file, the
line or path, the field and the value: skypilot-catalog's v8 `vms.csv`, Karpenter's generated Go
price table, google-cloud-pricing-cost-calculator's `pricing.yml`, AWS's bulk price list offer file.
The snapshot built from them is `prices.py`'s."""

from __future__ import annotations

import csv
import datetime
import functools
import io
import json
import math
import re
from collections.abc import Iterator
from typing import Literal, cast, overload

import yaml

from gpufleet.catalog.bounds import MAX_DEPTH, depth
from gpufleet.catalog.catalog import curated_facts
from gpufleet.catalog.prices import accelerator_key
from gpufleet.errors import InputError

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

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

# Karpenter's generated table (hack/code/prices_gen: one `// generated at <RFC 3339> for <region>` line,
# then a Go map of region -> instance type -> price, a family comment before each family's pairs).
GO_STAMP = re.compile(r"^// generated at (\S+) for (\S+)$", re.MULTILINE)
GO_REGION = re.compile(r'^\t"([a-z0-9-]+)": \{$')
GO_PAIRS = re.compile(r'^\t\t(?:"[a-z0-9.-]+": [0-9]+\.[0-9]+,\s*)+$')
GO_PAIR = re.compile(r'"([a-z0-9.-]+)": ([0-9]+\.[0-9]+)')

# Cyclenerd's machine-type entries: `cost` per region, the machine's shape, and the GPU it carries by
# the name build/gcp.yml gives it (`h100-80gb: 8`), priced from build/mapping.csv's SKU descriptions.
CYCLENERD_SHAPE = frozenset({"cost", "cpu", "ram", "local-ssd", "type"})
# Kept besides the GPU machine types: the E2 family, the system pools' (gke/args.py's system pool
# default e2-standard-4; GKE's own default e2-medium, curated gke.defaultMachineType).
GCP_SYSTEM_FAMILIES = ("e2-",)


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


def day(text: object, where: str) -> datetime.date:
    """A date in the YYYY-MM-DD form the sources use; Python's ISO reader would also take "20261101"."""
    if not isinstance(text, str) or not DATE.match(text):
        raise SourceError(f"{where} {str(text)[:40]!r} is not a date (YYYY-MM-DD)")
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise SourceError(f"{where} {text!r} is not a date (YYYY-MM-DD)") from None


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


def _csv_rows(text: str, label: str) -> Iterator[tuple[int, list[str]]]:
    return _csv_rows_of(csv.reader(io.StringIO(text)), label)


def _csv_rows_of(rows: Iterator[list[str]], label: str) -> Iterator[tuple[int, list[str]]]:
    number = 0  # the last line read: a file that fails on its first line names line 1
    try:
        for number, fields in enumerate(rows, start=1):  # noqa: B007 (the line an error names)
            yield number, fields
    except csv.Error as e:
        raise SourceError(
            f"{label}: line {number + 1}: {e} (the csv reader's limit is {csv.field_size_limit():,} characters a cell)"
        ) from None
    except UnicodeDecodeError as e:
        raise SourceError(f"{label}: line {number + 1}: not UTF-8 ({e.reason})") from None


def read_catalog(cloud: str, text: str, label: str, allow_unpriced: bool = False) -> tuple[dict, dict]:
    """(region -> type -> {onDemand, spot{zone: price}}, region -> [unpriced types]) of one vms.csv."""
    rows = _csv_rows(text, label)
    first = next(rows, None)
    header = first[1] if first else None
    if not header:
        raise SourceError(f"{label}: the file is empty: a {cloud} vms.csv starts with its header")
    missing = [c for c in REQUIRED[cloud] if c not in header]
    if missing:
        raise SourceError(
            f"{label}: line 1: the header lacks {', '.join(missing)}: a {cloud} vms.csv (schema v8) has {', '.join(REQUIRED[cloud])}"
        )
    found: dict[str, dict[str, dict]] = {}
    unpriced: dict[str, set[str]] = {}
    for number, fields in rows:
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


def read_karpenter(text: str, label: str) -> tuple[datetime.date, dict[str, dict[str, float]]]:
    """(the table's `generated at` day, region -> type -> on-demand price) of Karpenter's generated table."""
    stamp = GO_STAMP.search(text)
    if stamp is None:
        raise SourceError(f"{label}: no `// generated at <time> for <region>` line: the table dates its prices by it")
    dated = day(stamp[1][:10], f"{label}: generated at") if len(stamp[1]) > 10 and stamp[1][10] == "T" else None
    if dated is None:
        raise SourceError(f"{label}: generated at {stamp[1][:40]!r} is not a time (YYYY-MM-DDThh:mm:ssZ)")
    found: dict[str, dict[str, float]] = {}
    region: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{label}: line {number}"
        opened = GO_REGION.match(line)
        if opened:
            region = opened[1]
            found[region] = {}
        elif line.strip() in ("},", "}") or line.strip().startswith("//"):
            region = None if line.strip() == "}," else region
        elif region is not None:
            if not GO_PAIRS.match(line):
                raise SourceError(f'{where}: {line.strip()[:80]!r} is not a row of `"type": price,` pairs')
            for name, price in GO_PAIR.findall(line):
                if name in found[region]:
                    raise SourceError(f"{where}: {name} is priced twice in {region}")
                found[region][name] = _price(price, f"{where}: {name}", "price", True)
    if not found or not any(found.values()):
        raise SourceError(f"{label}: no region's prices: the table maps region -> instance type -> price")
    return dated, found


def read_cyclenerd(document: object, label: str) -> tuple[datetime.date, dict[str, dict[str, dict]]]:
    """(the file's own day, region -> machine type -> {onDemand, spot{region: price}, gpus}) of the GPU
    machine types and the system families of Cyclenerd's pricing.yml."""
    about = document.get("about") if isinstance(document, dict) else None
    instances = (document.get("compute") or {}).get("instance") if isinstance(document, dict) else None
    if not isinstance(about, dict) or not isinstance(instances, dict):
        raise SourceError(f"{label}: not a google-cloud-pricing-cost-calculator pricing.yml: it needs `about` and `compute.instance`")
    stamp = about.get("timestamp")
    if isinstance(stamp, bool) or not isinstance(stamp, int) or stamp <= 0:
        raise SourceError(f"{label}: about.timestamp {str(stamp)[:40]!r} is not a Unix time: the file dates its prices by it")
    dated = datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).date()
    found: dict[str, dict[str, dict]] = {}
    for name, entry in instances.items():
        where = f"{label}: compute.instance.{name}"
        if not isinstance(entry, dict):
            raise SourceError(f"{where}: a machine type's entry is a mapping")
        gpus = {k: v for k, v in entry.items() if k not in CYCLENERD_SHAPE}
        if not gpus and not str(name).startswith(GCP_SYSTEM_FAMILIES):
            continue  # a machine type of no GPU outside the system families: not kept, so not judged
        if not isinstance(entry.get("cost"), dict):
            raise SourceError(f"{where}: a kept entry needs a `cost` mapping of region -> prices")
        # A count may be a fraction: a G4 machine's share of one RTX PRO 6000 (g4-standard-12: 0.25).
        if len(gpus) > 1 or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf for v in gpus.values()):
            raise SourceError(f"{where}: {gpus} is not one GPU name and a positive count")
        for region, cost in entry["cost"].items():
            at = f"{where}.cost.{region}"
            if not isinstance(cost, dict):
                raise SourceError(f"{at}: prices per region are a mapping (hour, hour_spot)")
            row: dict = {"onDemand": _price(str(cost.get("hour", "")), at, "hour", True), "spot": {}}
            spot = _price(str(cost.get("hour_spot", "")), at, "hour_spot", False)
            if spot is not None:
                row["spot"][region] = spot
            if gpus:
                row["gpus"] = next(iter(gpus.items()))
            found.setdefault(region, {})[name] = row
    return dated, found


def cyclenerd_listing(document: dict, found: dict[str, dict[str, dict]]) -> dict:
    """What the GCP file lists, which coverage counts against: the regions it prices any machine type
    in, and per GPU machine type the regions it prices it in. Its generator writes a machine type's
    price in a region only where every SKU of it (CPU, memory, GPUs) is sold there (build/pricing.pl
    @fd66b26f L1199, L1265-L1269), so a region it leaves out is one where the source does not offer the type."""
    instances = document["compute"]["instance"]
    regions = {
        region
        for entry in instances.values()
        if isinstance(entry, dict) and isinstance(entry.get("cost"), dict)
        for region in entry["cost"]
    }
    machines: dict[str, list[str]] = {}
    for region, types in sorted(found.items()):
        for name, row in types.items():
            if "gpus" in row:
                machines.setdefault(name, []).append(region)
    return {"regions": sorted(regions), "machineTypes": dict(sorted(machines.items()))}


def gpus_by_exact_name(priced: dict[str, dict[str, dict]], label: str) -> None:
    """Each GPU name the source gives a machine type is one GKE accelerator, by its exact name, with the
    catalog's count: a name that pairs with two accelerators ("h100-80gb" on an A3 Mega) prices a
    machine by another GPU's SKU, which a substring match would let through."""
    machines = curated_facts()["gke"]["machineTypes"]
    paired: dict[str, tuple[str, str]] = {}
    for types in priced.values():
        for name, row in types.items():
            if "gpus" not in row or name not in machines:
                continue
            gpu, count = row["gpus"]
            ours = machines[name]
            where = f"{label}: compute.instance.{name}"
            if count != ours["count"]:
                raise SourceError(f"{where}: {gpu}: {count} GPUs, where the catalog's {name} has {ours['count']} {ours['accelerator']}")
            first = paired.setdefault(gpu, (ours["accelerator"], name))
            if first[0] != ours["accelerator"]:
                raise SourceError(
                    f"{where}: GPU name {gpu!r} is {first[0]} on {first[1]} and {ours['accelerator']} here: a GPU name names one accelerator exactly"
                )


def _offer_price(prices: dict[str, float], name: str, price: float, where: str) -> None:
    if name in prices and prices[name] != price:
        raise SourceError(f"{where}: a second on-demand price {price} for {name} (first {prices[name]})")
    prices[name] = price


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
        _offer_price(prices, name, price, where)
    return published, prices


# The offer file's CSV form names the same attributes by other column names (its header, line 6;
# docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-an-offer.html): one row per SKU and
# price dimension, the term's columns (TermType, Unit, PricePerUnit, Currency) beside the product's.
OFFER_CSV_COLUMNS = {
    "productFamily": "Product Family",
    "instanceType": "Instance Type",
    "operatingSystem": "Operating System",
    "tenancy": "Tenancy",
    "licenseModel": "License Model",
    "preInstalledSw": "Pre Installed S/W",
    "capacitystatus": "CapacityStatus",
}
OFFER_CSV_PREAMBLE = ("FormatVersion", "Disclaimer", "Publication Date", "Version", "OfferCode")


def read_offer_csv(lines: Iterator[str], label: str) -> tuple[str, dict[str, float]]:
    """(publication date, type -> Linux shared on-demand price) of one region's offer file in its CSV
    form, read row by row from `lines` (a region's file is hundreds of MB: never held whole)."""
    rows = _csv_rows_of(csv.reader(lines), label)
    preamble = {}
    for expected in OFFER_CSV_PREAMBLE:
        number, fields = next(rows, (0, []))
        if len(fields) != 2 or fields[0] != expected:
            raise SourceError(
                f"{label}: line {number or 'end'}: {expected!r} expected: an AWS offer CSV opens with {', '.join(OFFER_CSV_PREAMBLE)}"
            )
        preamble[expected] = fields[1]
    published = day(preamble["Publication Date"][:10], f"{label}: Publication Date").isoformat()
    _, header = next(rows, (0, []))
    needed = (*OFFER_CSV_COLUMNS.values(), "TermType", "Unit", "PricePerUnit", "Currency", "SKU")
    missing = [c for c in needed if c not in header]
    if missing:
        raise SourceError(f"{label}: line 6: the header lacks {', '.join(missing)}")
    at = {c: header.index(c) for c in needed}
    filters = {OFFER_CSV_COLUMNS[k]: v for k, v in OFFER_FILTERS.items()}
    prices: dict[str, float] = {}
    for number, fields in rows:
        if len(fields) != len(header):
            raise SourceError(
                f"{label}: line {number}: the row has {len(fields)} fields, the header {len(header)}: a row of the wrong shape"
            )
        if (
            fields[at["TermType"]] != "OnDemand"
            or fields[at["Unit"]] != "Hrs"
            or fields[at["Product Family"]] not in OFFER_FAMILIES
            or any(fields[at[c]] != v for c, v in filters.items())
        ):
            continue
        name = fields[at["Instance Type"]]
        where = f"{label}: line {number}: SKU {fields[at['SKU']]} ({name})"
        if fields[at["Currency"]] != "USD":
            raise SourceError(f"{where}: Currency {fields[at['Currency']]!r}: the snapshot holds US dollars")
        _offer_price(prices, name, _price(fields[at["PricePerUnit"]], where, "PricePerUnit", True), where)
    return published, prices


def read_azure_items(items: object, label: str, sizes: frozenset[str], found: dict[str, dict[str, dict]]) -> None:
    """Add one page of the Azure Retail Prices API's `Items` to `found` (region -> VM size -> {onDemand,
    spot{region: price}}): the Linux consumption meters of `sizes` (a productName ending "Windows" is
    Windows's; a skuName ending "Spot" is the spot meter, "Low Priority" the retired one; learn.microsoft.com/
    rest/api/cost-management/retail-prices/azure-retail-prices)."""
    if not isinstance(items, list):
        raise SourceError(f"{label}: Items is not a list: not an Azure Retail Prices page")
    for i, item in enumerate(items):
        where = f"{label}: Items[{i}]"
        if not isinstance(item, dict):
            raise SourceError(f"{where}: an item is an object")
        size, region, sku = item.get("armSkuName"), item.get("armRegionName"), str(item.get("skuName", ""))
        if size not in sizes or item.get("type") != "Consumption" or str(item.get("productName", "")).endswith("Windows"):
            continue
        if sku.endswith("Low Priority") or item.get("unitOfMeasure") != "1 Hour" or not isinstance(region, str) or not region:
            continue
        if item.get("currencyCode") != "USD":
            raise SourceError(f"{where}: currencyCode {item.get('currencyCode')!r}: the snapshot holds US dollars")
        price = _price(str(item.get("retailPrice", "")), f"{where} ({size} {region} {sku})", "retailPrice", True)
        row = found.setdefault(region, {}).setdefault(size, {"spot": {}})
        kind, first = ("spot", row["spot"].get(region)) if sku.endswith("Spot") else ("onDemand", row.get("onDemand"))
        if first is not None and first != price:
            raise SourceError(f"{where}: a second {kind} price {price} for {size} in {region} (first {first})")
        if kind == "spot":
            row["spot"][region] = price
        else:
            row["onDemand"] = price


def read_spot_history(entries: object, label: str, found: dict[str, dict[str, float]]) -> None:
    """Add one page of EC2 DescribeSpotPriceHistory's SpotPriceHistory to `found` (type -> zone id ->
    price: a zone id names one zone in every account, a zone name does not)."""
    if not isinstance(entries, list):
        raise SourceError(f"{label}: SpotPriceHistory is not a list")
    for i, entry in enumerate(entries):
        where = f"{label}: SpotPriceHistory[{i}]"
        zone = entry.get("AvailabilityZoneId") if isinstance(entry, dict) else None
        name = entry.get("InstanceType") if isinstance(entry, dict) else None
        if not isinstance(zone, str) or not isinstance(name, str):
            raise SourceError(f"{where}: an entry names its InstanceType and AvailabilityZoneId")
        price = _price(str(entry.get("SpotPrice", "")), f"{where} ({name} {zone})", "SpotPrice", True)
        # Entries come newest first (StartTime is now): a zone's first entry is its current price.
        found.setdefault(name, {}).setdefault(zone, price)


def utf8(data: bytes, label: str) -> str:
    """A source file's text; the sources are UTF-8 and anything else is refused at its first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SourceError(f"{label}: line {line}: not UTF-8: byte 0x{data[e.start]:02x} at offset {e.start} ({e.reason})") from None


def read_json(data: bytes, label: str) -> object:
    """A JSON source file, bounded in depth (MAX_DEPTH) so a hostile file ends in one message."""
    text = utf8(data, label)
    try:
        document = json.loads(text)
    except RecursionError:
        raise SourceError(f"{label}: JSON nested more than {MAX_DEPTH} deep, the bound") from None
    except json.JSONDecodeError as e:
        raise SourceError(f"{label}: not JSON ({e.msg}, line {e.lineno})") from None
    if depth(document) > MAX_DEPTH:
        raise SourceError(f"{label}: JSON nested more than {MAX_DEPTH} deep, the bound")
    return document


def parse_yaml(text: str, label: str) -> object:
    try:
        return _parsed(text)
    except (yaml.YAMLError, RecursionError) as e:
        raise SourceError(f"{label}: not YAML ({str(e).splitlines()[0][:120]})") from None


@functools.lru_cache(maxsize=2)  # a run (and a test session) reads the same 4 MB file more than once: parsed once
def _parsed(text: str) -> object:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (a safe loader)
