"""`gpufleet prices update`'s sources, read from recorded responses (tests/fixtures/prices/recorded/),
and the snapshot it writes: whole or not at all, the previous one kept where a source fails."""

from __future__ import annotations

import datetime
import io
import json
import re
from pathlib import Path

import boto3
import pytest
import yaml
from botocore.stub import Stubber

from gpufleet.catalog import prices as price_catalog
from gpufleet.catalog.generate import price_fetch, price_files, price_update
from gpufleet.catalog.generate.price_files import SourceError, read_offer_csv
from gpufleet.catalog.generate.price_update import Refreshed
from tests.prices_server import RECORDED, PriceServer

TODAY = "2026-11-29"


def _shipped() -> dict:
    return price_catalog.current_document()[0]


def test_region_index_names_each_regions_offer_csv():
    with PriceServer() as server:
        urls = price_fetch.aws_offer_urls(server.base)
    assert urls["us-east-1"] == f"{server.base}/offers/v1.0/aws/AmazonEC2/20250912225308/us-east-1/index.csv"


def test_offer_csv_keeps_linux_shared_on_demand_hours_only():
    with PriceServer() as server:
        url = price_fetch.aws_offer_urls(server.base)["us-east-1"]
        fresh = price_fetch.fetch_aws_offer("us-east-1", url, TODAY)
    # The Windows, Dedicated, Reserved and unused-reservation rows (9.9999) are read past.
    assert fresh.rows == {
        "us-east-1": {
            "g5.xlarge": {"onDemand": 1.006, "source": "aws-price-list-us-east-1"},
            "p5.48xlarge": {"onDemand": 55.04, "source": "aws-price-list-us-east-1"},
        }
    }
    assert (fresh.record["date"], fresh.record["commit"], fresh.record["read"]) == ("2025-09-12", "20250912225308", TODAY)


def test_offer_csv_of_another_shape_is_refused():
    text = (RECORDED / "aws" / "us-east-1-index.csv").read_text().splitlines(keepends=True)
    with pytest.raises(SourceError, match=r"line 3: 'Publication Date' expected"):
        read_offer_csv(iter(text[:2] + text[3:]), "recorded")
    broken = text[:7] + [text[7].replace(',"USD",', ',"USD","extra",', 1)]
    with pytest.raises(SourceError, match="line 8: the row has 92 fields, the header 91"):
        read_offer_csv(iter(broken), "recorded")
    second = text[:7] + [text[6].replace('"1.0060000000"', '"1.1000000000"').replace("RECORDEDSKU00001", "RECORDEDSKU00009")]
    with pytest.raises(
        SourceError, match=r"line 8: SKU RECORDEDSKU00009 \(g5.xlarge\): a second on-demand price 1.1 for g5.xlarge \(first 1.006\)"
    ):
        read_offer_csv(iter(second), "recorded")


def test_a_download_past_its_bound_is_stopped(monkeypatch):
    monkeypatch.setattr(price_fetch, "MAX_BYTES", 1000)
    with PriceServer() as server, pytest.raises(SourceError, match="larger than 1000 bytes, the bound"):
        price_fetch.fetch_aws_offer("us-east-1", f"{server.base}/offers/v1.0/aws/AmazonEC2/20250912225308/us-east-1/index.csv", TODAY)


def test_a_download_past_its_time_is_stopped(monkeypatch):
    monkeypatch.setattr(price_fetch, "MAX_SECONDS", -1.0)
    with PriceServer() as server, pytest.raises(SourceError, match="still downloading after -1 s"):
        price_fetch.download(f"{server.base}/gcp/pricing.yml")


def test_progress_is_reported_as_bytes_arrive():
    seen = []
    with PriceServer() as server:
        data = price_fetch.download(f"{server.base}/gcp/pricing.yml", lambda label, done, total: seen.append((done, total)))
    assert seen[-1] == (len(data), len(data))


def test_azure_pages_are_followed_and_only_linux_pay_as_you_go_kept():
    sizes = ["Standard_D4s_v5", "Standard_NC16as_T4_v3", "Standard_NC24ads_A100_v4"]
    with PriceServer() as server:
        fresh = price_fetch.fetch_azure(sizes, TODAY, server.base)
    assert len(server.requests) == 2 and "%24skip=100" not in server.requests[0] and "$skip=100" in server.requests[1]
    assert "armSkuName%20eq%20%27Standard_D4s_v5%27" in server.requests[0]
    a100 = fresh.rows["eastus"]["Standard_NC24ads_A100_v4"]
    # The Windows and Low Priority meters of the A100 size (9.9999) are read past.
    assert (a100["onDemand"], a100["spot"]) == (3.673, {"eastus": 0.444433})
    assert fresh.rows["eastus"]["Standard_D4s_v5"]["onDemand"] == 0.192
    assert fresh.record["date"] == TODAY  # a live API's prices are those in effect the day it was asked


