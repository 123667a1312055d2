"""The price snapshot and its generator (src/gpufleet/catalog/generate/prices.py), against the recorded
slices of each source (tests/fixtures/prices, SOURCE.md there): the committed snapshot is what the
slices give, each cloud's rows read in their own shape, and a row of the wrong shape or with a missing,
zero or negative price stops the run (exit 2) naming the file, line, field and value."""

from __future__ import annotations

import ast
import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from gpufleet.catalog import prices
from gpufleet.catalog.generate import prices as generator

ROOT = Path(__file__).resolve().parents[2]
SLICES = ROOT / "tests" / "fixtures" / "prices" / "skypilot-catalog"
OFFER = ROOT / "tests" / "fixtures" / "prices" / "third_party" / "aws-offer" / "lyft-awspricing-tests-data-ec2_offer.py"
ANOMALIES = ROOT / "tests" / "fixtures" / "prices" / "aws-anomaly-rows.csv"


def _rows(cloud: str) -> list[dict]:
    with (SLICES / f"{cloud}-vms.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_the_committed_snapshot_is_what_the_recorded_slices_give(capsys):
    assert generator.main(["--from", str(SLICES), "--check"]) == 0
    snapshot = prices.load()
    assert snapshot.date == "2026-11-26"
    assert snapshot.sources["aws"]["commit"].startswith("e385a0d3")


def test_aws_rows_give_the_regional_price_and_each_zone_s_spot_price():
    rows = [r for r in _rows("aws") if r["InstanceType"] == "p5.48xlarge" and r["Region"] == "us-east-1"]
    quote = prices.load().quote("aws", "us-east-1", "p5.48xlarge")
    assert quote.on_demand == float(rows[0]["Price"]) == 55.04
    assert quote.spot == {r["AvailabilityZone"]: float(r["SpotPrice"]) for r in rows}


def test_gcp_attached_gpus_are_rows_of_their_own():
    rows = _rows("gcp")
    a100 = [r for r in rows if r["InstanceType"] == "" and r["AcceleratorName"] == "A100" and r["AcceleratorCount"] == "2"]
    quote = prices.load().quote("gcp", "us-central1", prices.accelerator_key("A100", 2))
    assert quote.on_demand == float(a100[0]["Price"])
    assert prices.load().quote("gcp", "us-central1", "a2-highgpu-2g").on_demand == 1.47895


def test_azure_rows_have_no_zone_and_a_quoted_generation():
    quote = prices.load().quote("azure", "eastus", "Standard_NC16as_T4_v3")
    assert quote.on_demand == 1.204 and quote.spot == {"eastus": 0.143517}


def _folder(tmp_path: Path, cloud: str, transform) -> Path:
    folder = tmp_path / "slices"
    shutil.copytree(SLICES, folder)
    path = folder / f"{cloud}-vms.csv"
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


def test_provenance_is_required_and_dated(tmp_path, capsys):
    folder = _folder(tmp_path, "aws", lambda text: text)
    provenance = json.loads((folder / "provenance.json").read_text())
    provenance["gcp"]["read"] = "last week"
    (folder / "provenance.json").write_text(json.dumps(provenance))
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert "gcp.read 'last week' is not a date" in capsys.readouterr().err


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


def test_the_offer_replaces_the_catalog_s_on_demand_price_of_the_types_it_holds():
    catalogs = {c: ((SLICES / f"{c}-vms.csv").read_text(), c) for c in prices.CLOUDS}
    provenance = json.loads((SLICES / "provenance.json").read_text())
    offer = _offer()
    for product in offer["products"].values():
        product["attributes"]["instanceType"] = "m6i.large"
    document = generator.build(catalogs, provenance, {"us-east-1": (offer, "index.json")})
    assert document["aws"]["us-east-1"]["m6i.large"]["onDemand"] == 0.1
    assert document["aws"]["us-west-2"]["m6i.large"]["onDemand"] == 0.096
    assert document["generated"]["sources"]["awsOnDemand"]["us-east-1"]["publicationDate"] == "2019-03-29T04:06:54Z"


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
    assert "provenance.json: an object keyed by cloud is expected" in capsys.readouterr().err
    (folder / "provenance.json").unlink()
    assert generator.main(["--from", str(folder), "--out", str(tmp_path / "p.json")]) == 2
    assert "provenance.json is missing" in capsys.readouterr().err
