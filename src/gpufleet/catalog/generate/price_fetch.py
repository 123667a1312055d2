"""The clouds' own public price data, fetched for `gpufleet prices update` (no credentials needed but
for AWS spot): each source read into the rows it refreshes, or refused with one SourceError naming the
URL and the error. Every read is bounded in bytes and time; long downloads report their progress.

- AWS's bulk price list (the Price List Bulk API, docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/
  using-the-aws-price-list-bulk-api-fetching-price-list-files-manually.html): the EC2 region index,
  then each region's offer file in its CSV form (the smaller one), read row by row;
- EC2 DescribeSpotPriceHistory, where AWS credentials exist (boto3's chain);
- the Azure Retail Prices API (learn.microsoft.com/rest/api/cost-management/retail-prices/
  azure-retail-prices): the VM sizes asked for, page by page through NextPageLink.
The GCP file is the generator's own source (price_update reads it with the generator's reader).
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import io
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gpufleet.catalog.generate.price_files import SourceError, read_azure_items, read_json, read_offer_csv, read_spot_history

# One download's bounds: the largest region's offer CSV is several hundred MB (us-east-1), so 2 GiB
# leaves room and still ends a runaway; a socket silent for TIMEOUT seconds, or a download past
# MAX_SECONDS, ends it too.
MAX_BYTES = 2 * 1024**3
MAX_SECONDS = 1800.0
TIMEOUT = 60.0
# The Azure API answers 100 items a page (its documented page size); the sizes gpufleet asks for
# fill a few dozen pages, so 500 bounds a NextPageLink that never ends.
MAX_PAGES = 500

AWS_PRICING = "https://pricing.us-east-1.amazonaws.com"
AWS_REGION_INDEX = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
AZURE_PRICES = "https://prices.azure.com"
AZURE_PATH = "/api/retail/prices"

Progress = Callable[[str, int, "int | None"], None]  # (what is read, bytes so far, bytes in all if known)


def _quiet(label: str, done: int, total: int | None) -> None:
    return None


@dataclass(frozen=True)
class Refreshed:
    """One source's fresh rows: its id and record in the snapshot's `generated.sources`, and per
    region and type the fields it sets on the row (onDemand and source, or spot and spotSource)."""

    source_id: str
    cloud: str
    record: dict
    rows: dict[str, dict[str, dict]]


class _Bounded(io.RawIOBase):
    """A response read within MAX_BYTES and MAX_SECONDS, reporting its progress; a network error
    mid-read is a SourceError naming the URL."""

    def __init__(self, response, url: str, progress: Progress):
        self.response, self.url, self.progress = response, url, progress
        length = response.headers.get("Content-Length")
        self.total = int(length) if length and length.isdigit() else None
        self.done, self.started = 0, time.monotonic()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if time.monotonic() - self.started > MAX_SECONDS:
            raise SourceError(f"{self.url}: still downloading after {MAX_SECONDS:.0f} s, the bound: stopped")
        try:
            n = self.response.readinto(buffer)
        except OSError as e:
            raise SourceError(f"{self.url}: the download broke off after {self.done} bytes ({e})") from None
        self.done += n
        if self.done > MAX_BYTES:
            raise SourceError(f"{self.url}: larger than {MAX_BYTES} bytes, the bound: refused")
        self.progress(self.url, self.done, self.total)
        return n


@contextlib.contextmanager
def opened(url: str, progress: Progress = _quiet) -> Iterator[io.BufferedReader]:
    """The body of `url`, bounded, as a binary file to read from."""
    # Request refuses a URL of no known scheme (ValueError), http.client one with a space or a
    # control character (InvalidURL): each is the URL's error, named, as a refused connection is.
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "gpufleet prices update"})
        response = urllib.request.urlopen(request, timeout=TIMEOUT)  # noqa: S310 (the sources' https URLs, or a test's local server)
    except (OSError, ValueError, http.client.InvalidURL) as e:
        raise SourceError(f"{url}: could not be read ({e})") from None
    with response:
        yield io.BufferedReader(_Bounded(response, url, progress))


def download(url: str, progress: Progress = _quiet) -> bytes:
    with opened(url, progress) as body:
        return body.read()


def offer_record(url: str, version: str, published: str, today: str) -> dict:
    """A region's offer file as a source of the snapshot, dated by its publication date."""
    return {
        "repository": "AWS Price List Bulk API",
        "path": url,
        "commit": version,
        "read": today,
        "licence": None,
        "licenceRead": "the offer file names no licence (its Disclaimer: for informational purposes only)",
        "date": published,
    }


def live_record(name: str, url: str, today: str, licence_read: str) -> dict:
    """A live API's answer as a source: its prices are those in effect the day it was asked, its own date."""
    return {"repository": name, "path": url, "commit": "live", "read": today, "licence": None, "licenceRead": licence_read, "date": today}


# --- AWS ------------------------------------------------------------------------------------------