def test_azure_next_page_elsewhere_is_not_followed(monkeypatch):
    with PriceServer() as server:
        monkeypatch.setattr(price_fetch, "AZURE_PATH", "/api/retail/prices")
        with pytest.raises(SourceError, match="NextPageLink .* leaves"):
            price_fetch.fetch_azure(["Standard_D4s_v5"], TODAY, server.base.replace("127.0.0.1", "localhost"))


def _spot_client(entries: list[dict]):
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="recorded", aws_secret_access_key="recorded")
    stubber = Stubber(client)
    for e in entries:
        e["Timestamp"] = datetime.datetime.fromisoformat(e["Timestamp"].replace("Z", "+00:00"))
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": entries, "NextToken": ""})
    stubber.activate()
    return client


def test_spot_prices_per_zone_id_newest_first():
    recorded = json.loads((RECORDED / "aws" / "spot-us-east-1.json").read_text())["SpotPriceHistory"]
    fresh = price_fetch.fetch_aws_spot(_spot_client(recorded), "us-east-1", ["g5.xlarge"], TODAY)
    assert fresh.rows == {"us-east-1": {"g5.xlarge": {"spot": {"use1-az1": 0.507, "use1-az2": 0.4591}, "spotSource": "aws-spot-us-east-1"}}}


def test_spot_error_names_the_region():
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="recorded", aws_secret_access_key="recorded")
    stubber = Stubber(client)
    stubber.add_client_error("describe_spot_price_history", "UnauthorizedOperation", "not authorized")
    stubber.activate()
    with pytest.raises(SourceError, match="DescribeSpotPriceHistory us-east-1: .*UnauthorizedOperation"):
        price_fetch.fetch_aws_spot(client, "us-east-1", ["g5.xlarge"], TODAY)


def test_gcp_file_is_read_as_the_generator_reads_it():
    with PriceServer() as server:
        fresh = price_update.fetch_gcp(TODAY, f"{server.base}/gcp/pricing.yml", price_fetch._quiet)
    a3 = fresh.rows["us-central1"]["a3-highgpu-8g"]
    assert (a3["onDemand"], a3["gpusIncluded"], fresh.record["date"]) == (88.4899999025753, True, "2026-07-30")
    assert fresh.record["licence"] == "Apache-2.0"
    # what the file lists, as the generator records it: coverage counts against it
    assert fresh.record["listing"] == {"regions": ["us-central1"], "machineTypes": {"a3-highgpu-8g": ["us-central1"]}}


def test_merge_sets_fresh_rows_keeps_the_rest_and_redates():
    shipped = _shipped()
    fresh = Refreshed(
        "aws-spot-us-east-1",
        "aws",
        price_fetch.live_record("EC2 DescribeSpotPriceHistory", "x", TODAY, "no licence"),
        {"us-east-1": {"g5.xlarge": {"spot": {"use1-az1": 0.5}, "spotSource": "aws-spot-us-east-1"}, "no.such": {"spot": {"a": 1.0}}}},
    )
    merged = price_update.merge(shipped, [fresh], TODAY)
    row = merged["aws"]["us-east-1"]["g5.xlarge"]
    assert (row["onDemand"], row["source"], row["spot"]) == (1.006, "karpenter-provider-aws", {"use1-az1": 0.5})
    assert "no.such" not in merged["aws"]["us-east-1"]  # a spot price alone makes no row
    assert merged["generated"]["sources"]["aws-spot-us-east-1"]["used"] is True
    assert (merged["generated"]["by"], merged["generated"]["updated"], merged["generated"]["date"]) == (
        "gpufleet prices update",
        TODAY,
        "2026-07-20",
    )
    assert merged["gcp"] == shipped["gcp"]


def test_a_refreshed_row_drops_its_old_cross_check():
    shipped = _shipped()
    assert [c["instanceType"] for c in shipped["generated"]["crossCheck"]] == ["a3-highgpu-8g"]
    fresh = Refreshed("x", "gcp", {"date": TODAY}, {"us-central1": {"a3-highgpu-8g": {"onDemand": 90.0, "source": "x"}}})
    assert price_update.merge(shipped, [fresh], TODAY)["generated"]["crossCheck"] == []


def _update(server: PriceServer, cache, regions=("us-east-1",)):
    planned, failed = price_update.jobs(server.endpoints, list(regions), ["Standard_D4s_v5"], None, TODAY, price_fetch._quiet)
    return price_update.update(_shipped(), planned, failed, cache, TODAY)


