"""Where the catalog's facts come from: the requests the live source sends (checked against botocore's
stubs, so they are requests the EC2 and SSM APIs take, with the arguments that matter), moto's
snapshot read when parts of it are missing, and the regeneration command's `--check`."""

from __future__ import annotations

import importlib.util
import json

import pytest
from botocore.stub import Stubber

from gpufleet.catalog import generate
from gpufleet.catalog.generate.sources import LiveAws, MotoSnapshot


@pytest.fixture
def live(monkeypatch):
    """A LiveAws whose clients are botocore-stubbed (no network, no credentials): (source, stubs)."""
    import boto3

    session = boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
    clients: dict[tuple[str, str], object] = {}
    stubs: dict[tuple[str, str], Stubber] = {}

    def client(service: str, region: str):
        if (service, region) not in clients:
            clients[(service, region)] = session.client(service, region_name=region)
            stubs[(service, region)] = Stubber(clients[(service, region)])
            stubs[(service, region)].activate()
        return clients[(service, region)]

    source = LiveAws("eu-west-1")
    monkeypatch.setattr(source, "client", client)

    def stub(service: str, region: str) -> Stubber:
        client(service, region)
        return stubs[(service, region)]

    return source, stub


def test_live_regions_are_the_regions_enabled_for_the_account(live):
    source, stub = live
    # AllRegions=False: an opt-in region the account has not enabled offers nothing to launch in.
    stub("ec2", "eu-west-1").add_response(
        "describe_regions", {"Regions": [{"RegionName": "us-west-2"}, {"RegionName": "ap-south-1"}]}, {"AllRegions": False}
    )
    assert source.regions() == ["ap-south-1", "us-west-2"]
    stub("ec2", "eu-west-1").assert_no_pending_responses()


def test_live_ssm_parameter_and_a_missing_one(live):
    source, stub = live
    name = "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/recommended/image_id"
    ssm = stub("ssm", "us-west-2")
    ssm.add_response("get_parameter", {"Parameter": {"Name": name, "Value": "ami-0123456789abcdef0"}}, {"Name": name})
    ssm.add_client_error("get_parameter", service_error_code="ParameterNotFound", expected_params={"Name": name})
    assert source.ssm_parameter("us-west-2", name) == "ami-0123456789abcdef0"
    assert source.ssm_parameter("us-west-2", name) is None  # the region does not publish it
    ssm.add_client_error("get_parameter", service_error_code="AccessDeniedException", expected_params={"Name": name})
    with pytest.raises(Exception, match="AccessDenied"):  # anything else is not "missing"
        source.ssm_parameter("us-west-2", name)


def test_live_ssm_children_are_one_level_under_the_path(live):
    source, stub = live
    path = "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu"
    # Recursive=False: the children of a variant's path, not every parameter of the tree below them.
    stub("ssm", "us-east-2").add_response(
        "get_parameters_by_path",
        {"Parameters": [{"Name": f"{path}/recommended", "Value": '{"image_id": "ami-1"}'}]},
        {"Path": path, "Recursive": False},
    )
    assert source.ssm_children("us-east-2", path) == ['{"image_id": "ami-1"}']


def test_live_zone_ids_are_the_offerings_by_zone_id(live):
    source, stub = live
    # LocationType availability-zone-id: a zone's id names the same zone in every account.
    stub("ec2", "us-east-1").add_response(
        "describe_instance_type_offerings",
        {"InstanceTypeOfferings": [{"InstanceType": "p5.48xlarge", "LocationType": "availability-zone-id", "Location": "use1-az6"}]},
        {"LocationType": "availability-zone-id"},
    )
    assert source.az_id_offerings("us-east-1") == [{"InstanceType": "p5.48xlarge", "Location": "use1-az6"}]


class _Tree(MotoSnapshot):
    """moto's SSM tree for one region, as given."""

    def __init__(self, tree: dict) -> None:
        super().__init__()
        self.tree = tree

    def _ssm_tree(self, region: str) -> dict:
        return self.tree


