"""Regenerate the price snapshot, `data/prices.json`, from its sources.

    python -m gpufleet.catalog.generate.prices --from tests/fixtures/prices
    python -m gpufleet.catalog.generate.prices --from tests/fixtures/prices --check
    python -m gpufleet.catalog.generate.prices --from tests/fixtures/prices --strict
    python -m gpufleet.catalog.generate.prices --live [--aws-offer]

Sources (SOURCES below; `provenance.json` in the folder names each one's repository, path, commit,
licence and the day it was read; the date of its prices is read from the file itself):
- aws/karpenter-provider-aws `pkg/providers/pricing/zz_generated.pricing_aws.go` (Apache-2.0): AWS
  on-demand prices of every type in us-east-1, dated by its `// generated at` stamp.
- Cyclenerd/google-cloud-pricing-cost-calculator `pricing.yml` (Apache-2.0): GCP on-demand and spot
  prices of every machine type in every region, the GPUs included, dated by its `about.timestamp`.
  Kept: the GPU machine types and the E2 family (system pools).
- skypilot-org/skypilot-catalog `catalogs/v8/<cloud>/vms.csv` (no licence found, no date in the
  files): on-demand `Price` and `SpotPrice` per type, region and zone. Its rows are kept only where no
  licensed source prices the row, and are labelled so.
- AWS's public bulk price list (`--aws-offer`, no credentials): each region's `index.json`; its
  Linux, shared-tenancy, no-licence on-demand price replaces the others' for AWS.

Two sources pricing the same row more than 5 % apart are reported and recorded (`crossCheck`): the
row of the licensed source is kept, with the reason; `--strict` refuses instead, and so does any
disagreement no licence decides.

Every row is checked: one of the wrong shape, or with a missing, zero, negative or unreadable price,
stops the run (exit 2) naming the file, the line, the field, the value and the rule; so does a file
that is not UTF-8, JSON nested past MAX_DEPTH, a CSV cell past the csv module's field limit, or a date
not in the YYYY-MM-DD form. A type the source lists with no on-demand price at all (a Capacity-Block-
only type such as p5e.48xlarge) is refused too, unless `--allow-unpriced`, which records it under
`unpriced` instead: never dropped, never 0.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from gpufleet.catalog import catalog
from gpufleet.catalog import prices as price_catalog
from gpufleet.catalog.catalog import curated_facts
from gpufleet.catalog.generate.price_fetch import download, offer_record
from gpufleet.catalog.generate.price_files import (
    SourceError,
    cyclenerd_listing,
    day,
    gpus_by_exact_name,
    parse_yaml,
    read_catalog,
    read_cyclenerd,
    read_json,
    read_karpenter,
    read_offer,
    utf8,
)
from gpufleet.catalog.prices import CLOUDS, DISAGREEMENT, PRICES_FILE, accelerator_key

REGENERATE = "python -m gpufleet.catalog.generate.prices"
OFFER_URL = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.json"


@dataclass(frozen=True)
class Source:
    """One price file the generator reads: its id in provenance.json and the snapshot, its cloud, its
    format, where it lies under --from, its repository and path, where --live downloads it, and its
    licence as read (None: none found) with where it was read."""

    id: str
    cloud: str
    kind: Literal["skypilot", "karpenter", "cyclenerd"]
    file: str
    repository: str
    path: str
    url: str
    licence: str | None
    licence_read: str


_SKYPILOT_LICENCE = (
    "no LICENSE file in any indexed version of skypilot-org/skypilot-catalog, and its README names none "
    "(issue 55); SkyPilot's own Apache-2.0 is the code's, not shown to cover this repository"
)
SOURCES = (
    Source(
        "karpenter-provider-aws",
        "aws",
        "karpenter",
        "third_party/karpenter-provider-aws/zz_generated.pricing_aws.go",
        "aws/karpenter-provider-aws",
        "pkg/providers/pricing/zz_generated.pricing_aws.go",
        "https://raw.githubusercontent.com/aws/karpenter-provider-aws/main/pkg/providers/pricing/zz_generated.pricing_aws.go",
        "Apache-2.0",
        "the repository's LICENSE at 6fc13b52 (Apache License 2.0, as at v1.14.1) and the file's own header",
    ),
    Source(
        "google-cloud-pricing-cost-calculator",
        "gcp",
        "cyclenerd",
        "third_party/google-cloud-pricing-cost-calculator/pricing.yml.gz",
        "Cyclenerd/google-cloud-pricing-cost-calculator",
        "pricing.yml",
        "https://raw.githubusercontent.com/Cyclenerd/google-cloud-pricing-cost-calculator/master/pricing.yml",
        "Apache-2.0",
        'the repository\'s LICENSE (Apache License 2.0), README "License" (all files Apache-2.0; portions based on '
        "Google's work under CC-BY-4.0) and the file's own about.copyright",
    ),
    *(
        Source(
            f"skypilot-catalog-{cloud}",
            cloud,
            "skypilot",
            f"skypilot-catalog/{cloud}-vms.csv",
            "skypilot-org/skypilot-catalog",
            f"catalogs/v8/{cloud}/vms.csv",
            f"https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{cloud}/vms.csv",
            None,
            _SKYPILOT_LICENCE,
        )
        for cloud in CLOUDS
    ),
)

# The columns each cloud's file must have (v8 schema); others are read past.

# --- provenance ----------------------------------------------------------------------------------


def provenance_record(provenance: dict, source: Source) -> dict:
    """The source's record: its repository, path and licence (None: none found, and why), the commit its
    file was read at and the day it was read (provenance.json)."""
    entry = provenance.get(source.id)
    where = f"provenance.json: {source.id}"
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("commit", "read")):
        raise SourceError(f"{where} needs commit and read (the day its file was read, YYYY-MM-DD)")
    day(entry["read"], f"{where}.read")
    return {
        "repository": entry.get("repository") if isinstance(entry.get("repository"), str) else source.repository,
        "path": source.path,
        "commit": entry["commit"],
        "read": entry["read"],
        "licence": source.licence,
        "licenceRead": source.licence_read,
    }


# --- the snapshot ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One source's on-demand price of a row, and how the source formed it."""

    source: str
    on_demand: float
    formed: str