def test_partial_update_writes_what_was_fetched_and_names_what_failed(tmp_path):
    cache = tmp_path / "gpufleet" / "prices.json"
    with PriceServer(failing={"/api/retail/prices": 503}) as server:
        outcome = _update(server, cache, ("us-east-1", "us-west-2"))
    assert outcome.refreshed == ["aws-price-list-us-east-1", "google-cloud-pricing-cost-calculator"]
    assert [name for name, _ in outcome.failed] == ["aws-price-list-us-west-2", "azure-retail-prices"]
    assert "HTTP Error 404" in outcome.failed[0][1] and "HTTP Error 503" in outcome.failed[1][1]
    written = price_catalog.parse(json.loads(cache.read_text()))
    assert written.quote("aws", "us-east-1", "g5.xlarge").source == "aws-price-list-us-east-1"
    assert written.quote("azure", "eastus", "Standard_D4s_v5").source == "skypilot-catalog-azure"  # the failed source's row kept
    assert [p.name for p in cache.parent.iterdir()] == ["prices.json"]  # no partial file left


def test_a_failed_update_keeps_the_previous_snapshot_byte_for_byte(tmp_path):
    cache = tmp_path / "prices.json"
    with PriceServer() as server:
        _update(server, cache)
    before = cache.read_bytes()
    with PriceServer(failing={"*": 500}) as server:
        outcome = _update(server, cache)
    assert outcome.written is None and outcome.refreshed == []
    assert [name for name, _ in outcome.failed] == [
        "aws-price-list (the EC2 region index)",
        "azure-retail-prices",
        "google-cloud-pricing-cost-calculator",
    ]
    assert cache.read_bytes() == before


def test_a_write_that_fails_leaves_the_previous_file(tmp_path, monkeypatch):
    cache = tmp_path / "prices.json"
    cache.write_text("previous")

    def broken(document):
        raise OSError("disk full")

    monkeypatch.setattr(price_update, "render", broken)
    with pytest.raises(OSError):
        price_update.write(_shipped(), cache)
    assert cache.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["prices.json"]


def test_the_cache_is_read_first_and_said(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path))
    assert price_catalog.read_current().origin == "the shipped snapshot"
    with PriceServer() as server:
        _update(server, tmp_path / "prices.json")
    snapshot = price_catalog.read_current()
    assert snapshot.origin == f"your cache {tmp_path / 'prices.json'} (`gpufleet prices update`, {TODAY})"
    assert snapshot.quote("aws", "us-east-1", "p5.48xlarge").source == "aws-price-list-us-east-1"


def test_an_unreadable_cache_falls_back_to_the_shipped_snapshot_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path))
    (tmp_path / "prices.json").write_text('{"generated": ')
    snapshot = price_catalog.read_current()
    assert snapshot.origin.startswith(f"the shipped snapshot (your cache {tmp_path / 'prices.json'} could not be read: JSONDecodeError")
    assert snapshot.quote("aws", "us-east-1", "g5.xlarge").source == "karpenter-provider-aws"


def test_cache_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUFLEET_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert price_catalog.cache_file() == tmp_path / "gpufleet" / "prices.json"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG spec: a relative path is ignored
    monkeypatch.setenv("HOME", str(tmp_path))
    assert price_catalog.cache_file() == tmp_path / ".cache" / "gpufleet" / "prices.json"


@pytest.mark.parametrize(
    "text, error",
    [
        ('{"generated": {"sources": {}}}', "KeyError"),  # no date
        ("[]", "TypeError"),
        ('{"generated": []}', "AttributeError"),
        ("[" * 100_000 + "]" * 100_000, "RecursionError"),
        ('{"generated": ', "JSONDecodeError"),
    ],
)
def test_each_way_a_cache_cannot_be_read_falls_back_and_is_named(tmp_path, monkeypatch, text, error):
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path))
    (tmp_path / "prices.json").write_text(text)
    snapshot = price_catalog.read_current()
    assert snapshot.origin.startswith(f"the shipped snapshot (your cache {tmp_path / 'prices.json'} could not be read: {error}: ")
    assert snapshot.quote("aws", "us-east-1", "g5.xlarge").source == "karpenter-provider-aws"


def test_a_cache_is_read_up_to_its_bound_and_not_past_it(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path))
    with PriceServer() as server:
        _update(server, tmp_path / "prices.json")
    size = (tmp_path / "prices.json").stat().st_size
    monkeypatch.setattr(price_catalog, "MAX_CACHED", size)
    assert price_catalog.read_current().origin.startswith("your cache ")
    monkeypatch.setattr(price_catalog, "MAX_CACHED", size - 1)
    assert f"could not be read: ValueError: larger than {size - 1} bytes" in price_catalog.read_current().origin


def test_a_row_without_spot_prices_and_a_snapshot_without_unpriced_types_read_as_empty():
    snapshot = price_catalog.parse({"generated": {"date": None, "sources": {}}, "aws": {"us-east-1": {"g5.xlarge": {"onDemand": 1.006}}}})
    assert snapshot.quote("aws", "us-east-1", "g5.xlarge") == price_catalog.Quote(1.006) and snapshot.unpriced == {}


