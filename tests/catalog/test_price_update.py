"""`gpufleet prices update`'s sources, read from recorded responses (tests/fixtures/prices/recorded/),
and the snapshot it writes: whole or not at all, the previous one kept where a source fails."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from gpufleet.catalog import prices as price_catalog
from gpufleet.catalog.generate import price_fetch, price_update
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
