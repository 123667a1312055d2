"""The price snapshot and its generator (src/gpufleet/catalog/generate/prices.py), against the recorded
sources (tests/fixtures/prices, SOURCE.md there): the committed snapshot is what they give, each
source read in its own shape, every row with its source, licence and date, disagreeing sources held
to their reported reason, and a bad row or file stopping the run (exit 2) with one message naming the
file, line, field and value."""

from __future__ import annotations

import ast
import csv
import datetime
import gzip
import io
import json
import math
import re
import shutil
from pathlib import Path

import pytest

from gpufleet.catalog import catalog, prices
from gpufleet.catalog.generate import price_files
from gpufleet.catalog.generate import prices as generator
from gpufleet.rules import cost as cost_rules

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests" / "fixtures" / "prices"
SLICES = SOURCES / "skypilot-catalog"
KARPENTER = SOURCES / "third_party" / "karpenter-provider-aws" / "zz_generated.pricing_aws.go"
CYCLENERD = SOURCES / "third_party" / "google-cloud-pricing-cost-calculator" / "pricing.yml.gz"
OFFER = SOURCES / "third_party" / "aws-offer" / "lyft-awspricing-tests-data-ec2_offer.py"
ANOMALIES = SOURCES / "aws-anomaly-rows.csv"