def test_quotes_and_snapshots_are_frozen_and_the_snapshot_is_read_once():
    snapshot = price_catalog.load()
    assert price_catalog.load() is snapshot
    with pytest.raises(AttributeError):
        snapshot.date = "2026-01-01"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        snapshot.quote("aws", "us-east-1", "g5.xlarge").on_demand = 0.0  # type: ignore[misc]


def test_a_region_the_index_does_not_list_fails_by_name_and_spot_is_a_job_per_region():
    recorded = json.loads((RECORDED / "aws" / "spot-us-east-1.json").read_text())["SpotPriceHistory"]
    client = _spot_client(recorded)
    spot = (lambda region: client, {"us-east-1": ["g5.xlarge"], "eu-west-1": []})
    with PriceServer() as server:
        planned, failed = price_update.jobs(
            server.endpoints, ["us-east-1", "eu-west-1"], ["Standard_D4s_v5"], spot, TODAY, price_fetch._quiet
        )
    assert failed == [
        (
            "aws-price-list-eu-west-1",
            f"{server.base}/offers/v1.0/aws/AmazonEC2/current/region_index.json lists no offer file for eu-west-1",
        )
    ]
    names = [name for name, _ in planned]
    assert names == ["aws-price-list-us-east-1", "aws-spot-us-east-1", "azure-retail-prices", "google-cloud-pricing-cost-calculator"]
    fresh = dict(planned)["aws-spot-us-east-1"]()
    assert fresh.rows["us-east-1"]["g5.xlarge"]["spot"] == {"use1-az1": 0.507, "use1-az2": 0.4591}


def test_an_update_without_a_day_is_dated_today_and_written_under_new_folders(tmp_path):
    cache = tmp_path / "a" / "b" / "prices.json"
    fresh = Refreshed("x", "gcp", {"date": TODAY}, {"us-central1": {"a3-highgpu-8g": {"onDemand": 90.0, "source": "x"}}})
    outcome = price_update.update(_shipped(), [("x", lambda: fresh)], [], cache)
    assert outcome == price_update.Outcome(["x"], [], cache)
    assert json.loads(cache.read_text())["generated"]["updated"] == datetime.date.today().isoformat()
    with pytest.raises(AttributeError):
        outcome.written = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        price_update.ENDPOINTS.gcp = "elsewhere"  # type: ignore[misc]


def test_a_rename_that_fails_after_the_partial_file_is_gone_says_its_own_error(tmp_path, monkeypatch):
    def vanished(source, target):
        Path(source).unlink()
        raise OSError("the disk went away")

    monkeypatch.setattr(price_update.os, "replace", vanished)
    with pytest.raises(OSError, match="the disk went away"):
        price_update.write(_shipped(), tmp_path / "prices.json")
    assert list(tmp_path.iterdir()) == []


def test_a_cross_check_of_a_row_no_longer_there_is_dropped():
    shipped = _shipped()
    del shipped["gcp"]["us-central1"]["a3-highgpu-8g"]
    assert price_update.merge(shipped, [], TODAY)["generated"]["crossCheck"] == []


def test_the_download_bounds_are_those_docs_cost_md_states():
    said = "a download past 2 GiB, silent for 60 s, or still running after 30 minutes is"
    assert said in " ".join((Path(__file__).resolve().parents[2] / "docs" / "cost.md").read_text().split())
    assert (price_fetch.MAX_BYTES, price_fetch.TIMEOUT, price_fetch.MAX_SECONDS) == (2 * 1024**3, 60.0, 30 * 60.0)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/closed", "ftp:/no-host"])
def test_an_address_that_cannot_be_opened_is_named(url):
    with pytest.raises(SourceError, match=f"^{re.escape(url)}: could not be read"):
        price_fetch.download(url)


@pytest.mark.parametrize(
    "path",
    ["/elsewhere/v1.0/aws/AmazonEC2/20250912225308/us-east-1/index.json", "/offers/v1.0/aws/AmazonEC2/20250912225308/us-east-1/index.csv"],
)
def test_a_region_index_path_that_is_not_an_offer_file_is_refused(monkeypatch, path):
    path = path.replace("/us-east-1/", "/" + "x" * 40 + "/")  # past the 80 characters the message quotes
    monkeypatch.setattr(
        price_fetch, "download", lambda url, progress=None: json.dumps({"regions": {"r": {"currentVersionUrl": path}}}).encode()
    )
    with pytest.raises(SourceError) as raised:
        price_fetch.aws_offer_urls("https://pricing")
    assert str(raised.value) == (
        f"https://pricing{price_fetch.AWS_REGION_INDEX}: regions.r.currentVersionUrl {path[:80]!r} is not an offer file's path"
    )