def _licensed(sources: dict, candidate: Candidate) -> bool:
    return sources[candidate.source]["licence"] is not None


def _disagree(a: float, b: float) -> bool:
    return abs(a - b) > DISAGREEMENT * min(a, b) + 1e-9  # exactly 5 % apart is not more than 5 %


def cross_check(key: tuple[str, str, str], candidates: list[Candidate], sources: dict, strict: bool) -> tuple[Candidate, dict | None]:
    """The candidate kept for one row, and the disagreement record when two are more than 5 % apart."""
    licensed = [c for c in candidates if _licensed(sources, c)]
    kept = (licensed or candidates)[0]
    apart = [c for c in candidates if c is not kept and _disagree(c.on_demand, kept.on_demand)]
    if not apart:
        return kept, None
    cloud, region, name = key
    said = ", ".join(f"{c.source} {c.on_demand:g} ({c.formed})" for c in [kept, *apart])
    where = f"{cloud} {region} {name}: on-demand prices more than {DISAGREEMENT:.0%} apart: {said}"
    if strict:
        raise SourceError(f"{where}: refused (--strict)")
    if not licensed or any(_licensed(sources, c) for c in apart):
        raise SourceError(f"{where}: no licence decides between them: refused")
    dropped = apart[0]
    return kept, {
        "cloud": cloud,
        "region": region,
        "instanceType": name,
        "kept": {"source": kept.source, "onDemand": kept.on_demand, "formed": kept.formed},
        "dropped": [{"source": c.source, "onDemand": c.on_demand, "formed": c.formed} for c in apart],
        "reason": f"kept {kept.source}: its licence ({sources[kept.source]['licence']}) is verified; {dropped.source} has no licence found",
    }


