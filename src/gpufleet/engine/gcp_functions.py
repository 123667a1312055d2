"""Google provider functions computed from a recorded API response, as the provider computes them.

pulumi-gcp v8.41.1 is built on terraform-provider-google-beta at 6a9e0f0ba0f123402036a8b34ae4cc86163d2a27
(its `upstream` submodule, 6.49.2); the line numbers below are of that commit."""

from __future__ import annotations

from collections.abc import Mapping

# google-beta/services/container/data_source_google_container_engine_versions.go
ENGINE_VERSIONS_SOURCE = (
    "terraform-provider-google-beta@6a9e0f0b google-beta/services/container/data_source_google_container_engine_versions.go"
)


def engine_versions(response: Mapping, version_prefix: str) -> dict:
    """google_container_engine_versions' computed outputs from a getServerConfig response
    (dataSourceGoogleContainerEngineVersionsRead, lines 112-170). The prefix is a plain string
    prefix (strings.HasPrefix): "1.6.1" keeps 1.6.11 and 1.6.10 too. The lists keep the API's
    order, newest first, and the latest is the first kept (lines 130, 139), set only when one is
    kept. The id, the time of the read (line 172), has no offline value and is not answered."""
    masters = [v for v in response.get("validMasterVersions", []) if v.startswith(version_prefix)]  # lines 112-117
    nodes = [v for v in response.get("validNodeVersions", []) if v.startswith(version_prefix)]  # lines 119-124
    answer: dict = {
        "validMasterVersions": masters,
        "validNodeVersions": nodes,
        "defaultClusterVersion": response.get("defaultClusterVersion", ""),  # line 144, unfiltered
        "releaseChannelDefaultVersion": {},
        "releaseChannelLatestVersion": {},
        "releaseChannelUpgradeTargetVersion": {},
    }
    if masters:
        answer["latestMasterVersion"] = masters[0]
    if nodes:
        answer["latestNodeVersion"] = nodes[0]
    for channel in response.get("channels", []):  # lines 151-160
        name = channel.get("channel", "")
        # Unfiltered, and set even where the API gives none (Go's zero value, "").
        answer["releaseChannelDefaultVersion"][name] = channel.get("defaultVersion", "")
        answer["releaseChannelUpgradeTargetVersion"][name] = channel.get("upgradeTargetVersion", "")
        kept = [v for v in channel.get("validVersions", []) if v.startswith(version_prefix)]
        if kept:  # the first valid version with the prefix; a channel with none is left out
            answer["releaseChannelLatestVersion"][name] = kept[0]
    return answer
