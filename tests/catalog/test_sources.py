"""Every source the curated facts cite has an address a reader can open: the citation carries one
(a URL, a host path, a repository with a path and a commit), or names a source docs/sources.md
gives one for."""

from __future__ import annotations

import re

from gpufleet.catalog.catalog import curated_facts
from tests.conftest import ROOT

# A URL, a host path (docs.aws.amazon.com/..., cloud.google.com/...), or owner/repo path @commit.
ADDRESS = re.compile(
    r"https?://|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|io|net|dev|cn)/|\b[\w-]+/[\w.-]+ [\w/.-]+ @[0-9a-f]{6,}|github\.com"
)
SOURCES = ROOT / "docs" / "sources.md"


def _citations(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and (key == "source" or key.endswith("Source")) and isinstance(item, str):
                yield f"{path}.{key}", item
            else:
                yield from _citations(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _citations(item, f"{path}[{i}]")


def _names() -> list[str]:
    """The names docs/sources.md gives an address for: the first cell of each table row."""
    names = []
    for line in SOURCES.read_text().splitlines():
        if line.startswith("| `") and "http" in line or line.startswith("| `gpufleet ("):
            names += re.findall(r"`([^`]+)`", line.split("|")[1])
    return names


def _names_one(text: str, names: list[str]) -> bool:
    """Does the citation name one of the sources (as a whole word: "5,000" is not document 000)?"""
    return any(re.search(rf"(?<![\w,.]){re.escape(n)}" + (r"(?!\w)" if n[-1].isalnum() else ""), text) for n in names)


def test_every_citation_of_the_curated_facts_has_an_address():
    names = _names()
    unopenable = [(where, text) for where, text in _citations(curated_facts()) if not ADDRESS.search(text) and not _names_one(text, names)]
    assert len(list(_citations(curated_facts()))) > 60
    assert unopenable == []


def test_each_name_in_sources_leads_somewhere():
    for line in SOURCES.read_text().splitlines():
        if line.startswith("| `"):
            assert "http" in line or "this repository" in line, line


def test_a_citation_by_title_alone_is_caught():
    names = _names()
    for text in ('ECS developer guide, "Working with GPUs" (Considerations)', "at most 5,000 container instances"):
        assert not ADDRESS.search(text) and not _names_one(text, names), text
    assert _names_one("000 (Considerations)", names) and _names_one('facts.md "EKS with EFA" (enums)', names)