def _skypilot_gcp_machine(rows: dict[str, dict], name: str) -> Candidate | None:
    """What the old snapshot charged for a GCP machine type: its host row plus the attached-GPU row of
    the catalog's GPU name and count (curated gke.priceNames), the row picked by its exact key."""
    gke = curated_facts()["gke"]
    host = rows.get(name)
    machine = gke["machineTypes"].get(name)
    if host is None:
        return None
    if machine is None:
        return Candidate("skypilot-catalog-gcp", host["onDemand"], "the host row")
    gpu = gke["priceNames"].get(machine["accelerator"], machine["accelerator"])
    attached = rows.get(accelerator_key(gpu, machine["count"]))
    if attached is None:
        return None
    total = round(host["onDemand"] + attached["onDemand"], 6)
    return Candidate(
        "skypilot-catalog-gcp",
        total,
        f"host row {host['onDemand']:g} + attached-GPU row {gpu} x{machine['count']} {attached['onDemand']:g}",
    )


def _row(candidate: Candidate, spot: dict[str, float], spot_source: str | None, gpus_included: bool) -> dict:
    row: dict = {"onDemand": candidate.on_demand, "source": candidate.source, "spot": spot}
    if spot and spot_source:
        row["spotSource"] = spot_source
    if gpus_included:
        row["gpusIncluded"] = True
    return row


@dataclass(frozen=True)
class Read:
    """Every source's rows as read, before the cross-check."""

    karpenter: dict[str, dict[str, float]]
    cyclenerd: dict[str, dict[str, dict]]
    skypilot: dict[str, dict]
    unpriced: dict[str, dict]
    dates: dict[str, datetime.date]
    listings: dict[str, dict]  # source id -> what it lists (cyclenerd_listing), which coverage counts against


def _read_all(texts: dict[str, tuple[object, str]], allow_unpriced: bool) -> Read:
    karpenter: dict = {}
    cyclenerd: dict = {}
    skypilot: dict = {}
    unpriced: dict = {}
    dates: dict[str, datetime.date] = {}
    listings: dict[str, dict] = {}
    for source in SOURCES:
        content, label = texts[source.id]
        if source.kind == "karpenter":
            dates[source.id], karpenter = read_karpenter(cast(str, content), label)
        elif source.kind == "cyclenerd":
            dates[source.id], cyclenerd = read_cyclenerd(content, label)
            gpus_by_exact_name(cyclenerd, label)
            listings[source.id] = cyclenerd_listing(cast(dict, content), cyclenerd)
        else:
            skypilot[source.cloud], found = read_catalog(source.cloud, cast(str, content), label, allow_unpriced)
            if found:
                unpriced[source.cloud] = found
    return Read(karpenter, cyclenerd, skypilot, unpriced, dates, listings)


def _aws(read: Read, sources: dict, strict: bool, checks: list[dict]) -> dict:
    out: dict[str, dict] = {}
    regions = set(read.karpenter) | set(read.skypilot["aws"])
    for region in sorted(regions):
        table, sky = read.karpenter.get(region, {}), read.skypilot["aws"].get(region, {})
        for name in sorted(set(table) | set(sky)):
            candidates = [Candidate("karpenter-provider-aws", table[name], "its table's price")] if name in table else []
            if name in sky:
                candidates.append(Candidate("skypilot-catalog-aws", sky[name]["onDemand"], "its row's Price"))
            kept, check = cross_check(("aws", region, name), candidates, sources, strict)
            if check:
                checks.append(check)
            spot = sky.get(name, {}).get("spot", {})
            out.setdefault(region, {})[name] = _row(kept, spot, "skypilot-catalog-aws", False)
    return out