def test_spot_asks_for_linux_prices_from_now_and_stops_past_its_page_bound(monkeypatch):
    from botocore.stub import ANY

    recorded = json.loads((RECORDED / "aws" / "spot-us-east-1.json").read_text())["SpotPriceHistory"]
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="recorded", aws_secret_access_key="recorded")
    stubber = Stubber(client)
    for e in recorded:
        e["Timestamp"] = datetime.datetime.fromisoformat(e["Timestamp"].replace("Z", "+00:00"))
    asked = {"InstanceTypes": ["g5.xlarge"], "ProductDescriptions": ["Linux/UNIX"], "StartTime": ANY}
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": recorded[:1], "NextToken": "more"}, asked)
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": recorded[1:], "NextToken": ""}, {**asked, "NextToken": "more"})
    stubber.activate()
    monkeypatch.setattr(price_fetch, "MAX_PAGES", 2)
    assert price_fetch.fetch_aws_spot(client, "us-east-1", ["g5.xlarge"], TODAY).rows["us-east-1"]["g5.xlarge"]["spot"]
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": recorded[:1], "NextToken": "more"}, asked)
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": recorded[1:], "NextToken": ""}, {**asked, "NextToken": "more"})
    monkeypatch.setattr(price_fetch, "MAX_PAGES", 1)
    with pytest.raises(SourceError, match="EC2 DescribeSpotPriceHistory us-east-1: more than 1 pages, the bound: stopped"):
        price_fetch.fetch_aws_spot(client, "us-east-1", ["g5.xlarge"], TODAY)


def test_spot_without_credentials_is_named():
    from botocore.exceptions import NoCredentialsError

    class NoCredentials:
        def get_paginator(self, name):
            raise NoCredentialsError()

    with pytest.raises(SourceError, match="EC2 DescribeSpotPriceHistory us-east-1: Unable to locate credentials"):
        price_fetch.fetch_aws_spot(NoCredentials(), "us-east-1", ["g5.xlarge"], TODAY)


def test_azure_stops_past_its_page_bound(monkeypatch):
    sizes = ["Standard_D4s_v5", "Standard_NC16as_T4_v3", "Standard_NC24ads_A100_v4"]
    monkeypatch.setattr(price_fetch, "MAX_PAGES", 2)
    with PriceServer() as server:
        assert price_fetch.fetch_azure(sizes, TODAY, server.base).rows["eastus"]
        monkeypatch.setattr(price_fetch, "MAX_PAGES", 1)
        with pytest.raises(SourceError, match="more than 1 pages, the bound: stopped"):
            price_fetch.fetch_azure(sizes, TODAY, server.base)


def test_fresh_rows_are_frozen():
    fresh = Refreshed("x", "gcp", {}, {})
    with pytest.raises(AttributeError):
        fresh.cloud = "aws"  # type: ignore[misc]


# --- the update's readers: each refusal and each row passed over (price_files.py) ------------------


def _offer_lines(edit_row=None, *, preamble: int = 5) -> list[str]:
    """The recorded offer CSV: its preamble (cut to `preamble` lines), header, and its first row edited."""
    lines = (RECORDED / "aws" / "us-east-1-index.csv").read_text().splitlines(keepends=True)
    row = lines[6] if edit_row is None else edit_row(lines[6])
    return lines[:preamble] + lines[5:6] + [row]


@pytest.mark.parametrize(
    "lines, said",
    [
        (_offer_lines(preamble=4), "o: line 5: 'OfferCode' expected"),
        ([], "o: line end: 'FormatVersion' expected: an AWS offer CSV opens with FormatVersion, Disclaimer"),
        (['"FormatVersion","v1.0","x"\n'], "o: line 1: 'FormatVersion' expected"),
        (_offer_lines()[:5], "o: line 6: the header lacks Product Family"),
        (
            _offer_lines(lambda r: r.replace('"USD"', '"EUR"', 1)),
            "o: line 7: SKU RECORDEDSKU00001 (g5.xlarge): Currency 'EUR': the snapshot holds US dollars",
        ),
        (
            _offer_lines(lambda r: r.replace('"1.0060000000"', '"0"', 1)),
            "o: line 7: SKU RECORDEDSKU00001 (g5.xlarge): PricePerUnit '0' must be",
        ),
    ],
)
def test_an_offer_csv_of_another_shape_is_refused(lines, said):
    with pytest.raises(SourceError, match=re.escape(said)):
        read_offer_csv(iter(lines), "o")


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r.replace('"OnDemand"', '"Reserved"', 1),
        lambda r: r.replace('"Hrs"', '"Quantity"', 1),
        lambda r: r.replace('"Compute Instance"', '"Dedicated Host"', 1),
        lambda r: r.replace('"USD"', '"EUR"', 1).replace('"OnDemand"', '"Reserved"', 1),  # a row passed over is not judged
    ],
)
def test_an_offer_csv_row_of_another_term_unit_or_family_is_passed_over(edit):
    assert read_offer_csv(iter(_offer_lines(edit)), "o") == ("2025-09-12", {})
    assert read_offer_csv(iter(_offer_lines()), "o") == ("2025-09-12", {"g5.xlarge": 1.006})


