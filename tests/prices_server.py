"""Recorded price responses served over HTTP on 127.0.0.1 (tests/fixtures/prices/recorded/, SOURCE.md
there): AWS's EC2 region index and a region's offer CSV, the Azure Retail Prices API's pages, the GCP
file. `with PriceServer() as server:` server.endpoints points `gpufleet prices update` at it;
server.failing maps a path to the HTTP status it answers instead; server.requests is what was asked."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import ParseResult, parse_qs

from gpufleet.catalog.generate.price_update import Endpoints
from tests.recorded_http import RecordedHttp

RECORDED = Path(__file__).resolve().parent / "fixtures" / "prices" / "recorded"
AZURE_HOST = "https://prices.azure.com"


class PriceServer(RecordedHttp):
    def __init__(self, failing: dict[str, int] | None = None):
        self.failing, self.requests = dict(failing or {}), list[str]()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def endpoints(self) -> Endpoints:
        return Endpoints(aws_pricing=self.base, azure=self.base, gcp=f"{self.base}/gcp/pricing.yml")

    def answer(self, url: ParseResult) -> tuple[int, object, str]:
        self.requests.append(url.geturl())
        status, body = self._answer(url.path, parse_qs(url.query))
        return status, body, "application/octet-stream"

    def _answer(self, path: str, query: dict) -> tuple[int, bytes]:
        if path in self.failing or "*" in self.failing:
            return self.failing.get(path, self.failing.get("*", 500)), b"recorded failure"
        if path == "/offers/v1.0/aws/AmazonEC2/current/region_index.json":
            return 200, (RECORDED / "aws" / "region_index.json").read_bytes()
        if path.startswith("/offers/v1.0/aws/AmazonEC2/20250912225308/") and path.endswith("/index.csv"):
            region = path.split("/")[-2]
            recorded = RECORDED / "aws" / f"{region}-index.csv"
            return (200, recorded.read_bytes()) if recorded.is_file() else (404, b"no such key")
        if path == "/api/retail/prices":
            page = "page-2.json" if query.get("$skip") == ["100"] else "page-1.json"
            # The recorded NextPageLink names Azure's host: served, it names this server.
            return 200, (RECORDED / "azure" / page).read_text().replace(AZURE_HOST, self.base).encode()
        if path == "/gcp/pricing.yml":
            return 200, (RECORDED / "gcp" / "pricing.yml").read_bytes()
        return 404, b"not recorded"