def _gcp(read: Read, sources: dict, strict: bool, checks: list[dict]) -> dict:
    out: dict[str, dict] = {}
    sky_all = read.skypilot["gcp"]
    for region in sorted(set(read.cyclenerd) | set(sky_all)):
        whole, sky = read.cyclenerd.get(region, {}), sky_all.get(region, {})
        kept_sky = False
        for name in sorted(set(whole) | {n for n in sky if not n.startswith("accelerator:")}):
            candidates = []
            if name in whole:
                gpu = whole[name].get("gpus")
                formed = f"the machine type whole, its GPUs by their exact name {gpu[0]} x{gpu[1]}" if gpu else "the machine type whole"
                candidates.append(Candidate("google-cloud-pricing-cost-calculator", whole[name]["onDemand"], formed))
            old = _skypilot_gcp_machine(sky, name)
            if old is not None:
                candidates.append(old)
            if not candidates:
                continue
            kept, check = cross_check(("gcp", region, name), candidates, sources, strict)
            if check:
                checks.append(check)
            from_whole = kept.source == "google-cloud-pricing-cost-calculator"
            kept_sky = kept_sky or not from_whole
            spot = whole[name]["spot"] if from_whole else sky[name]["spot"]
            # A host-only row keeps its host price: its GPUs are the attached-GPU rows'.
            row = kept if from_whole else Candidate(kept.source, sky[name]["onDemand"], kept.formed)
            out.setdefault(region, {})[name] = _row(row, spot, kept.source, from_whole)
        if kept_sky:  # the attached-GPU rows price the host-only rows kept above, and nothing else
            for name in (n for n in sky if n.startswith("accelerator:")):
                out[region][name] = _row(
                    Candidate("skypilot-catalog-gcp", sky[name]["onDemand"], ""), sky[name]["spot"], "skypilot-catalog-gcp", False
                )
    return out


def _azure(read: Read) -> dict:
    return {
        region: {
            name: _row(Candidate("skypilot-catalog-azure", q["onDemand"], ""), q["spot"], "skypilot-catalog-azure", False)
            for name, q in types.items()
        }
        for region, types in read.skypilot["azure"].items()
    }


def build(
    texts: dict[str, tuple[object, str]],
    provenance: dict,
    offers: dict[str, tuple[object, str]] | None = None,
    allow_unpriced: bool = False,
    strict: bool = False,
) -> dict:
    """The snapshot document from each source's (content, label) and their provenance: a CSV's or Go
    file's text, Cyclenerd's parsed YAML."""
    sources = {s.id: provenance_record(provenance, s) for s in SOURCES}
    read = _read_all(texts, allow_unpriced)
    for source_id, own in read.dates.items():
        sources[source_id]["date"] = own.isoformat()
    for source_id, listing in read.listings.items():
        sources[source_id]["listing"] = listing
    checks: list[dict] = []
    document: dict = {
        "generated": {"by": REGENERATE, "sources": sources, "crossCheck": checks},
        "unpriced": read.unpriced,
        "aws": _aws(read, sources, strict, checks),
        "gcp": _gcp(read, sources, strict, checks),
        "azure": _azure(read),
    }
    for region, (offer, label) in (offers or {}).items():
        published, prices = read_offer(offer, label)
        source_id = f"aws-price-list-{region}"
        for name, price in prices.items():
            if name in document["aws"].get(region, {}):
                document["aws"][region][name].update(onDemand=price, source=source_id)
        published_day = day(published[:10], f"{label}: publicationDate").isoformat()
        sources[source_id] = offer_record(OFFER_URL.format(region=region), "current", published_day, datetime.date.today().isoformat())
    return date_used(document)


def date_used(document: dict) -> dict:
    """Mark each source in use, and date the snapshot by the oldest of them, compared as dates."""
    sources = document["generated"]["sources"]
    used = {
        row[k]
        for cloud in CLOUDS
        for types in document[cloud].values()
        for row in types.values()
        for k in ("source", "spotSource")
        if k in row
    }
    for source_id in sources:
        sources[source_id]["used"] = source_id in used
    dated = [datetime.date.fromisoformat(s["date"]) for s in sources.values() if s["used"] and s.get("date")]
    document["generated"]["date"] = min(dated).isoformat() if dated else None
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


# --- reading files --------------------------------------------------------------------------------


def source_content(source: Source, data: bytes, label: str) -> object:
    if source.file.endswith(".gz") and data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise SourceError(f"{label}: not a gzip file ({e})") from None
    text = utf8(data, label)
    return parse_yaml(text, label) if source.kind == "cyclenerd" else text