def _item(**changes: object) -> dict:
    item = {
        "currencyCode": "USD",
        "retailPrice": 3.673,
        "armRegionName": "eastus",
        "skuName": "NC24ads A100 v4",
        "productName": "Virtual Machines NCadsA100v4 Series",
        "unitOfMeasure": "1 Hour",
        "type": "Consumption",
        "armSkuName": "Standard_NC24ads_A100_v4",
    }
    return {**item, **changes}


SIZES = frozenset({"Standard_NC24ads_A100_v4"})


def _azure(*items: object) -> dict:
    found: dict = {}
    price_files.read_azure_items(list(items), "a", SIZES, found)
    return found


def test_azure_keeps_linux_consumption_hours_of_the_sizes_asked_for():
    assert _azure(_item(), _item(skuName="NC24ads A100 v4 Spot", retailPrice=0.44)) == {
        "eastus": {"Standard_NC24ads_A100_v4": {"onDemand": 3.673, "spot": {"eastus": 0.44}}}
    }
    passed_over = [
        _item(armSkuName="Standard_D4s_v5"),
        _item(type="Reservation"),
        _item(productName="Virtual Machines NCadsA100v4 Series Windows"),
        _item(skuName="NC24ads A100 v4 Low Priority"),
        _item(unitOfMeasure="1/Month"),
        _item(armRegionName=""),
        _item(armRegionName=None),
        _item(type="Reservation", currencyCode="EUR"),  # passed over before its currency is judged
    ]
    assert _azure(*passed_over) == {}


@pytest.mark.parametrize(
    "items, said",
    [
        ({"Items": []}, "a: Items is not a list: not an Azure Retail Prices page"),
        ([_item(), "x"], "a: Items[1]: an item is an object"),
        ([_item(currencyCode="EUR")], "a: Items[0]: currencyCode 'EUR': the snapshot holds US dollars"),
        ([_item(retailPrice=-1)], "a: Items[0] (Standard_NC24ads_A100_v4 eastus NC24ads A100 v4): retailPrice '-1' must be"),
        (
            [_item(), _item(retailPrice=3.7)],
            "a: Items[1]: a second onDemand price 3.7 for Standard_NC24ads_A100_v4 in eastus (first 3.673)",
        ),
        (
            [_item(skuName="X Spot", retailPrice=0.4), _item(skuName="X Spot", retailPrice=0.5)],
            "a: Items[1]: a second spot price 0.5 for Standard_NC24ads_A100_v4 in eastus (first 0.4)",
        ),
    ],
)
def test_an_azure_page_of_another_shape_is_refused(items, said):
    with pytest.raises(SourceError, match=re.escape(said)):
        price_files.read_azure_items(items, "a", SIZES, {})
    _azure(_item(), _item())  # the same price twice is one price


@pytest.mark.parametrize(
    "entries, said",
    [
        ({}, "s: SpotPriceHistory is not a list"),
        (["x"], "s: SpotPriceHistory[0]: an entry names its InstanceType and AvailabilityZoneId"),
        ([{"InstanceType": "g5.xlarge"}], "s: SpotPriceHistory[0]: an entry names its InstanceType and AvailabilityZoneId"),
        ([{"AvailabilityZoneId": "use1-az1"}], "an entry names its InstanceType and AvailabilityZoneId"),
        (
            [{"InstanceType": "g5.xlarge", "AvailabilityZoneId": "use1-az1", "SpotPrice": "0"}],
            "s: SpotPriceHistory[0] (g5.xlarge use1-az1): SpotPrice '0'",
        ),
    ],
)
def test_a_spot_history_of_another_shape_is_refused(entries, said):
    with pytest.raises(SourceError, match=re.escape(said)):
        price_files.read_spot_history(entries, "s", {})


@pytest.mark.parametrize(
    "read, data, said",
    [
        (price_files.utf8, b"ok\nok\n\xe9", "f: line 3: not UTF-8: byte 0xe9 at offset 6"),
        (price_files.read_json, b"{", "f: not JSON (Expecting property name enclosed in double quotes, line 1)"),
        (price_files.read_json, b"[" * 129 + b"]" * 129, "f: JSON nested more than 128 deep, the bound"),
    ],
)
def test_a_source_file_that_is_not_utf8_or_json_is_refused(read, data, said):
    with pytest.raises(SourceError, match=re.escape(said)):
        read(data, "f")
    assert price_files.read_json(b"[" * 128 + b"]" * 128, "f") is not None  # the bound itself is read


