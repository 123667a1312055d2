"""`gpufleet prices [update]`: which snapshot is read, each source's date, the coverage per cloud and
region; `update` over recorded responses (tests/prices_server.py), its exit codes and messages."""

from __future__ import annotations

import json

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog import prices as price_catalog
from gpufleet.catalog.generate import price_update
from gpufleet.catalog.generate.prices import coverage_table
from gpufleet.cli import prices_command
from tests.conftest import run_cli
from tests.prices_server import PriceServer


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder of the test's own, and no AWS credentials anywhere boto3 looks."""
    monkeypatch.setenv("GPUFLEET_CACHE", str(tmp_path))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path / "prices.json"


def test_prices_says_the_snapshot_its_sources_and_coverage(cache):
    code, out, err = run_cli("prices")
    assert (code, err) == (0, "")
    assert out.startswith("Price snapshot: the shipped snapshot\nPrices of 2026-07-20 (the oldest source in use)\n")
    assert (
        "  karpenter-provider-aws: aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go @6fc13b52, 2026-07-20, Apache-2.0\n"
        in out
    )
    assert "| aws | us-east-1 | 75 | 75 offered | karpenter-provider-aws (2026-07-20) |\n" in out
    assert out.endswith(coverage_table())


def test_region_goes_with_update_only(cache):
    code, _, err = run_cli("prices", "--region", "us-east-1")
    assert code == 2 and "--region REGION chooses the AWS regions `gpufleet prices update` fetches: it goes with update" in err


def test_an_unknown_region_is_refused(cache):
    code, _, err = run_cli("prices", "update", "--region", "mars-east-1")
    assert code == 2 and "--region 'mars-east-1': not an AWS region of the catalog" in err
    assert not cache.exists()


def test_update_then_prices_reads_the_cache(cache, monkeypatch):
    with PriceServer() as server:
        monkeypatch.setattr(price_update, "ENDPOINTS", server.endpoints)
        code, out, err = run_cli("prices", "update", "--region", "us-east-1")
    assert (code, out) == (0, "")
    assert "AWS spot: no AWS credentials found (boto3's chain): spot prices kept from the previous snapshot" in err
    assert "refreshed: aws-price-list-us-east-1, azure-retail-prices, google-cloud-pricing-cost-calculator" in err
    assert f"wrote {cache}: prices of 2025-09-12" in err
    assert f"reading {server.base}/offers/v1.0/aws/AmazonEC2/20250912225308/us-east-1/index.csv" in err  # progress, without a terminal
    code, out, _ = run_cli("prices")
    assert code == 0 and out.startswith(f"Price snapshot: your cache {cache} (`gpufleet prices update`, ")
    assert (
        "  aws-price-list-us-east-1: AWS Price List Bulk API " in out and "| azure | eastus | 3 | 3 listed | azure-retail-prices (" in out
    )


def test_partial_update_exits_2_naming_what_failed_and_what_was_refreshed(cache, monkeypatch):
    with PriceServer(failing={"/gcp/pricing.yml": 500}) as server:
        monkeypatch.setattr(price_update, "ENDPOINTS", server.endpoints)
        code, _, err = run_cli("prices", "update", "--region", "us-east-1")
    assert code == 2
    assert f"error: google-cloud-pricing-cost-calculator: {server.base}/gcp/pricing.yml: could not be read (HTTP Error 500" in err
    assert "refreshed: aws-price-list-us-east-1, azure-retail-prices" in err
    assert "partial: 1 sources failed; their rows are those of the shipped snapshot" in err
    assert cache.exists()


def test_failed_update_exits_2_and_keeps_the_previous_snapshot(cache, monkeypatch):
    cache.write_text("{}")  # unreadable as a snapshot: the shipped one is read, and the file is left alone
    with PriceServer(failing={"*": 500}) as server:
        monkeypatch.setattr(price_update, "ENDPOINTS", server.endpoints)
        code, _, err = run_cli("prices", "update", "--region", "us-east-1")
    assert code == 2
    assert "error: aws-price-list (the EC2 region index): " in err and "error: azure-retail-prices: " in err
    assert "error: no source was refreshed: the shipped snapshot (your cache " in err
    assert cache.read_text() == "{}"


def test_the_first_unknown_region_is_named(cache):
    code, _, err = run_cli("prices", "update", "--region", "venus-west-1", "--region", "mars-east-1")
    assert code == 2 and "--region 'mars-east-1': not an AWS region of the catalog" in err


def test_azure_is_asked_for_the_catalog_s_sizes_and_the_snapshot_s_rows(cache, monkeypatch):
    """The system pool's Standard_D4s_v5 is a row of the snapshot, not an AKS GPU size of the catalog."""
    with PriceServer() as server:
        monkeypatch.setattr(price_update, "ENDPOINTS", server.endpoints)
        run_cli("prices", "update", "--region", "us-east-1")
    [asked] = [r for r in server.requests if "retail/prices" in r and "skip" not in r]
    assert "Standard_D4s_v5" in asked and "Standard_NC40ads_H100_v5" in asked
    assert prices_command._azure_rows({}) == set()


def test_a_source_that_does_not_say_whether_it_is_used_is_shown(cache):
    document = json.loads(price_catalog.PRICES_FILE.read_text())
    del document["generated"]["sources"]["karpenter-provider-aws"]["used"]
    cache.write_text(json.dumps(document))
    code, out, _ = run_cli("prices")
    assert code == 0 and "\n  karpenter-provider-aws: aws/karpenter-provider-aws " in out


def test_spot_asks_for_the_gpu_and_neuron_types_offered_in_each_region(cache, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "recorded")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "recorded")
    _, types = prices_command._spot(["us-east-1"], catalog.load())
    east = types["us-east-1"]
    assert len(east) == 75 and {"g5.xlarge", "inf2.xlarge", "trn1.32xlarge"} <= set(east) and "m6i.large" not in east