def test_moto_children_are_the_parameters_under_a_path_not_its_subtrees():
    tree = {"aws": {"gpu": {"recommended": {"Value": {"image_id": "ami-1"}, "image_id": {"Value": "ami-1"}}, "older": {"Value": "plain"}, "archive": {"v1": {"Value": "x"}}}}}
    source = _Tree(tree)
    assert source.ssm_children("us-east-1", "/aws/gpu") == ['{"image_id": "ami-1"}', "plain"]
    assert source.ssm_children("us-east-1", "/aws/none") == []
    assert source.ssm_parameter("us-east-1", "/aws/gpu/recommended/image_id") == "ami-1"
    assert source.ssm_parameter("us-east-1", "/aws/gpu/archive") is None  # a subtree, not a parameter


def test_without_moto_the_snapshot_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="moto package"):
        MotoSnapshot().regions()


class _Source:
    """A fact source of two regions with the SSM children given per region."""

    label = "test source"

    def __init__(self, children: dict[str, list[str]]) -> None:
        self.children = children

    def regions(self) -> list[str]:
        return sorted(self.children)

    def ssm_children(self, region: str, path: str) -> list[str]:
        return self.children[region] if path.endswith("/amazon-linux-2023/gpu") else []


def test_ami_map_keeps_whole_records_and_regions_that_have_one():
    good = {"image_id": "ami-1", "image_version": "2023.0.1", "ecs_agent_version": "1.90.0"}
    source = _Source({
        "us-east-1": [json.dumps(good), json.dumps({"image_id": "ami-2"}), json.dumps({"image_version": "x"}), json.dumps("ami-3"), json.dumps(["image_id", "image_version"])],
        "us-west-2": [json.dumps({"image_id": "ami-4"})],
    })
    variant = next(v for v, f in generate.curated_facts()["ecs"]["gpuAmiVariants"].items() if f["ssmParameter"].rsplit("/", 1)[0].endswith("/amazon-linux-2023/gpu"))
    assert generate.build_amis(source)["amis"] == {"us-east-1": {"ami-1": ["gpu", variant, "2023.0.1", "1.90.0"]}}


@pytest.fixture
def committed(tmp_path, monkeypatch):
    """The regeneration over a stand-in source whose files render as fixed texts, written to tmp_path."""
    monkeypatch.setattr(generate, "MotoSnapshot", lambda: _Source({}))
    monkeypatch.setattr(generate, "LiveAws", lambda region: pytest.fail("--live was not asked for"))
    monkeypatch.setattr(generate, "build", lambda source: {"source": source.label})
    monkeypatch.setattr(generate, "build_amis", lambda source: {"amis": source.label})
    monkeypatch.setattr(generate, "render", lambda document: f"types from {document['source']}\n")
    monkeypatch.setattr(generate, "render_amis", lambda document: f"amis from {document['amis']}\n")
    data, amis = tmp_path / "instance_types.json", tmp_path / "ecs_amis.json"
    monkeypatch.setattr(generate, "DATA_FILE", data)
    monkeypatch.setattr(generate, "AMI_FILE", amis)
    return data, amis


def test_check_passes_on_current_files_and_names_each_stale_one(committed, capsys):
    data, amis = committed
    assert generate.main([]) == 0
    assert (data.read_text(), amis.read_text()) == ("types from test source\n", "amis from test source\n")
    assert capsys.readouterr().err.splitlines() == [f"wrote {data} from the test source", f"wrote {amis} from the test source"]
    assert generate.main(["--check"]) == 0 and capsys.readouterr().err == ""
    amis.write_text("an older map\n")
    assert generate.main(["--check"]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{amis} is stale against the test source: run `{generate.REGENERATE}`"]
    assert amis.read_text() == "an older map\n"  # --check writes nothing
    data.unlink()
    assert generate.main(["--check"]) == 1
    assert len(capsys.readouterr().err.splitlines()) == 2  # a missing file is stale too


def test_regenerate_help_says_what_it_does(capsys):
    with pytest.raises(SystemExit) as done:
        generate.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {generate.REGENERATE}") and generate.__doc__.splitlines()[0] in out
