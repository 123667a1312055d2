"""The offline engine answers provider functions from moto's snapshots, explicitly or not at all."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog.generate.sources import MotoSnapshot
from gpufleet.engine.answers import OfflineAnswers, UnansweredCall
from gpufleet.engine.runtime import EngineError, run_program
from tests.conftest import ROOT

ANSWERS = OfflineAnswers(MotoSnapshot())


def test_ssm_parameter_comes_from_the_regions_snapshot():
    path = catalog.load().ecs().gpu_ami_variants["al2023"].ssm_parameter  # from the curated facts
    east = ANSWERS.answer("aws:ssm/getParameter:getParameter", {"name": f"{path}/image_id"}, "us-east-1")["value"]
    west = ANSWERS.answer("aws:ssm/getParameter:getParameter", {"name": f"{path}/image_id"}, "us-west-2")["value"]
    assert east.startswith("ami-") and west.startswith("ami-") and east != west
    # Without /image_id the parameter is the JSON document, as in SSM.
    doc = json.loads(ANSWERS.answer("aws:ssm/getParameter:getParameter", {"name": path}, "us-east-1")["value"])
    assert doc["image_id"] == east and "gpu" in doc["image_name"]


def test_missing_parameter_is_an_error_naming_the_function_and_region():
    with pytest.raises(UnansweredCall) as err:
        ANSWERS.answer("aws:ssm/getParameter:getParameter", {"name": "/aws/service/ecs/optimized-ami/nope/image_id"}, "us-east-1")
    assert "aws:ssm/getParameter" in str(err.value) and "us-east-1" in str(err.value)


def test_unanswered_function_is_an_error_not_an_empty_value():
    with pytest.raises(UnansweredCall) as err:
        ANSWERS.answer("aws:eks/getCluster:getCluster", {"name": "ml-prod"}, "us-east-1")
    assert "aws:eks/getCluster:getCluster has no offline answer" in str(err.value)


def test_partition_comes_from_botocore():
    assert ANSWERS.answer("aws:index/getPartition:getPartition", {}, "us-east-1")["partition"] == "aws"


ZONES = "aws:index/getAvailabilityZones:getAvailabilityZones"


def test_availability_zones_of_the_region():
    names = ANSWERS.answer(ZONES, {"state": "available"}, "eu-west-1")["names"]
    assert names and all(n.startswith("eu-west-1") for n in names)


def test_zone_ids_are_in_the_order_of_the_names_as_the_emulated_account_pairs_them():
    answer, note = ANSWERS.answer_noted(ZONES, {"state": "available"}, "us-west-2")
    # moto's zone table pairs us-west-2's names and ids so; both sets are its offerings snapshot's.
    assert list(zip(answer["names"], answer["zoneIds"], strict=True)) == [
        ("us-west-2a", "usw2-az2"),
        ("us-west-2b", "usw2-az1"),
        ("us-west-2c", "usw2-az3"),
        ("us-west-2d", "usw2-az4"),
    ]
    assert answer["id"] == answer["region"] == "us-west-2" and answer["state"] == "available"
    assert note is not None and "a real account may pair them otherwise" in note and "az-ids.html" in note


def test_a_zone_the_emulated_account_lacks_takes_the_one_id_left():
    # moto's table lists three of eu-west-2's zones; its offerings list a fourth name and a fourth id.
    answer, note = ANSWERS.answer_noted(ZONES, {}, "eu-west-2")
    assert dict(zip(answer["names"], answer["zoneIds"], strict=True))["eu-west-2d"] == "euw2-az4"
    assert note is not None and "eu-west-2d, which its zones lack, takes the one id left, euw2-az4" in note


def test_zone_filters_and_exclusions_as_the_provider_applies_them():
    opt_in = [{"name": "opt-in-status", "values": ["opt-in-not-required"]}]
    answer = ANSWERS.answer(ZONES, {"filters": opt_in, "excludeNames": ["us-west-2d"], "excludeZoneIds": ["usw2-az1"]}, "us-west-2")
    assert (answer["names"], answer["zoneIds"]) == (["us-west-2a", "us-west-2c"], ["usw2-az2", "usw2-az3"])
    assert answer["filters"] == opt_in and answer["excludeNames"] == ["us-west-2d"]
    wildcard = ANSWERS.answer(ZONES, {"filters": [{"name": "zone-id", "values": ["usw2-az?"]}, {"name": "zone-name", "values": ["*a", "*c"]}]}, "us-west-2")
    assert wildcard["zoneIds"] == ["usw2-az2", "usw2-az3"]
    # allAvailabilityZones adds nothing the answer lacks once the filters keep Availability Zones only.
    every = ANSWERS.answer(ZONES, {"allAvailabilityZones": True, "filters": opt_in}, "us-west-2")
    assert every["names"] == ["us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d"] and every["allAvailabilityZones"] is True


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"allAvailabilityZones": True}, "lists the Local and Wavelength Zones of us-west-2 too"),
        ({"state": "impaired"}, "records no zone in state ['impaired'] in us-west-2, no proof a real account has none"),
        ({"filters": [{"name": "group-name", "values": ["us-west-2-lax-1"]}]}, "does not record the zones' 'group-name'"),
    ],
)
def test_zones_the_snapshot_cannot_answer_are_unanswered_saying_why(args, reason):
    with pytest.raises(UnansweredCall, match=re.escape(reason)):
        ANSWERS.answer(ZONES, args, "us-west-2")


def test_engine_error_when_the_program_calls_an_unanswerable_parameter(monkeypatch):
    monkeypatch.setattr(MotoSnapshot, "ssm_parameter", lambda self, region, name: None)
    ecs = {
        "clusterName": "c",
        "network": {"vpcId": "vpc-0123456789abcdef0", "subnetIds": ["subnet-0123456789abcdef0"]},
        "capacityProviders": [{"name": "a", "instanceType": "g5.xlarge", "minSize": 0, "desiredSize": 0, "maxSize": 1}],
    }
    with pytest.raises(EngineError) as err:
        run_program({"gpufleet:region": "us-east-1", "gpufleet:ecs": json.dumps(ecs)}, "t")
    assert "aws:ssm/getParameter" in str(err.value) and "does not exist in us-east-1" in str(err.value)


def test_the_program_does_not_depend_on_the_offline_engine():
    code = "import sys, gpufleet.stack.program; print(sorted(m for m in sys.modules if m.startswith(('gpufleet.engine.runtime', 'gpufleet.engine.answers', 'moto'))))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_preview_validates_the_spec_once(monkeypatch):
    """The CLI validates the stack first (for line numbers); the program it runs then gets the same
    spec instead of validating the same config again."""
    from gpufleet.stack import spec
    from tests.conftest import run_cli

    calls = []
    original = spec._validate
    monkeypatch.setattr(spec, "_VALIDATED", {})
    monkeypatch.setattr(spec, "_validate", lambda config: calls.append(1) or original(config))
    code, _, err = run_cli("preview", "eks-trn1", "--no-policy", "--json")
    assert code == 0, err
    assert len(calls) == 1


def test_a_preview_lays_out_each_efa_group_once(monkeypatch):
    """The spec check, the launch template, the NCCL job, the placement and the summary all read one
    resolution of the group: the type's EFA layout is computed once per group per preview."""
    from gpufleet.stack import spec
    from gpufleet.eks import resolved
    from tests.conftest import run_cli

    calls = []
    original = resolved.efa_layout
    monkeypatch.setattr(spec, "_VALIDATED", {})
    monkeypatch.setattr(resolved, "_remembered", resolved.by_identity(resolved._resolve))
    monkeypatch.setattr(resolved, "efa_layout", lambda *a: calls.append(a[0].name) or original(*a))
    code, out, err = run_cli("preview", "eks-p5-efa", "--no-policy", "--json")
    assert code == 0, err
    assert calls == ["p5.48xlarge"]
    assert '"ncclTest"' in out and '"efaInterfacesPerInstance": 32' in out
