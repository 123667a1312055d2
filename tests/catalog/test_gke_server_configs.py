"""The recorded GKE getServerConfig responses (data/gke_server_config): each named in the index with
its location, date and source, and read as the API returned it (versions as strings)."""

from __future__ import annotations

import pytest
import yaml

from gpufleet.catalog.gke_server_configs import FOLDER, SnapshotError, _checked, server_configs


def test_every_recorded_response_is_indexed_dated_sourced_and_described():
    index = yaml.safe_load((FOLDER / "index.yaml").read_text())
    files = sorted(p.name for p in FOLDER.iterdir() if p.name not in ("index.yaml", "SOURCE.md"))
    assert sorted(e["file"] for e in index) == files
    described = (FOLDER / "SOURCE.md").read_text()
    for entry in index:
        assert entry["source"].startswith("https://github.com/") and entry["source"] in described
        assert f"`{entry['file']}` | {entry['location']} | {entry['recorded']} |" in described
    assert set(server_configs()) == {e["location"] for e in index}


def test_a_version_yaml_reads_as_a_number_is_refused():
    with pytest.raises(SnapshotError, match=r"versions \[1.1\] are not strings"):
        _checked(yaml.safe_load("validMasterVersions:\n- 1.10\n"), "x.yaml")