def _read_dir(folder: Path) -> tuple[dict[str, tuple[object, str]], dict]:
    if not folder.is_dir():
        raise SourceError(f"--from {folder}: not a directory")
    texts: dict[str, tuple[object, str]] = {}
    for source in SOURCES:
        path = folder / source.file
        if not path.is_file():
            raise SourceError(
                f"--from {folder}: {source.file} is missing: the folder holds {', '.join(s.file for s in SOURCES)} and provenance.json"
            )
        texts[source.id] = (source_content(source, path.read_bytes(), str(path)), str(path))
    path = folder / "provenance.json"
    if not path.is_file():
        raise SourceError(
            f"--from {folder}: provenance.json is missing: it names each file's repository, path, commit, licence and the day it was read"
        )
    provenance = read_json(path.read_bytes(), str(path))
    if not isinstance(provenance, dict):
        raise SourceError(f"{path}: an object keyed by source is expected")
    return texts, provenance


def _live() -> tuple[dict[str, tuple[object, str]], dict]:
    today = datetime.date.today().isoformat()
    texts = {s.id: (source_content(s, download(s.url), s.url), s.url) for s in SOURCES}
    return texts, {s.id: {"commit": "the default branch's head", "read": today} for s in SOURCES}


def _of(row: dict) -> str:
    """What a coverage row's priced count is counted against."""
    if row["offered"] is None:
        return f"{row['of']} listed"
    if row["listed"] is None:
        return f"{row['of']} offered"
    return f"{row['of']} offered per the source" if row["listed"] else f"{row['of']} (a region the source does not list)"


def coverage_table(snapshot: price_catalog.PriceSnapshot | None = None, cat: catalog.Catalog | None = None) -> str:
    """A snapshot's coverage per cloud and region (the committed one's: docs/cost.md carries it), Markdown,
    then the catalog's GCP machine types that no source lists in any region."""
    snapshot, cat = snapshot or price_catalog.load_shipped(), cat or catalog.load()
    lines = ["| cloud | region | priced | of | sources (date) |", "|---|---|---|---|---|"]
    for row in price_catalog.coverage(snapshot, cat):
        sources = ", ".join(f"{s} ({d})" for s, d in row["sources"].items()) or "-"
        lines.append(f"| {row['cloud']} | {row['region']} | {row['priced']} | {_of(row)} | {sources} |")
    unlisted = price_catalog.unlisted_machine_types(snapshot, cat)
    if unlisted:
        lines += [
            "",
            f"GCP machine types of the catalog that no source lists in any region, so unpriced everywhere: {', '.join(unlisted)}.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.splitlines()[0])
    origin = parser.add_mutually_exclusive_group(required=True)
    origin.add_argument("--from", dest="folder", type=Path, help="a folder of the recorded source files and their provenance.json")
    origin.add_argument("--live", action="store_true", help="download each source's current file")
    origin.add_argument("--coverage", action="store_true", help="print the committed snapshot's coverage per cloud and region")
    parser.add_argument("--aws-offer", action="store_true", help="with --live: take AWS on-demand prices from AWS's bulk price list")
    parser.add_argument(
        "--allow-unpriced", action="store_true", help="record types listed without an on-demand price as unpriced instead of refusing them"
    )
    parser.add_argument("--strict", action="store_true", help="refuse any row two sources price more than 5 %% apart")
    parser.add_argument("--out", type=Path, default=PRICES_FILE, help="where to write the snapshot")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the snapshot differs")
    args = parser.parse_args(argv)
    if args.coverage:
        print(coverage_table(), end="")
        return 0
    try:
        texts, provenance = _read_dir(args.folder) if args.folder is not None else _live()
        if args.aws_offer and not args.live:
            raise SourceError("--aws-offer downloads AWS's price list: it goes with --live")
        document = build(texts, provenance, None, args.allow_unpriced, args.strict)
        if args.aws_offer:
            urls = {r: OFFER_URL.format(region=r) for r in sorted(document["aws"])}
            offers = {r: (read_json(download(url), url), url) for r, url in urls.items()}
            document = build(texts, provenance, offers, args.allow_unpriced, args.strict)
    except SourceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for check in document["generated"]["crossCheck"]:
        print(f"cross-check: {check['cloud']} {check['region']} {check['instanceType']}: {check['reason']}", file=sys.stderr)
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
