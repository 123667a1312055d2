"""Provider functions a program of one's own calls: answered as an emulator answers them (moto's
emulated account: its default VPC and subnets, its AMIs, its caller identity), else unknown, as a
preview answers before a value exists, and listed in the plan's gaps. A program that needs a
concrete value where only an unknown exists is exit 2 naming the function and its inputs; --answers
supplies one."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from gpufleet.catalog.tokens import UNKNOWN
from tests.conftest import run_cli


def _program(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "prog"
    folder.mkdir(exist_ok=True)
    (folder / "Pulumi.yaml").write_text("name: functions\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text("import pulumi\nimport pulumi_aws as aws\n" + textwrap.dedent(body))
    return folder


def _preview(folder: Path, *flags: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("preview", "--program", str(folder), "--python", sys.executable, "--no-policy", "--json", *flags)
    assert "Traceback" not in err, err
    return code, (json.loads(out) if out else {}), err


def _inputs(plan: dict, name: str) -> dict:
    [resource] = [r for r in plan["resources"] if r["name"] == name]
    return resource["inputs"]


EMULATED = """
vpc = aws.ec2.get_vpc(default=True)
subnets = aws.ec2.get_subnets(filters=[{"name": "vpc-id", "values": [vpc.id]}])
me = aws.get_caller_identity()
image = aws.ec2.get_ami(owners=["amazon"], filters=[{"name": "name", "values": ["amzn2-ami-hvm-2.0.20180810-x86_64-gp2"]}])
aws.ec2.SecurityGroup("sg", name="sg", vpc_id=vpc.id, description=me.account_id)
aws.ec2.LaunchTemplate("lt", name="lt", image_id=image.id)
pulumi.export("subnets", subnets.ids)
pulumi.export("cidr", vpc.cidr_block)
"""


def test_what_the_emulated_account_holds_is_answered_the_same_on_every_run(tmp_path):
    code, plan, err = _preview(_program(tmp_path, EMULATED))
    assert code == 0, err
    sg = _inputs(plan, "sg")
    assert sg["vpcId"].startswith("vpc-") and sg["description"] == "123456789012"  # moto's default account
    assert _inputs(plan, "lt")["imageId"] == "ami-04681a1dbd79675a5"  # the one AMI of moto's data by that name
    assert plan["outputs"]["cidr"] == "172.31.0.0/16" and len(plan["outputs"]["subnets"]) == 6  # a default subnet per zone
    assert plan["placement"]["gaps"] == [g for g in plan["placement"]["gaps"] if "provider function" not in g]
    _, again, _ = _preview(_program(tmp_path, EMULATED))
    assert again["resources"] == plan["resources"] and again["outputs"] == plan["outputs"]


def test_a_function_without_an_offline_answer_is_unknown_and_a_gap(tmp_path):
    body = 'cluster = aws.eks.get_cluster_output(name="ml-prod")\naws.ec2.SecurityGroup("sg", name="sg", vpc_id=cluster.vpc_config.vpc_id)\n'
    code, plan, err = _preview(_program(tmp_path, body))
    assert code == 0, err
    assert _inputs(plan, "sg")["vpcId"] == UNKNOWN
    assert 'provider function aws:eks/getCluster:getCluster {"name": "ml-prod"}: no offline answer; answered unknown' in "\n".join(plan["placement"]["gaps"])


def test_an_emulated_account_without_a_match_answers_unknown_saying_why(tmp_path):
    body = 'vpc = aws.ec2.get_vpc_output(tags={"team": "ml"})\naws.ec2.SecurityGroup("sg", name="sg", vpc_id=vpc.id)\n'
    code, plan, _ = _preview(_program(tmp_path, body))
    assert code == 0 and _inputs(plan, "sg")["vpcId"] == UNKNOWN
    [gap] = [g for g in plan["placement"]["gaps"] if "getVpc" in g]
    assert gap.startswith('provider function aws:ec2/getVpc:getVpc {"tags": {"team": "ml"}}: 0 VPCs match (the provider takes exactly one) in moto ')


PLAIN = 'cluster = aws.eks.get_cluster(name="ml-prod")\naws.ec2.SecurityGroup("sg", name="sg", vpc_id=cluster.vpc_config.vpc_id)\n'


def test_a_program_that_needs_a_concrete_value_is_exit_2_naming_the_function_and_its_inputs(tmp_path):
    code, _, err = _preview(_program(tmp_path, PLAIN))
    assert code == 2
    assert 'these provider functions were answered unknown, and the program may need a concrete value: aws:eks/getCluster:getCluster {"name": "ml-prod"} (give their outputs for those inputs with --answers FILE)' in err


def test_answers_supply_the_value(tmp_path):
    answers = tmp_path / "answers.json"
    outputs = {"name": "ml-prod", "vpcConfig": {"vpcId": "vpc-0abc", "subnetIds": [], "securityGroupIds": [], "endpointPrivateAccess": True,
                                                 "endpointPublicAccess": False, "publicAccessCidrs": [], "clusterSecurityGroupId": "sg-1"}}
    answers.write_text(json.dumps({"aws:eks/getCluster:getCluster": [{"inputs": {"name": "ml-prod"}, "outputs": outputs}]}))
    code, plan, err = _preview(_program(tmp_path, PLAIN), "--answers", str(answers))
    assert code == 0, err
    assert _inputs(plan, "sg")["vpcId"] == "vpc-0abc"


# The file's text -> what the error says of it.
BAD_ANSWERS = {
    "[]": "list: an object keyed by function token is required",
    '{"getCluster": []}': "'getCluster': not a function token",
    '{"aws:eks/getCluster:getCluster": {}}': "a list of {inputs, outputs} is required",
    '{"aws:eks/getCluster:getCluster": [{"inputs": {}}]}': "[0] = {'inputs': {}}: an object of exactly two objects",
    "{": "not JSON",
}


@pytest.mark.parametrize(("text", "message"), BAD_ANSWERS.items())
def test_an_answers_file_of_the_wrong_shape_is_exit_2_naming_the_place(tmp_path, text, message):
    answers = tmp_path / "answers.json"
    answers.write_text(text)
    code, _, err = _preview(_program(tmp_path, PLAIN), "--answers", str(answers))
    assert code == 2 and message in err, err


def test_the_most_recent_of_several_emulated_amis_is_answered_and_said_to_be_moto_s_choice(tmp_path):
    body = ('image = aws.ec2.get_ami(most_recent="true", owners=["amazon"], filters=[{"name": "name", "values": ["amzn2-ami-ecs-hvm-*-x86_64-*"]}])\n'
            'aws.ec2.LaunchTemplate("lt", name="lt", image_id=image.id)\n')
    code, plan, err = _preview(_program(tmp_path, body))
    assert code == 0, err
    [gap] = [g for g in plan["placement"]["gaps"] if "getAmi" in g]
    assert f"the emulated account's most recent of several AMIs is the first moto lists ({_inputs(plan, 'lt')['imageId']})" in gap


def test_arguments_the_emulated_account_refuses_are_answered_unknown_saying_why(tmp_path):
    body = ('vpc = aws.ec2.get_vpc_output(filters=[{"name": "no-such-filter", "values": ["x"]}])\n'
            'aws.ec2.SecurityGroup("sg", name="sg", vpc_id=vpc.id)\n')
    code, plan, err = _preview(_program(tmp_path, body))
    assert code == 0, err
    assert _inputs(plan, "sg")["vpcId"] == UNKNOWN
    [gap] = [g for g in plan["placement"]["gaps"] if "getVpc" in g]
    assert "snapshot cannot answer these arguments (FilterNotImplementedError: The filter 'no-such-filter'" in gap


def test_availability_zone_ids_are_answered_in_the_order_of_the_names_and_their_pairing_said(tmp_path):
    body = ('zones = aws.get_availability_zones(state="available")\n'
            'aws.ec2.Subnet("s", vpc_id="vpc-0123456789abcdef0", cidr_block="10.0.0.0/24", availability_zone_id=zones.zone_ids[0])\n'
            'pulumi.export("zones", dict(zip(zones.names, zones.zone_ids)))\n')
    code, plan, err = _preview(_program(tmp_path, body))
    assert code == 0, err
    assert _inputs(plan, "s")["availabilityZoneId"] == "use1-az6"  # us-east-1a's, as moto's emulated account pairs them
    assert len(plan["outputs"]["zones"]) == 6
    [gap] = [g for g in plan["placement"]["gaps"] if "getAvailabilityZones" in g]
    assert "zoneIds pair with names as moto" in gap and "a real account may pair them otherwise" in gap