@pytest.mark.parametrize("text", ["2026-11-29", "2026-02-30", "2026-1-29", " 2026-11-29", 20261129, None])
def test_a_day_is_yyyy_mm_dd_and_a_real_date(text):
    if text == "2026-11-29":
        assert price_files.day(text, "d") == datetime.date(2026, 11, 29)
    else:
        with pytest.raises(SourceError, match=re.escape(f"d {str(text)[:40]!r} is not a date (YYYY-MM-DD)")):
            price_files.day(text, "d")


def test_a_file_that_is_not_yaml_is_refused_with_its_first_line():
    with pytest.raises(SourceError, match=r"^y: not YAML \(while parsing a flow sequence\)$"):
        price_files.parse_yaml("a: [1, 2\n", "y")


def test_a_csv_that_fails_to_read_names_the_line_after_the_last_one_read():
    """Line 1 when the first line fails (the csv reader's cell limit), line 3 when the bytes after two
    good lines are not UTF-8 (the offer CSV is read as a stream of lines)."""
    with pytest.raises(SourceError, match=r"^o: line 1: field larger than field limit"):
        read_offer_csv(iter(['"' + "x" * 131_073 + '","v1.0"\n']), "o")
    stream = io.TextIOWrapper(io.BytesIO(b'"FormatVersion","v1.0"\n"Disclaimer","d"\n' + b"x" * 10_000 + b"\xe9\n"), encoding="utf-8")
    with pytest.raises(SourceError, match=r"^o: line 3: not UTF-8 \(invalid continuation byte\)$"):
        read_offer_csv(stream, "o")


def test_an_offer_csv_takes_bare_metal_and_reads_past_rows_it_passes_over():
    lines = (RECORDED / "aws" / "us-east-1-index.csv").read_text().splitlines(keepends=True)
    windows, g5 = lines[8], lines[6]
    metal = lines[7].replace('"Compute Instance"', '"Compute Instance (bare metal)"', 1)
    assert read_offer_csv(iter(lines[:6] + [windows, g5, metal]), "o") == ("2025-09-12", {"g5.xlarge": 1.006, "p5.48xlarge": 55.04})
    with pytest.raises(SourceError, match=re.escape("o: line 7: SKU RECORDEDSKU00001 (g5.xlarge): PricePerUnit is missing")):
        read_offer_csv(iter(lines[:6] + [g5.replace('"1.0060000000"', '""', 1)]), "o")


def test_azure_reads_past_the_items_it_passes_over():
    later = _item(retailPrice=3.5)
    for first in (_item(type="Reservation"), _item(unitOfMeasure="1/Month")):
        assert _azure(first, later)["eastus"]["Standard_NC24ads_A100_v4"]["onDemand"] == 3.5
    with pytest.raises(
        SourceError, match=re.escape("a: Items[0] (Standard_NC24ads_A100_v4 eastus NC24ads A100 v4): retailPrice is missing")
    ):
        _azure(_item(retailPrice=""))
    with pytest.raises(SourceError, match="retailPrice is missing"):
        _azure({k: v for k, v in _item().items() if k != "retailPrice"})


def test_a_spot_entry_without_a_price_is_refused_and_a_zone_s_first_entry_is_its_price():
    with pytest.raises(SourceError, match=re.escape("s: SpotPriceHistory[0] (g5.xlarge use1-az1): SpotPrice is missing")):
        price_files.read_spot_history([{"InstanceType": "g5.xlarge", "AvailabilityZoneId": "use1-az1"}], "s", {})
    found: dict = {}
    entries = [{"InstanceType": "g5.xlarge", "AvailabilityZoneId": "use1-az1", "SpotPrice": p} for p in ("0.5", "0.4")]
    price_files.read_spot_history(entries, "s", found)
    assert found == {"g5.xlarge": {"use1-az1": 0.5}}


def test_yaml_nested_past_python_s_recursion_is_refused_and_a_message_keeps_its_first_line_to_120_characters(monkeypatch):
    # Without libyaml, PyYAML's pure-Python loader recurses per level of nesting.
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    with pytest.raises(SourceError, match=r"^y: not YAML \(maximum recursion depth exceeded"):
        price_files.parse_yaml("[" * 3000 + "]" * 3000, "y")
    with pytest.raises(SourceError) as refused:
        price_files.parse_yaml("a: !!python/object:" + "x" * 200 + " {}", "y")
    said = str(refused.value)
    assert said.startswith("y: not YAML (could not determine a constructor for the tag") and len(said) == len("y: not YAML ()") + 120


def test_the_cache_bound_is_the_one_docs_cost_md_states():
    said = "A cache that cannot be read, or is larger than 256 MiB"
    assert said in " ".join((Path(__file__).resolve().parents[2] / "docs" / "cost.md").read_text().split())
    assert price_catalog.MAX_CACHED == 256 * 1024 * 1024


