"""gcp:container/getEngineVersions answered offline: the provider's own computation
(data_source_google_container_engine_versions.go) over real getServerConfig responses, for the
location the provider would ask about, and said to be of the day it was recorded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from gpufleet.catalog import tokens
from gpufleet.catalog.gke_server_configs import server_configs
from gpufleet.engine.answers import OfflineAnswers, UnansweredCall, provider_location
from gpufleet.engine.gcp_functions import engine_versions
from gpufleet.engine.monitor import Monitor
from gpufleet.engine.runtime import moto_snapshot

FIXTURE = Path(__file__).parents[1] / "fixtures" / "gke_server_config" / "KubernetesVersions.md"


def _projections() -> list[dict]:
    """The two us-east1-b projections the fixture prints (SOURCE.md beside it), each read alone."""
    blocks = re.findall(r"Fetching server config for us-east1-b\n(.*?)\n```", FIXTURE.read_text(), re.S)
    return [yaml.safe_load(block) for block in blocks]


US_WEST1_A = server_configs()["us-west1-a"].response


def test_the_prefix_keeps_the_api_order_and_the_latest_is_the_first_kept():
    answer = engine_versions(US_WEST1_A, "1.7.")
    assert answer["validMasterVersions"] == ["1.7.9-gke.0", "1.7.8-gke.0"]
    assert answer["validNodeVersions"] == ["1.7.9-gke.0", "1.7.8-gke.0", "1.7.8", "1.7.6", "1.7.5"]
    assert answer["latestMasterVersion"] == answer["latestNodeVersion"] == "1.7.9-gke.0"


def test_without_a_prefix_the_latest_is_the_newest_the_api_lists():
    answer = engine_versions(US_WEST1_A, "")
    assert answer["latestMasterVersion"] == "1.8.1-gke.1" and answer["latestNodeVersion"] == "1.8.1-gke.1"
    assert answer["validNodeVersions"][-1] == "1.5.7" and len(answer["validMasterVersions"]) == 4


def test_the_prefix_is_a_string_prefix_not_a_version_one():
    # strings.HasPrefix: "1.6.1" keeps 1.6.11 and 1.6.10, not only 1.6.1.
    answer = engine_versions(US_WEST1_A, "1.6.1")
    assert answer["validMasterVersions"] == ["1.6.11-gke.0"]
    assert answer["validNodeVersions"] == ["1.6.11-gke.0", "1.6.11", "1.6.10"]


def test_the_default_version_is_not_filtered_and_no_match_sets_no_latest():
    answer = engine_versions(US_WEST1_A, "1.9.")
    assert answer["validMasterVersions"] == answer["validNodeVersions"] == []
    assert "latestMasterVersion" not in answer and "latestNodeVersion" not in answer
    assert answer["defaultClusterVersion"] == "1.7.8-gke.0"


def test_a_response_without_channels_gives_empty_channel_maps():
    answer = engine_versions(US_WEST1_A, "")
    assert answer["releaseChannelDefaultVersion"] == answer["releaseChannelLatestVersion"] == {}
    assert answer["releaseChannelUpgradeTargetVersion"] == {}


def test_release_channels_give_their_default_and_their_first_version_with_the_prefix():
    masters, channels = _projections()
    assert engine_versions(masters, "1.23.15")["validMasterVersions"] == ["1.23.15-gke.1900", "1.23.15-gke.1400"]
    every = engine_versions(channels, "")
    assert every["releaseChannelDefaultVersion"] == {"RAPID": "1.25.6-gke.200", "REGULAR": "1.24.9-gke.2000", "STABLE": "1.23.14-gke.1800"}
    assert every["releaseChannelLatestVersion"] == {"RAPID": "1.26.1-gke.200", "REGULAR": "1.25.5-gke.2000", "STABLE": "1.24.9-gke.1500"}
    # The response has no upgradeTargetVersion: the provider sets Go's zero value for each channel.
    assert every["releaseChannelUpgradeTargetVersion"] == {"RAPID": "", "REGULAR": "", "STABLE": ""}
    on_125 = engine_versions(channels, "1.25.")
    assert on_125["releaseChannelLatestVersion"] == {"RAPID": "1.25.6-gke.1000", "REGULAR": "1.25.5-gke.2000"}  # STABLE has none
    assert on_125["releaseChannelDefaultVersion"] == every["releaseChannelDefaultVersion"]  # not filtered


ANSWERS = OfflineAnswers(moto_snapshot())


def test_the_call_s_location_comes_before_the_provider_s_and_a_self_link_names_its_last_segment():
    args = {"location": "projects/p/locations/us-east1-d", "versionPrefix": "1.10."}
    answer, note = ANSWERS.answer_noted(tokens.GET_ENGINE_VERSIONS, args, "us-west1-a")
    assert answer["latestMasterVersion"] == "1.10.7-gke.2" and answer["defaultClusterVersion"] == "1.9.7-gke.6"
    assert answer["location"] == args["location"] and answer["versionPrefix"] == "1.10."  # read back as given
    assert "in us-east1-d as its getServerConfig answered on 2018-09-19 (https://github.com/kubeflow/kubeflow/issues/1572)" in note
    assert "a real account gets the versions GKE offers today" in note


def test_a_location_without_a_recorded_response_is_unanswered_naming_those_recorded():
    with pytest.raises(
        UnansweredCall, match=r"no recorded getServerConfig response for us-central1 \(recorded: .*us-west1-a \(2017-11-08\)"
    ):
        ANSWERS.answer_noted(tokens.GET_ENGINE_VERSIONS, {}, "us-central1")
    with pytest.raises(UnansweredCall, match="no location"):
        ANSWERS.answer_noted(tokens.GET_ENGINE_VERSIONS, {}, "")


def test_google_s_provider_looks_in_its_region_then_its_zone():
    assert provider_location("gcp", {"region": "us-east1", "zone": "us-west1-a"}) == "us-east1"
    assert provider_location("gcp", {"zone": "us-west1-a"}) == "us-west1-a"
    assert provider_location("gcp", {}) == ""
    assert provider_location("aws", {}) is None and provider_location("aws", {"region": "eu-west-1"}) == "eu-west-1"


def test_a_call_without_a_provider_looks_where_the_stack_config_puts_the_default_provider():
    config = {"gcp:zone": "us-west1-a", "aws:region": "eu-west-1"}
    monitor = Monitor("p", "s", ANSWERS, "eu-west-1", None, config=config)
    assert monitor._region_of("", tokens.GET_ENGINE_VERSIONS) == "us-west1-a"
    assert monitor._region_of("", tokens.GET_AVAILABILITY_ZONES) == "eu-west-1"
