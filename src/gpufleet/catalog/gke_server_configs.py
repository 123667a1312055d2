"""GKE getServerConfig responses as recorded on a known day for a known location
(data/gke_server_config/SOURCE.md): the versions GKE offered there and then, never today's."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass

import yaml

from gpufleet.catalog.catalog import DATA
from gpufleet.errors import GpufleetError

FOLDER = DATA / "gke_server_config"

# The ServerConfig fields that hold versions (GKE API v1, projects.locations.getServerConfig).
_VERSION_LISTS = ("validMasterVersions", "validNodeVersions")


@dataclass(frozen=True)
class ServerConfigSnapshot:
    location: str
    recorded: str  # ISO date the response was recorded on
    source: str  # where it was published
    response: Mapping  # the ServerConfig, as the API returned it


class SnapshotError(GpufleetError, ValueError):
    """A recorded response that is not a ServerConfig (a version YAML read as a number, a field missing)."""


def _checked(response: object, name: str) -> Mapping:
    if not isinstance(response, dict):
        raise SnapshotError(f"{name}: {type(response).__name__}, not a ServerConfig object")
    versions = [response.get("defaultClusterVersion", "")]
    versions += [v for field in _VERSION_LISTS for v in response.get(field, [])]
    for channel in response.get("channels", []):
        versions += [channel.get("defaultVersion", ""), channel.get("upgradeTargetVersion", ""), *channel.get("validVersions", [])]
    wrong = [v for v in versions if not isinstance(v, str)]
    if wrong:
        raise SnapshotError(f"{name}: versions {wrong} are not strings")
    return response


@functools.cache
def server_configs() -> dict[str, ServerConfigSnapshot]:
    """Per location, its recorded response (index.yaml names each file's location, date and source)."""
    found = {}
    for entry in yaml.safe_load((FOLDER / "index.yaml").read_text()):
        text = (FOLDER / entry["file"]).read_text()
        response = json.loads(text) if entry["file"].endswith(".json") else yaml.safe_load(text)
        found[entry["location"]] = ServerConfigSnapshot(
            entry["location"], entry["recorded"], entry["source"], _checked(response, entry["file"])
        )
    return found