def test_a_cache_the_system_refuses_to_read_falls_back_and_its_error_is_cut_to_120_characters(tmp_path, monkeypatch):
    """What a user without read permission on a deep cache path gets (the tests run as root, which
    reads any file: the refusal is made here as the system makes it)."""
    folder = tmp_path / ("d" * 150)
    folder.mkdir()
    monkeypatch.setenv("GPUFLEET_CACHE", str(folder))
    cache = folder / "prices.json"
    cache.write_text("{}")

    def refused(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refused)
    snapshot = price_catalog.read_current()
    error = str(PermissionError(13, "Permission denied", str(cache)))
    assert snapshot.origin == f"the shipped snapshot (your cache {cache} could not be read: PermissionError: {error[:120]})"
    assert snapshot.quote("aws", "us-east-1", "g5.xlarge").source == "karpenter-provider-aws"


def test_the_page_bound_is_the_one_docs_cost_md_states():
    said = "an API answer past 500 pages (Azure's `NextPageLink`, EC2's spot price history)"
    assert said in " ".join((Path(__file__).resolve().parents[2] / "docs" / "cost.md").read_text().split())
    assert price_fetch.MAX_PAGES == 500


class _Response:
    """An HTTP response as urllib gives it: headers, then the body in reads, or a connection that breaks."""

    def __init__(self, body: bytes, headers: dict[str, str], broken: bool = False):
        self.body, self.headers, self.broken = io.BytesIO(body), headers, broken

    def readinto(self, buffer) -> int:
        if self.broken and self.body.tell():
            raise ConnectionResetError(104, "Connection reset by peer")
        return self.body.readinto(buffer)


def _read(response: _Response) -> tuple[bytes, list]:
    seen: list = []
    body = io.BufferedReader(price_fetch._Bounded(response, "u", lambda label, done, total: seen.append((done, total))), buffer_size=4)
    return body.read(), seen


def test_a_download_without_a_usable_length_reports_no_total_and_one_that_breaks_off_is_named():
    for headers in ({}, {"Content-Length": "many"}):
        body, seen = _read(_Response(b"12345678", headers))
        assert body == b"12345678" and seen[-1] == (8, None)
    assert _read(_Response(b"1234", {"Content-Length": "4"}))[1][-1] == (4, 4)
    with pytest.raises(SourceError, match=re.escape("u: the download broke off after 8 bytes ([Errno 104] Connection reset by peer)")):
        _read(_Response(b"12345678", {}, broken=True))


def test_a_download_at_its_bounds_is_read_and_one_past_them_is_stopped(monkeypatch):
    monkeypatch.setattr(price_fetch, "MAX_BYTES", 8)
    assert _read(_Response(b"12345678", {}))[0] == b"12345678"
    clock = iter([100.0, 100.0 + price_fetch.MAX_SECONDS, 100.0 + price_fetch.MAX_SECONDS, 100.0 + price_fetch.MAX_SECONDS + 0.5])
    monkeypatch.setattr(price_fetch.time, "monotonic", lambda: next(clock))
    response = price_fetch._Bounded(_Response(b"12345678", {}), "u", price_fetch._quiet)  # started at 100
    assert response.readinto(bytearray(4)) == 4 and response.readinto(bytearray(4)) == 4  # exactly at the bound
    with pytest.raises(SourceError, match="u: still downloading after 1800 s, the bound: stopped"):
        response.readinto(bytearray(4))


@pytest.mark.parametrize(
    "url, said",
    [("no-scheme/path", "unknown url type: 'no-scheme/path'"), ("http://127.0.0.1:9/a b", "URL can't contain control characters.")],
)
def test_an_address_urllib_cannot_take_is_named(url, said):
    with pytest.raises(SourceError, match=f"^{re.escape(url)}: could not be read \\({re.escape(said)}"):
        price_fetch.download(url)


def _azure_pages(monkeypatch, *pages: dict) -> None:
    answers = iter(json.dumps(p).encode() for p in pages)
    monkeypatch.setattr(price_fetch, "download", lambda url, progress=price_fetch._quiet: next(answers))


def test_azure_keeps_the_regions_with_an_on_demand_price_and_names_a_foreign_next_page_to_80_characters(monkeypatch):
    spot_only = _item(armRegionName="westus", skuName="NC24ads A100 v4 Spot", retailPrice=0.5)
    _azure_pages(monkeypatch, {"Items": [_item(), spot_only]})
    fresh = price_fetch.fetch_azure(sorted(SIZES), TODAY, "https://prices.example")
    assert list(fresh.rows) == ["eastus"]
    foreign = "https://elsewhere.example/" + "x" * 100
    _azure_pages(monkeypatch, {"Items": [], "NextPageLink": foreign})
    with pytest.raises(SourceError, match=re.escape(f"NextPageLink {foreign[:80]!r} leaves https://prices.example/api/retail/prices")):
        price_fetch.fetch_azure(sorted(SIZES), TODAY, "https://prices.example")
