"""`gpufleet prices update`'s sources, read from recorded responses (tests/fixtures/prices/recorded/),
and the snapshot it writes: whole or not at all, the previous one kept where a source fails."""

from __future__ import annotations

import datetime
import json

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