def aws_offer_urls(base: str = AWS_PRICING, progress: Progress = _quiet) -> dict[str, str]:
    """Region -> the URL of its current offer file in CSV form (the region index names the JSON one;
    the CSV lies beside it under the same name)."""
    url = base + AWS_REGION_INDEX
    index = read_json(download(url, progress), url)
    regions = index.get("regions") if isinstance(index, dict) else None
    if not isinstance(regions, dict):
        raise SourceError(f"{url}: `regions` is missing: not the EC2 region index")
    urls = {}
    for code, entry in regions.items():
        path = entry.get("currentVersionUrl") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not path.startswith("/offers/") or not path.endswith("/index.json"):
            raise SourceError(f"{url}: regions.{code}.currentVersionUrl {str(path)[:80]!r} is not an offer file's path")
        urls[code] = base + path.removesuffix(".json") + ".csv"
    return urls


def fetch_aws_offer(region: str, url: str, today: str, progress: Progress = _quiet) -> Refreshed:
    """A region's Linux, shared-tenancy on-demand prices from its offer CSV, read as it arrives."""
    with opened(url, progress) as body:
        published, prices = read_offer_csv(io.TextIOWrapper(body, encoding="utf-8", newline=""), url)
    if not prices:
        raise SourceError(f"{url}: no Linux on-demand instance price in the file: nothing refreshed")
    source_id = f"aws-price-list-{region}"
    version = url.rstrip("/").split("/")[-3]  # /offers/v1.0/aws/AmazonEC2/<version>/<region>/index.csv
    rows = {region: {name: {"onDemand": price, "source": source_id} for name, price in prices.items()}}
    return Refreshed(source_id, "aws", offer_record(url, version, published, today), rows)


def fetch_aws_spot(client, region: str, types: list[str], today: str) -> Refreshed:
    """The current Linux spot price of `types` in each zone of `region` (DescribeSpotPriceHistory from
    now: each zone's newest entry), with the caller's credentials."""
    from botocore.exceptions import BotoCoreError, ClientError

    label = f"EC2 DescribeSpotPriceHistory {region}"
    found: dict[str, dict[str, float]] = {}
    now = datetime.datetime.now(datetime.timezone.utc)
    try:
        pages = client.get_paginator("describe_spot_price_history").paginate(
            InstanceTypes=types, ProductDescriptions=["Linux/UNIX"], StartTime=now
        )
        for number, page in enumerate(pages, start=1):
            if number > MAX_PAGES:
                raise SourceError(f"{label}: more than {MAX_PAGES} pages, the bound: stopped")
            read_spot_history(page.get("SpotPriceHistory"), f"{label} page {number}", found)
    except (BotoCoreError, ClientError) as e:
        raise SourceError(f"{label}: {e}") from None
    if not found:
        raise SourceError(f"{label}: no spot price of the {len(types)} types asked for: nothing refreshed")
    source_id = f"aws-spot-{region}"
    record = live_record(
        "EC2 DescribeSpotPriceHistory", f"ec2.{region}.amazonaws.com", today, "an API answer to your own credentials; no licence"
    )
    return Refreshed(source_id, "aws", record, {region: {name: {"spot": zones, "spotSource": source_id} for name, zones in found.items()}})


# --- Azure ----------------------------------------------------------------------------------------


def azure_url(sizes: list[str], base: str = AZURE_PRICES) -> str:
    """The first page's URL: the pay-as-you-go meters of the VM sizes (OData $filter, as the API's
    documentation filters by serviceName, priceType and armSkuName)."""
    either = " or ".join(f"armSkuName eq '{s}'" for s in sizes)
    where = f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and ({either})"
    return f"{base}{AZURE_PATH}?{urllib.parse.urlencode({'$filter': where}, quote_via=urllib.parse.quote)}"


def fetch_azure(sizes: list[str], today: str, base: str = AZURE_PRICES, progress: Progress = _quiet) -> Refreshed:
    """Every region's Linux on-demand and spot price of `sizes`, following NextPageLink (only within
    the API's own address) up to MAX_PAGES."""
    url: str | None = azure_url(sizes, base)
    found: dict[str, dict[str, dict]] = {}
    pages = 0
    while url:
        pages += 1
        if pages > MAX_PAGES:
            raise SourceError(f"{base}{AZURE_PATH}: more than {MAX_PAGES} pages, the bound: stopped")
        page = read_json(download(url, progress), url)
        if not isinstance(page, dict):
            raise SourceError(f"{url}: not an Azure Retail Prices page (an object with Items)")
        read_azure_items(page.get("Items"), url, frozenset(sizes), found)
        following = page.get("NextPageLink")
        if following and (not isinstance(following, str) or not following.startswith(base + AZURE_PATH)):
            raise SourceError(f"{url}: NextPageLink {str(following)[:80]!r} leaves {base}{AZURE_PATH}: not followed")
        url = following or None
    source_id = "azure-retail-prices"
    rows = {
        region: {
            size: {"onDemand": row["onDemand"], "source": source_id, "spot": row["spot"], "spotSource": source_id}
            for size, row in types.items()
            if "onDemand" in row
        }
        for region, types in found.items()
    }
    if not any(rows.values()):
        raise SourceError(f"{azure_url(sizes, base)}: no Linux pay-as-you-go price of the {len(sizes)} sizes asked for: nothing refreshed")
    record = live_record("Azure Retail Prices API", base + AZURE_PATH, today, "the API's answer names no licence")
    return Refreshed(source_id, "azure", record, {r: t for r, t in rows.items() if t})