def _rows(cloud: str) -> list[dict]:
    with (SLICES / f"{cloud}-vms.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_the_committed_snapshot_is_what_the_recorded_sources_give(capsys):
    assert generator.main(["--from", str(SOURCES), "--check"]) == 0
    snapshot = prices.load()
    # Dated by its oldest dated source, Karpenter's table (`// generated at 2026-07-20T13:44:30Z`).
    assert snapshot.date == "2026-07-20"
    assert snapshot.sources["karpenter-provider-aws"]["date"] == "2026-07-20"
    assert snapshot.sources["google-cloud-pricing-cost-calculator"]["date"] == "2026-07-30"
    assert snapshot.sources["skypilot-catalog-aws"]["commit"].startswith("e385a0d3")


def test_every_row_names_a_source_with_its_licence_and_date():
    snapshot = prices.load()
    for cloud, regions in snapshot.quotes.items():
        for types in regions.values():
            for quote in types.values():
                for source_id in filter(None, (quote.source, quote.spot_source)):
                    source = snapshot.sources[source_id]
                    assert source["licenceRead"] and "licence" in source, (cloud, source_id)
                    assert source.get("date") or source["read"], (cloud, source_id)
    # skypilot-catalog names no licence: its rows say so, never Apache-2.0.
    assert {s for s, v in snapshot.sources.items() if v["licence"] is None} == {
        "skypilot-catalog-aws",
        "skypilot-catalog-gcp",
        "skypilot-catalog-azure",
    }
    assert "undated, read 2026-11-26" in snapshot.source_line("skypilot-catalog-aws")
    assert "no licence found" in snapshot.source_line("skypilot-catalog-aws")


def test_aws_us_east_1_is_karpenter_s_table_with_each_zone_s_spot_price():
    rows = [r for r in _rows("aws") if r["InstanceType"] == "p5.48xlarge" and r["Region"] == "us-east-1"]
    quote = prices.load().quote("aws", "us-east-1", "p5.48xlarge")
    assert '"p5.48xlarge": 55.040000' in KARPENTER.read_text()
    assert quote.on_demand == 55.04 and quote.source == "karpenter-provider-aws"
    assert quote.spot == {r["AvailabilityZone"]: float(r["SpotPrice"]) for r in rows} and quote.spot_source == "skypilot-catalog-aws"
    # Every type of the table, accelerated or not: the unknowns are priced.
    for name, price in {"inf2.48xlarge": 12.98127, "g6e.12xlarge": 10.49264, "trn1.32xlarge": 21.5}.items():
        assert prices.load().quote("aws", "us-east-1", name).on_demand == price


def test_the_a3_is_priced_whole_and_the_disagreement_is_held_to_its_reason():
    """GCP a3-highgpu-8g: skypilot-catalog's host row plus the row its fetcher matched by the substring
    "H100 80GB GPU" gave $43.07/h; the licensed GCP file prices it whole at $88.49/h."""
    snapshot = prices.load()
    quote = snapshot.quote("gcp", "us-central1", "a3-highgpu-8g")
    assert quote.on_demand == pytest.approx(88.49) and quote.gpus_included
    price = cost_rules.instance_price(snapshot, "gcp", "us-central1", "a3-highgpu-8g", "ON_DEMAND", (), ("H100", 8))
    assert price.dollars == pytest.approx(88.49) and "(its GPUs included)" in price.basis
    document = json.loads(prices.PRICES_FILE.read_text())
    [check] = [c for c in document["generated"]["crossCheck"] if c["instanceType"] == "a3-highgpu-8g" and c["region"] == "us-central1"]
    assert check["kept"]["source"] == "google-cloud-pricing-cost-calculator"
    assert check["dropped"] == [
        {"source": "skypilot-catalog-gcp", "onDemand": 43.06615, "formed": "host row 9.46006 + attached-GPU row H100 x8 33.6061"}
    ]
    assert check["reason"] == (
        "kept google-cloud-pricing-cost-calculator: its licence (Apache-2.0) is verified; skypilot-catalog-gcp has no licence found"
    )


def test_strict_refuses_the_disagreement(tmp_path, capsys):
    assert generator.main(["--from", str(SOURCES), "--strict", "--out", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert "gcp us-central1 a3-highgpu-8g: on-demand prices more than 5% apart" in err and "refused (--strict)" in err
    assert not (tmp_path / "p.json").exists()


def test_a_disagreement_no_licence_decides_is_refused():
    sources = {"a": {"licence": None, "licenceRead": "none"}, "b": {"licence": None, "licenceRead": "none"}}
    candidates = [generator.Candidate("a", 1.0, "x"), generator.Candidate("b", 1.06, "y")]
    with pytest.raises(generator.SourceError, match="no licence decides between them"):
        generator.cross_check(("aws", "r", "t"), candidates, sources, strict=False)
    agreeing = [generator.Candidate("a", 1.0, "x"), generator.Candidate("b", 1.05, "y")]
    assert generator.cross_check(("aws", "r", "t"), agreeing, sources, strict=True) == (agreeing[0], None)


def _cyclenerd() -> dict:
    """The GCP file as the generator reads it (parsed once a session: 4 MB of YAML)."""
    return generator.parse_yaml(gzip.decompress(CYCLENERD.read_bytes()).decode(), "pricing.yml")


def test_a_gpu_name_is_one_accelerator_by_its_exact_name():
    """A GPU name on two accelerators (the A3 Mega's name on the A3 High) is refused: a substring
    match of "h100-80gb" would have priced one by the other's SKU."""
    _, found = generator.read_cyclenerd(_cyclenerd(), "pricing.yml")
    generator.gpus_by_exact_name(found, "pricing.yml")
    mega = {r: {n: ({**q, "gpus": ("h100-80gb", 8)} if n == "a3-megagpu-8g" else q) for n, q in t.items()} for r, t in found.items()}
    with pytest.raises(
        generator.SourceError, match=r"a3-megagpu-8g: GPU name 'h100-80gb' is nvidia-h100-80gb on .* and nvidia-h100-mega-80gb here"
    ):
        generator.gpus_by_exact_name(mega, "pricing.yml")
    fewer = {r: {n: ({**q, "gpus": ("h100-80gb", 4)} if n == "a3-highgpu-8g" else q) for n, q in t.items()} for r, t in found.items()}
    with pytest.raises(generator.SourceError, match="a3-highgpu-8g: h100-80gb: 4 GPUs, where the catalog's a3-highgpu-8g has 8"):
        generator.gpus_by_exact_name(fewer, "pricing.yml")


def test_the_gcp_file_is_dated_by_its_own_timestamp_and_prices_every_region():
    dated, found = generator.read_cyclenerd(_cyclenerd(), "pricing.yml")
    assert dated == datetime.date(2026, 7, 30)  # about.timestamp 1785391997, "Thu Jul 30 06:13:17 2026"
    assert len(found) >= 40 and all("a3-highgpu-8g" in found[r] for r in ("us-central1", "europe-west4", "asia-northeast1"))
    with pytest.raises(generator.SourceError, match="about.timestamp '20260730' is not a Unix time"):
        generator.read_cyclenerd({"about": {"timestamp": "20260730"}, "compute": {"instance": {}}}, "pricing.yml")


def test_skypilot_gcp_attached_gpus_are_rows_of_their_own():
    found, _ = generator.read_catalog("gcp", (SLICES / "gcp-vms.csv").read_text(), "gcp-vms.csv")
    a100 = [r for r in _rows("gcp") if r["InstanceType"] == "" and r["AcceleratorName"] == "A100" and r["AcceleratorCount"] == "2"]
    assert found["us-central1"][prices.accelerator_key("A100", 2)]["onDemand"] == float(a100[0]["Price"])


def test_azure_rows_have_no_zone_and_a_quoted_generation():
    quote = prices.load().quote("azure", "eastus", "Standard_NC16as_T4_v3")
    assert quote.on_demand == 1.204 and quote.spot == {"eastus": 0.143517}


@pytest.mark.parametrize(
    "edit, said",
    [
        (
            lambda t: t.replace("// generated at 2026-07-20T13:44:30Z", "// generated at 20260720T134430Z"),
            "generated at '20260720T134430Z' is not a time",
        ),
        (lambda t: t.replace("// generated at", "// made at"), "no `// generated at <time> for <region>` line"),
        (lambda t: t.replace('"p5.48xlarge": 55.040000', '"p5.48xlarge": -55.040000'), 'is not a row of `"type": price,` pairs'),
        (
            lambda t: t.replace('"p5.48xlarge": 55.040000', '"p5.48xlarge": 0.000000'),
            "p5.48xlarge: price '0.000000' must be a positive number",
        ),
        (lambda t: t.replace('"p5.4xlarge": 6.880000', '"p5.48xlarge": 6.880000'), "p5.48xlarge is priced twice in us-east-1"),
    ],
)
def test_a_bad_karpenter_table_is_refused(edit, said):
    with pytest.raises(generator.SourceError, match=said.replace("(", r"\(").replace(")", r"\)").replace("`", "`")):
        generator.read_karpenter(edit(KARPENTER.read_text()), "zz_generated.pricing_aws.go")


def test_the_karpenter_table_is_dated_by_its_stamp():
    dated, found = generator.read_karpenter(KARPENTER.read_text(), "zz_generated.pricing_aws.go")
    assert dated == datetime.date(2026, 7, 20) and list(found) == ["us-east-1"] and len(found["us-east-1"]) > 800


def _folder(tmp_path: Path, cloud: str, transform) -> Path:
    folder = tmp_path / "sources"
    shutil.copytree(SOURCES, folder)
    path = folder / "skypilot-catalog" / f"{cloud}-vms.csv"
    path.write_text(transform(path.read_text()))
    return folder


def _field(name: str, value: str):
    """An edit of the second line's field `name` (the AWS header's order)."""

    def edit(line: str) -> str:
        header = (SLICES / "aws-vms.csv").read_text().splitlines()[0].split(",")
        fields = next(csv.reader([line]))
        fields[header.index(name)] = value
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(fields)
        return out.getvalue()

    return edit


def _second_line(edit):
    def transform(text: str) -> str:
        lines = text.splitlines()
        lines[1] = edit(lines[1])
        return "\n".join(lines) + "\n"

    return transform


@pytest.mark.parametrize(
    "cloud, edit, said",
    [
        ("aws", _field("Price", "-5.672"), "line 2: Price '-5.672' must be a positive number"),
        ("aws", _field("Price", ""), "line 2: Price is missing"),
        ("aws", _field("Price", "0.0"), "line 2: Price '0.0' must be a positive number"),
        ("aws", _field("Price", "five"), "line 2: Price 'five' is not a number"),
        ("aws", _field("SpotPrice", "-0.5"), "line 2: SpotPrice '-0.5' must be a positive number"),
        ("aws", lambda line: line.rsplit(",", 1)[0], "line 2: the row has 10 fields, the header 11"),
        ("gcp", lambda line: line.replace(",0.36975", ",-1", 1), "line 2: SpotPrice '-1' must be a positive number"),
        ("azure", lambda line: line.replace(",eastus,", ",,", 1), "line 2: Region is empty"),
    ],
)
def test_a_bad_row_is_refused_by_field(tmp_path, capsys, cloud, edit, said):
    folder = _folder(tmp_path, cloud, _second_line(edit))
    out = tmp_path / "prices.json"
    assert generator.main(["--from", str(folder), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{cloud}-vms.csv: {said}" in err and "Traceback" not in err
    assert not out.exists()


def test_a_header_of_another_schema_is_refused(tmp_path, capsys):
    folder = _folder(tmp_path, "aws", lambda text: text.replace("SpotPrice", "Spot", 1))
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert "line 1: the header lacks SpotPrice" in capsys.readouterr().err


def test_a_type_without_an_on_demand_price_is_refused_unless_recorded_as_unpriced(tmp_path, capsys):
    folder = _folder(tmp_path, "aws", lambda text: text + ANOMALIES.read_text())
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert "Price is missing" in capsys.readouterr().err
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json"), "--allow-unpriced"]) == 0
    document = json.loads((tmp_path / "p.json").read_text())
    assert document["unpriced"]["aws"] == {"ap-south-1": ["trn1.32xlarge"], "us-east-2": ["trn2.48xlarge"], "us-west-2": ["p5e.48xlarge"]}
    assert "p5e.48xlarge" not in document["aws"].get("us-west-2", {})


@pytest.mark.parametrize("read", ["last week", "20261101", "2026-13-01"])
def test_provenance_is_required_and_dated_yyyy_mm_dd(tmp_path, capsys, read):
    folder = _folder(tmp_path, "aws", lambda text: text)
    provenance = json.loads((folder / "provenance.json").read_text())
    provenance["skypilot-catalog-gcp"]["read"] = read
    (folder / "provenance.json").write_text(json.dumps(provenance))
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert f"skypilot-catalog-gcp.read {read!r} is not a date (YYYY-MM-DD)" in capsys.readouterr().err


def test_the_snapshot_is_dated_by_its_oldest_source_compared_as_dates():
    snapshot = prices.PriceSnapshot(None, {"a": {"date": "2026-11-01"}, "b": {"date": "2026-09-30"}, "c": {"read": "2026-11-26"}}, {}, {})
    assert snapshot.oldest(["a", "b", "c"]) == ("2026-09-30", ["c"])
    assert (
        cost_rules.prices_stated(snapshot, ["a", "c"])
        == "prices of 2026-11-01 (a 2026-11-01; c undated, read 2026-11-26), from the shipped snapshot"
    )


def test_prices_older_than_90_days_are_an_advisory():
    snapshot = prices.load()
    assert cost_rules.prices_advisories(snapshot, ["karpenter-provider-aws"], datetime.date(2026, 10, 18)) == []
    [said] = cost_rules.prices_advisories(snapshot, ["karpenter-provider-aws"], datetime.date(2026, 10, 19))
    assert said == ("karpenter-provider-aws: prices of 2026-07-20 are 91 days old on 2026-10-19, more than 90: they may have changed since")
    [undated] = cost_rules.prices_advisories(snapshot, ["skypilot-catalog-aws"], datetime.date(2026, 10, 5))
    assert "carry no date of their own (read 2026-11-26)" in undated


@pytest.mark.parametrize(
    "name, data, said",
    [
        ("skypilot-catalog/aws-vms.csv", b"InstanceType,Price\n\xe9\n", "aws-vms.csv: line 2: not UTF-8: byte 0xe9 at offset 19"),
        ("provenance.json", b'{"a": "\xff"}', "provenance.json: line 1: not UTF-8: byte 0xff"),
        ("provenance.json", b"[" * 100_000 + b"]" * 100_000, "provenance.json: JSON nested more than 128 deep, the bound"),
        ("provenance.json", b"[" * 200 + b"]" * 200, "provenance.json: JSON nested more than 128 deep, the bound"),
    ],
)
def test_a_file_no_reader_takes_is_refused_with_one_message(tmp_path, capsys, name, data, said):
    folder = _folder(tmp_path, "aws", lambda text: text)
    (folder / name).write_bytes(data)
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and err.count("\n") == 1


def test_a_csv_cell_over_the_field_limit_is_refused(tmp_path, capsys):
    folder = _folder(tmp_path, "azure", lambda text: text + "Standard_X," + "A" * 131_073 + ",1,4.0,16,,0.1,0.01,eastus,V2\n")
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    err = capsys.readouterr().err
    assert "azure-vms.csv: line 5: field larger than field limit (131072)" in err and "Traceback" not in err


def _offer() -> dict:
    """lyft/awspricing's records laid out as a region's offer file (SOURCE.md)."""
    tree = ast.parse(OFFER.read_text())
    [data] = [ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "BASIC_EC2_OFFER_DATA"]
    return {
        "publicationDate": "2019-03-29T04:06:54Z",
        "products": {sku: record["product"] for sku, record in data.items()},
        "terms": {"OnDemand": {sku: record["terms"]["OnDemand"] for sku, record in data.items()}},
    }


def test_the_aws_offer_file_gives_the_linux_shared_on_demand_price():
    published, found = generator.read_offer(_offer(), "index.json")
    assert published == "2019-03-29T04:06:54Z" and found == {"c4.large": 0.1}


def test_an_offer_product_of_another_licence_or_tenancy_is_not_taken():
    offer = _offer()
    for product in offer["products"].values():
        product["attributes"]["tenancy"] = "Dedicated"
    assert generator.read_offer(offer, "index.json")[1] == {}


def test_an_offer_price_below_zero_is_refused():
    offer = _offer()
    for terms in offer["terms"]["OnDemand"].values():
        for term in terms.values():
            for dimension in term["priceDimensions"].values():
                dimension["pricePerUnit"]["USD"] = "-0.1"
    with pytest.raises(generator.SourceError, match=r"pricePerUnit.USD '-0.1' must be a positive number"):
        generator.read_offer(offer, "index.json")


def test_the_offer_replaces_the_others_on_demand_price_of_the_types_it_holds():
    texts, provenance = generator._read_dir(SOURCES)
    offer = _offer()
    for product in offer["products"].values():
        product["attributes"]["instanceType"] = "m6i.large"
    document = generator.build(texts, provenance, {"us-east-1": (offer, "index.json")})
    assert document["aws"]["us-east-1"]["m6i.large"]["onDemand"] == 0.1
    assert document["aws"]["us-east-1"]["m6i.large"]["source"] == "aws-price-list-us-east-1"
    assert document["aws"]["us-west-2"]["m6i.large"]["onDemand"] == 0.096
    assert document["generated"]["sources"]["aws-price-list-us-east-1"]["date"] == "2019-03-29"


# The v8 columns the generator reads, per cloud (skypilot-catalog's headers, SOURCE.md).
V8_READ = {
    "aws": ("InstanceType", "Price", "SpotPrice", "Region", "AvailabilityZone"),
    "gcp": ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone", "Price", "SpotPrice"),
    "azure": ("InstanceType", "Price", "SpotPrice", "Region"),
}


@pytest.mark.parametrize("cloud, column", [(c, col) for c, cols in V8_READ.items() for col in cols])
def test_each_required_column_is_asked_for(tmp_path, capsys, cloud, column):
    def drop(text: str) -> str:
        lines = text.splitlines()
        lines[0] = lines[0].replace(column, "Renamed", 1)
        return "\n".join(lines) + "\n"

    folder = _folder(tmp_path, cloud, drop)
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert f"line 1: the header lacks {column}" in capsys.readouterr().err


@pytest.mark.parametrize("count, said", [("0", "must be a whole number"), ("1.5", "must be a whole number"), ("two", "is not a number")])
def test_a_gcp_attached_gpu_row_needs_a_whole_count(tmp_path, capsys, count, said):
    def edit(text: str) -> str:
        return text.replace(",,,A100,2,", f",,,A100,{count},", 1)

    folder = _folder(tmp_path, "gcp", edit)
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert f"AcceleratorCount '{count}' {said}" in capsys.readouterr().err


@pytest.mark.parametrize("document", [[], {"terms": {}}, {"products": {}}, {"products": [], "terms": {}}])
def test_a_document_that_is_not_an_offer_file_is_refused(document):
    with pytest.raises(generator.SourceError, match="not an AWS offer file"):
        generator.read_offer(document, "index.json")


def test_provenance_of_another_shape_is_refused(tmp_path, capsys):
    folder = _folder(tmp_path, "aws", lambda text: text)
    (folder / "provenance.json").write_text("[]")
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert "provenance.json: an object keyed by source is expected" in capsys.readouterr().err
    (folder / "provenance.json").unlink()
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert "provenance.json is missing" in capsys.readouterr().err


def test_coverage_is_what_docs_cost_md_carries():
    """docs/cost.md's coverage table is `--coverage`'s output over the committed snapshot; us-east-1 prices
    every accelerated type EC2 offers there (Karpenter's table of 2026-07-20 has the g7 families)."""
    assert generator.coverage_table() in (ROOT / "docs" / "cost.md").read_text()
    [east] = [r for r in prices.coverage(prices.load(), catalog.load()) if r["cloud"] == "aws" and r["region"] == "us-east-1"]
    assert east["priced"] == east["offered"] and not east["unpriced"]


def test_gcp_is_priced_in_every_region_for_every_machine_type_the_source_lists_there():
    """Counted against what the GCP file lists per region (its generator writes a machine type's price
    only where all of its SKUs are sold): every listed type is priced. northamerica-northeast2 lists no
    A2 High/Mega and no A3 Mega (16); europe-north2, northamerica-south1 and asia-southeast3 list no GPU
    machine type at all; the A3 Edge, A3 Ultra and A4 are in no region of the file."""
    snapshot, cat = prices.load_shipped(), catalog.load()
    rows = {r["region"]: r for r in prices.coverage(snapshot, cat) if r["cloud"] == "gcp"}
    assert len(rows) == 43 and all(r["listed"] and r["priced"] == r["of"] == r["offered"] and not r["unpriced"] for r in rows.values())
    assert {
        r: rows[r]["of"] for r in ("northamerica-northeast2", "europe-north2", "northamerica-south1", "asia-southeast3", "us-east4")
    } == {
        "northamerica-northeast2": 16,
        "europe-north2": 0,
        "northamerica-south1": 0,
        "asia-southeast3": 0,
        "us-east4": 22,
    }
    assert prices.unlisted_machine_types(snapshot, cat) == ["a3-edgegpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g"]
    table = generator.coverage_table(snapshot, cat)
    assert table.startswith("| cloud | region | priced | of | sources (date) |\n|---|---|---|---|---|\n| aws | af-south-1 |")
    assert "| gcp | europe-north2 | 0 | 0 offered per the source | - |\n" in table


def test_the_gcp_listing_is_every_region_the_file_prices_in_and_each_gpu_machine_types_regions():
    document = _cyclenerd()
    _, found = generator.read_cyclenerd(document, "pricing.yml")
    listing = generator.cyclenerd_listing(document, found)
    assert len(listing["regions"]) == 43 and {"asia-southeast3", "europe-north2", "northamerica-south1"} <= set(listing["regions"])
    machines = listing["machineTypes"]
    assert "e2-standard-4" not in machines and "g4-standard-48" in machines  # GPU machine types only, the catalog's or not
    assert machines["a3-megagpu-8g"] == [
        "asia-northeast1",
        "asia-southeast1",
        "australia-southeast1",
        "europe-west1",
        "europe-west3",
        "europe-west4",
        "us-east4",
        "us-east5",
        "us-west4",
    ]
    assert prices.load_shipped().sources["google-cloud-pricing-cost-calculator"]["listing"] == listing


def _listed_snapshot() -> prices.PriceSnapshot:
    """A GCP source listing us-central1 with two machine types, one of them without a row, and a row in a
    region it does not list."""
    listing = {"regions": ["us-central1"], "machineTypes": {"a2-highgpu-1g": ["us-central1"], "g2-standard-4": ["us-central1"]}}
    quotes = {
        "gcp": {
            "us-central1": {"a2-highgpu-1g": prices.Quote(3.0, source="s")},
            "mars-north1": {"g2-standard-4": prices.Quote(1.0, source="s")},
        }
    }
    return prices.PriceSnapshot("2026-07-30", {"s": {"date": "2026-07-30", "listing": listing}}, quotes, {})


def test_a_listed_type_without_a_row_is_unpriced_and_an_unlisted_region_is_named():
    snapshot, cat = _listed_snapshot(), catalog.load()
    rows = {r["region"]: r for r in prices.coverage(snapshot, cat) if r["cloud"] == "gcp"}
    assert (rows["us-central1"]["priced"], rows["us-central1"]["of"], rows["us-central1"]["unpriced"]) == (1, 2, ["g2-standard-4"])
    assert (rows["mars-north1"]["priced"], rows["mars-north1"]["of"], rows["mars-north1"]["listed"]) == (1, 1, False)
    # a region the catalog's GKE zones name and the source does not list: none offered there, said so
    assert (rows["europe-west4"]["priced"], rows["europe-west4"]["of"], rows["europe-west4"]["listed"]) == (0, 0, False)
    table = generator.coverage_table(snapshot, cat)
    assert "| gcp | us-central1 | 1 | 2 offered per the source | s (2026-07-30) |\n" in table
    assert "| gcp | mars-north1 | 1 | 1 (a region the source does not list) | s (2026-07-30) |\n" in table
    assert "| gcp | europe-west4 | 0 | 0 (a region the source does not list) | - |\n" in table
    assert "| aws | us-east-1 | 0 | 75 offered | - |\n" in table
    unlisted = [n for n in sorted(cat.facts.gke.machine_types) if n not in ("a2-highgpu-1g", "g2-standard-4")]
    assert prices.unlisted_machine_types(snapshot, cat) == unlisted
    assert table.endswith(f"no source lists in any region, so unpriced everywhere: {', '.join(unlisted)}.\n")


def test_a_snapshot_without_a_listing_counts_the_regions_it_prices_as_listed():
    snapshot = prices.PriceSnapshot(None, {}, {"gcp": {"us-central1": {"a2-highgpu-1g": prices.Quote(3.0, source="s")}}}, {})
    rows = {r["region"]: r for r in prices.coverage(snapshot, catalog.load()) if r["cloud"] == "gcp"}
    assert (rows["us-central1"]["priced"], rows["us-central1"]["of"], rows["us-central1"]["listed"]) == (1, 1, True)
    assert rows["europe-west4"]["listed"] is False


# --- each reader's refusals, one per rule, on the smallest file that breaks it (price_files.py) ----


def _cyclenerd_of(**instances: object) -> dict:
    return {"about": {"timestamp": 1785391997}, "compute": {"instance": instances}}


A2 = {"cost": {"us-central1": {"hour": 3.5, "hour_spot": 1.2}}, "cpu": 12, "ram": 85, "a100": 1}


def test_the_gcp_file_keeps_gpu_machine_types_and_the_system_families_only():
    e2 = {"cost": {"us-central1": {"hour": 0.13}}, "cpu": 4, "ram": 16}
    n2 = {"cost": "not read", "cpu": 4, "ram": 16}
    g4 = {"cost": {"asia-east1": {"hour": 1.5}}, "cpu": 12, "ram": 45, "rtx6000": 0.25}
    dated, found = price_files.read_cyclenerd(
        _cyclenerd_of(**{"a2-highgpu-1g": A2, "e2-standard-4": e2, "n2-standard-4": n2, "g4-standard-12": g4}), "p"
    )
    assert dated == datetime.date(2026, 7, 30)
    assert found == {
        "us-central1": {
            "a2-highgpu-1g": {"onDemand": 3.5, "spot": {"us-central1": 1.2}, "gpus": ("a100", 1)},
            "e2-standard-4": {"onDemand": 0.13, "spot": {}},
        },
        "asia-east1": {"g4-standard-12": {"onDemand": 1.5, "spot": {}, "gpus": ("rtx6000", 0.25)}},
    }


@pytest.mark.parametrize(
    "document, said",
    [
        ([], "p: not a google-cloud-pricing-cost-calculator pricing.yml"),
        ({"about": {}, "compute": {}}, "p: not a google-cloud-pricing-cost-calculator pricing.yml"),
        ({"about": {"timestamp": 1}, "compute": {"instance": []}}, "not a google-cloud-pricing-cost-calculator"),
        ({"about": {"timestamp": True}, "compute": {"instance": {}}}, "p: about.timestamp 'True' is not a Unix time"),
        ({"about": {"timestamp": 0}, "compute": {"instance": {}}}, "p: about.timestamp '0' is not a Unix time"),
        ({"about": {"timestamp": "1785391997"}, "compute": {"instance": {}}}, "about.timestamp '1785391997' is not a Unix time"),
        (_cyclenerd_of(a2=[1]), "p: compute.instance.a2: a machine type's entry is a mapping"),
        (_cyclenerd_of(a2={"a100": 1}), "p: compute.instance.a2: a kept entry needs a `cost` mapping"),
        (_cyclenerd_of(a2={**A2, "l4": 1}), "p: compute.instance.a2: {'a100': 1, 'l4': 1} is not one GPU name and a positive count"),
        (_cyclenerd_of(a2={**A2, "a100": 0}), "is not one GPU name and a positive count"),
        (_cyclenerd_of(a2={**A2, "a100": True}), "is not one GPU name and a positive count"),
        (_cyclenerd_of(a2={**A2, "a100": "1"}), "is not one GPU name and a positive count"),
        (_cyclenerd_of(a2={**A2, "a100": math.inf}), "is not one GPU name and a positive count"),
        (
            _cyclenerd_of(a2={**A2, "cost": {"us-central1": 3.5}}),
            "p: compute.instance.a2.cost.us-central1: prices per region are a mapping",
        ),
        (_cyclenerd_of(a2={**A2, "cost": {"us-central1": {"hour_spot": 1.0}}}), "a2.cost.us-central1: hour is missing"),
        (
            _cyclenerd_of(a2={**A2, "cost": {"us-central1": {"hour": 1.0, "hour_spot": 0}}}),
            "a2.cost.us-central1: hour_spot '0' must be a positive",
        ),
    ],
)
def test_a_gcp_file_of_another_shape_is_refused(document, said):
    with pytest.raises(price_files.SourceError, match=re.escape(said)):
        price_files.read_cyclenerd(document, "p")


def test_one_gpu_name_on_two_accelerators_is_refused_wherever_it_appears():
    machines = catalog.curated_facts()["gke"]["machineTypes"]
    a2, g2 = machines["a2-highgpu-1g"], machines["g2-standard-4"]
    priced = {"r1": {"a2-highgpu-1g": {"gpus": ("gpu-x", a2["count"])}}, "r2": {"g2-standard-4": {"gpus": ("gpu-x", g2["count"])}}}
    with pytest.raises(
        price_files.SourceError,
        match=re.escape(f"p: compute.instance.g2-standard-4: GPU name 'gpu-x' is {a2['accelerator']} on a2-highgpu-1g"),
    ):
        price_files.gpus_by_exact_name(priced, "p")
    # the same name on the same accelerator, a type the catalog lacks, a row of no GPU: all taken
    price_files.gpus_by_exact_name(
        {
            "r1": {"a2-highgpu-1g": {"gpus": ("gpu-x", a2["count"])}, "x9-unknown": {"gpus": ("gpu-y", 9)}, "e2-standard-4": {}},
            "r2": {"a2-highgpu-1g": {"gpus": ("gpu-x", a2["count"])}},
        },
        "p",
    )


AWS_HEADER = "InstanceType,Price,SpotPrice,Region,AvailabilityZone"


@pytest.mark.parametrize(
    "text, said",
    [
        ("", "v: the file is empty: a aws vms.csv starts with its header"),
        ("\n", "v: the file is empty"),
        (f"{AWS_HEADER}\n,1.0,0.5,us-east-1,use1-az1\n", "v: line 2: InstanceType is empty"),
        (
            f"{AWS_HEADER}\ng5.xlarge,1.0,0.5,us-east-1,use1-az1\ng5.xlarge,1.1,0.5,us-east-1,use1-az2\n",
            "v: line 3: Price '1.1' of g5.xlarge in us-east-1 differs from 1.0",
        ),
        (f"{AWS_HEADER}\ng5.xlarge,inf,0.5,us-east-1,use1-az1\n", "v: line 2: Price 'inf' must be a positive number"),
        (f"{AWS_HEADER}\ng5.xlarge,nan,0.5,us-east-1,use1-az1\n", "v: line 2: Price 'nan' must be a positive number"),
    ],
)
def test_a_vms_csv_of_another_shape_is_refused(text, said):
    with pytest.raises(price_files.SourceError, match=re.escape(said)):
        price_files.read_catalog("aws", text, "v")


def test_a_vms_csv_passes_blank_lines_and_prices_a_zoneless_row_at_its_region():
    text = f"{AWS_HEADER}\n\ng5.xlarge,1.0,0.5,us-east-1,\ng5.xlarge,1.0,,us-east-1,use1-az2\n"
    assert price_files.read_catalog("aws", text, "v") == ({"us-east-1": {"g5.xlarge": {"onDemand": 1.0, "spot": {"us-east-1": 0.5}}}}, {})
    gcp = "InstanceType,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,Price,SpotPrice\n,,,us-central1,us-central1-a,1.0,\n"
    with pytest.raises(price_files.SourceError, match="line 2: InstanceType is empty and so is AcceleratorName"):
        price_files.read_catalog("gcp", gcp, "v")
    found, _ = price_files.read_catalog("gcp", gcp.replace(",,,", ",L4,2.0,"), "v")
    assert found == {"us-central1": {"accelerator:L4:2": {"onDemand": 1.0, "spot": {}}}}


def test_an_offer_file_without_a_date_or_with_other_than_one_hourly_price_is_refused():
    offer = _offer()
    del offer["publicationDate"]
    with pytest.raises(price_files.SourceError, match="index.json: publicationDate is missing"):
        price_files.read_offer(offer, "index.json")
    offer = _offer()
    [(sku, terms)] = [(s, t) for s, t in offer["terms"]["OnDemand"].items() if s in _linux_shared(offer)]
    [term] = terms.values()
    [dimension] = term["priceDimensions"].values()
    term["priceDimensions"]["second"] = dict(dimension)
    with pytest.raises(price_files.SourceError, match=rf"index.json: product {sku} \(c4.large\): 2 hourly on-demand price dimensions"):
        price_files.read_offer(offer, "index.json")
    term["priceDimensions"]["second"]["unit"] = "Quantity"  # only hourly dimensions count
    assert price_files.read_offer(offer, "index.json")[1] == {"c4.large": 0.1}
    del offer["terms"]["OnDemand"][sku]
    with pytest.raises(price_files.SourceError, match="0 hourly on-demand price dimensions"):
        price_files.read_offer(offer, "index.json")


def _linux_shared(offer: dict) -> list[str]:
    return [
        sku
        for sku, p in offer["products"].items()
        if p["attributes"].get("tenancy") == "Shared" and p["attributes"].get("operatingSystem") == "Linux"
    ]


def test_an_offer_product_of_another_family_is_passed_over():
    offer = _offer()
    for product in offer["products"].values():
        product["productFamily"] = "Dedicated Host"
    assert price_files.read_offer(offer, "index.json")[1] == {}


def _table(*regions: str, stamp: str = "2026-07-20T13:44:30Z") -> str:
    """A Karpenter table as hack/code/prices_gen lays it out: one block per region, `},` closing each."""
    blocks = "".join(f'\t"{r}": {{\n\t\t// g5 family\n{body}\t}},\n' for r, body in zip(regions[::2], regions[1::2], strict=True))
    return f"package pricing\n\n// generated at {stamp} for us-east-1\n\nvar P = map[string]map[string]float64{{\n{blocks}}}\n"


G5 = '\t\t"g5.xlarge": 1.006000,\n'


def test_a_karpenter_table_with_an_empty_region_beside_a_priced_one_is_read():
    assert price_files.read_karpenter(_table("us-east-1", G5, "us-west-2", ""), "t") == (
        datetime.date(2026, 7, 20),
        {"us-east-1": {"g5.xlarge": 1.006}, "us-west-2": {}},
    )
    assert price_files.read_karpenter(_table("us-east-1", G5, stamp="2026-07-20T"), "t")[0] == datetime.date(
        2026, 7, 20
    )  # the day is what is read


@pytest.mark.parametrize(
    "table, said",
    [
        (_table("us-east-1", ""), "t: no region's prices: the table maps region -> instance type -> price"),
        (_table("us-east-1", G5, stamp="2026-07-20"), "t: generated at '2026-07-20' is not a time (YYYY-MM-DDThh:mm:ssZ)"),
        (_table("us-east-1", G5, stamp="x" * 50), f"t: generated at {'x' * 40!r} is not a time"),
        (_table("us-east-1", G5 + "\t\t" + "x" * 100 + "\n"), f"t: line 9: {'x' * 80!r} is not a row of"),
        (_table("us-east-1", G5 + G5), "t: line 9: g5.xlarge is priced twice in us-east-1"),
    ],
)
def test_a_karpenter_table_is_refused_naming_its_line(table, said):
    with pytest.raises(price_files.SourceError, match=re.escape(said)):
        price_files.read_karpenter(table, "t")


def test_the_gcp_file_s_timestamp_is_any_positive_unix_time_and_a_long_one_is_cut_in_the_message():
    assert price_files.read_cyclenerd({"about": {"timestamp": 1}, "compute": {"instance": {}}}, "p") == (datetime.date(1970, 1, 1), {})
    with pytest.raises(price_files.SourceError, match=re.escape(f"p: about.timestamp {'9' * 40!r} is not a Unix time")):
        price_files.read_cyclenerd({"about": {"timestamp": "9" * 50}, "compute": {"instance": {}}}, "p")


def test_a_gpu_count_the_catalog_disagrees_with_is_refused_after_rows_of_no_gpu():
    a2 = catalog.curated_facts()["gke"]["machineTypes"]["a2-highgpu-1g"]
    with pytest.raises(price_files.SourceError, match="a2-highgpu-1g: a100: 9 GPUs, where the catalog's a2-highgpu-1g has"):
        price_files.gpus_by_exact_name({"r": {"e2-standard-4": {}, "a2-highgpu-1g": {"gpus": ("a100", a2["count"] + 8)}}}, "p")


def test_an_offer_file_reads_past_the_products_it_passes_over():
    offer = _offer()
    first = {"productFamily": "Dedicated Host", "attributes": {}}
    offer["products"] = {"OTHER": first, **offer["products"]}
    assert price_files.read_offer(offer, "index.json")[1] == {"c4.large": 0.1}
    [sku] = _linux_shared(offer)
    for term in offer["terms"]["OnDemand"][sku].values():
        for dimension in term["priceDimensions"].values():
            del dimension["pricePerUnit"]["USD"]
    with pytest.raises(price_files.SourceError, match=rf"index.json: product {sku} \(c4.large\): pricePerUnit.USD is missing"):
        price_files.read_offer(offer, "index.json")


def test_a_vms_csv_row_without_a_price_is_refused_unless_asked_to_record_it():
    text = f"{AWS_HEADER}\ng5.xlarge,,0.5,us-east-1,use1-az1\n"
    with pytest.raises(price_files.SourceError, match="v: line 2: Price is missing"):
        price_files.read_catalog("aws", text, "v")
    assert price_files.read_catalog("aws", text, "v", allow_unpriced=True) == ({}, {"us-east-1": ["g5.xlarge"]})


def test_a_long_date_is_cut_in_the_message():
    with pytest.raises(price_files.SourceError, match=re.escape(f"d {'2' * 40!r} is not a date")):
        price_files.day("2" * 50, "d")


# --- the generator's command line and defaults (generate/prices.py) ----------------------------------


def test_the_generator_s_command_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as asked:
        generator.main(["--help"])
    assert asked.value.code == 0 and generator.__doc__.splitlines()[0] in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit) as refused:
        generator.main([])  # one of --from, --live, --coverage is required: none is never a download
    assert refused.value.code == 2
    capsys.readouterr()
    assert generator.main(["--coverage"]) == 0 and capsys.readouterr().out == generator.coverage_table()
    assert generator.main(["--from", str(SOURCES), "--aws-offer"]) == 2
    assert "--aws-offer downloads AWS's price list: it goes with --live" in capsys.readouterr().err
    stale = tmp_path / "prices.json"
    stale.write_text("{}\n")
    assert generator.main(["--from", str(SOURCES), "--check", "--out", str(stale)]) == 1
    err = capsys.readouterr().err
    assert f"{stale} is stale against its sources" in err
    assert "cross-check: gcp us-central1 a3-highgpu-8g: kept google-cloud-pricing-cost-calculator" in err


def test_build_keeps_the_licensed_row_of_a_disagreement_unless_strict():
    texts, provenance = generator._read_dir(SOURCES)
    assert generator.build(texts, provenance)["generated"]["crossCheck"]
    with pytest.raises(generator.SourceError, match=r"refused \(--strict\)"):
        generator.build(texts, provenance, strict=True)


@pytest.mark.parametrize(
    "a, b, apart", [(100.0, 105.0, False), (105.0, 100.0, False), (100.0, 104.0, False), (100.0, 105.2, True), (105.2, 100.0, True)]
)
def test_two_prices_disagree_when_more_than_5_percent_of_the_lower_apart(a, b, apart):
    assert generator._disagree(a, b) is apart
