"""The provider's own conversion before judging (issue 52, item 3): an input pulumi-aws turns from an
object into a JSON string (data/aws_json_inputs.json) is judged as the string AWS receives; an object
anywhere else is judged, and refused, as given."""

from __future__ import annotations

import json

from gpufleet.apis.aws import UNKNOWN, to_request
from gpufleet.catalog import tokens
from tests.policy_helpers import findings, resource

# What @pulumi/aws's `aws.iam.assumeRolePolicyForPrincipal({Service: "ec2.amazonaws.com"})` returns
# (pulumi/pulumi-aws sdk/nodejs/iam/documents.ts): the assume-role policy pulumi/pulumi-eks
# examples/efa/iam.ts and pulumi/examples aws-ts-eks-migrate-nodegroups/iam.ts give their node roles.
EC2_ASSUME_ROLE = {
    "Version": "2012-10-17",
    "Statement": [{"Sid": "AllowAssumeRole", "Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}


def test_an_object_assume_role_policy_is_judged_as_the_json_the_provider_sends():
    role = to_request(tokens.IAM_ROLE, {"name": "efa", "assumeRolePolicy": EC2_ASSUME_ROLE}, strict=False)
    assert role.problems == []
    # Go's json.Marshal, as the bridge's TransformJSONDocument calls it: keys sorted, compact.
    assert role.params["AssumeRolePolicyDocument"] == json.dumps(EC2_ASSUME_ROLE, sort_keys=True, separators=(",", ":"))


def test_the_document_is_written_as_go_writes_it():
    """Whole doubles without a fraction, <, > and & escaped, other characters left as UTF-8: the
    length AWS counts is the provider's text's."""
    role = to_request(tokens.IAM_ROLE, {"name": "r", "assumeRolePolicy": {"Id": "<a&b>é", "n": 3600.0}})
    assert role.params["AssumeRolePolicyDocument"] == '{"Id":"\\u003ca\\u0026b\\u003eé","n":3600}'


def test_a_document_holding_a_value_known_only_after_apply_is_unknown_as_a_whole():
    statement = {**EC2_ASSUME_ROLE["Statement"][0], "Principal": {"AWS": UNKNOWN}}
    role = to_request(tokens.IAM_ROLE, {"name": "r", "assumeRolePolicy": {**EC2_ASSUME_ROLE, "Statement": [statement]}})
    assert role.problems == [] and role.params["AssumeRolePolicyDocument"] == "placeholder"


def test_a_document_still_breaks_the_apis_bounds_once_serialised():
    huge = {**EC2_ASSUME_ROLE, "Id": "x" * 131072}
    [problem] = to_request(tokens.IAM_ROLE, {"name": "r", "assumeRolePolicy": huge}).problems
    assert problem.startswith("CreateRole.AssumeRolePolicyDocument = ") and problem.endswith("at most 131072 characters")


def test_an_object_where_the_schema_says_only_string_is_still_refused():
    role = to_request(tokens.IAM_ROLE, {"name": "r", "assumeRolePolicy": "{}", "permissionsBoundary": {"Version": "2012-10-17"}}, strict=False)
    [problem] = role.problems
    assert "Invalid type for parameter PermissionsBoundary" in problem and "valid types: <class 'str'>" in problem


def test_the_public_programs_node_roles_pass_the_pack(judge):
    """The false mandatory finding of pulumi-eks examples/efa (role "efa") and pulumi/examples
    aws-ts-eks-migrate-nodegroups (roles "<project>-role-<i>"): each gives only this object."""
    names = ["efa", *(f"aws-ts-eks-migrate-nodegroups-role-{i}" for i in range(3))]
    result = judge([resource(tokens.IAM_ROLE, name, {"assumeRolePolicy": EC2_ASSUME_ROLE}) for name in names])
    assert [f for f in result.findings if f.policy == "aws-api-model"] == []
    # The same role with a non-document object in a string-only input is still a finding.
    odd = resource(tokens.IAM_ROLE, "odd", {"assumeRolePolicy": EC2_ASSUME_ROLE, "description": {"text": "node role"}})
    [message] = findings(judge([odd]), "aws-api-model", "odd")
    assert "Invalid type for parameter Description" in message
