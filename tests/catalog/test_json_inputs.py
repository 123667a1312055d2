"""data/aws_json_inputs.json and its generator (src/gpufleet/catalog/generate/json_inputs.py): read from
the installed pulumi-aws SDK's annotations, never typed by hand; what it cannot place stops it."""

from __future__ import annotations

import textwrap

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog.generate import json_inputs as generator


def test_the_committed_list_is_what_the_generator_reads_from_the_installed_sdk():
    assert generator.main(["--check"]) == 0


def test_the_list_holds_the_documents_the_issue_names():
    inputs = catalog.aws_json_inputs()
    assert inputs["aws:iam/role:Role"] == {"assumeRolePolicy"}
    for token in ("aws:iam/policy:Policy", "aws:s3/bucketPolicy:BucketPolicy", "aws:sqs/queuePolicy:QueuePolicy", "aws:ecr/lifecyclePolicy:LifecyclePolicy"):
        assert inputs[token] == {"policy"}
    assert "aws:ecs/taskDefinition:TaskDefinition" not in inputs  # containerDefinitions: a string only


ROLE = '''
    @pulumi.input_type
    class RoleArgs:
        @_builtins.property
        @pulumi.getter(name="assumeRolePolicy")
        def assume_role_policy(self) -> pulumi.Input[Union[_builtins.str, 'PolicyDocumentArgs']]:
            return pulumi.get(self, "assume_role_policy")

        @_builtins.property
        @pulumi.getter
        def description(self) -> pulumi.Input[Optional[_builtins.str]]:
            return pulumi.get(self, "description")

        @_builtins.property
        @pulumi.getter(name="maxSessionDuration")
        def size(self) -> pulumi.Input[Optional[Union[_builtins.str, 'Size']]]:
            return pulumi.get(self, "size")

    class Role(pulumi.CustomResource):
        def _internal_init(__self__):
            super(Role, __self__).__init__('aws:iam/role:Role', resource_name)
'''
INPUTS = '''
    @pulumi.input_type
    class PolicyDocumentArgs:
        @_builtins.property
        @pulumi.getter(name="Statement")
        def statement(self) -> pulumi.Input[Sequence[pulumi.Input['PolicyStatementArgs']]]:
            return pulumi.get(self, "statement")

    @pulumi.input_type
    class PolicyStatementArgs:
        @_builtins.property
        @pulumi.getter(name="Principal")
        def principal(self) -> pulumi.Input[Optional[Union[_builtins.str, 'PrincipalArgs']]]:
            return pulumi.get(self, "principal")

    @pulumi.input_type
    class PrincipalArgs:
        pass
'''


def _sdk(tmp_path, role=ROLE, inputs=INPUTS):
    (tmp_path / "iam").mkdir()
    (tmp_path / "iam" / "role.py").write_text(textwrap.dedent(role))
    (tmp_path / "iam" / "_inputs.py").write_text(textwrap.dedent(inputs))
    (tmp_path / "iam" / "_enums.py").write_text("class Size(_builtins.str, Enum):\n    pass\n")
    return tmp_path


def test_a_string_or_object_input_is_read_with_its_pulumi_name_and_token(tmp_path):
    document = generator.build(_sdk(tmp_path), "0.0.0")
    # A string-or-enum input is no conversion; a statement's Principal is the document's own shape.
    assert document["jsonDocuments"] == {"aws:iam/role:Role": {"assumeRolePolicy": "pulumi_aws.iam.PolicyDocumentArgs"}}
    assert document["generated"]["source"]["tag"] == "v0.0.0"


def test_a_string_or_object_member_outside_a_document_stops_the_generator(tmp_path):
    inputs = INPUTS + '''
    @pulumi.input_type
    class RoleInlinePolicyArgs:
        @_builtins.property
        @pulumi.getter
        def policy(self) -> pulumi.Input[Optional[Union[_builtins.str, 'PolicyDocumentArgs']]]:
            return pulumi.get(self, "policy")
'''
    with pytest.raises(generator.SchemaShapeError, match="RoleInlinePolicyArgs.policy: .* a conversion inside a structure"):
        generator.build(_sdk(tmp_path, inputs=inputs), "0.0.0")


def test_a_list_of_documents_stops_the_generator(tmp_path):
    role = ROLE.replace("pulumi.Input[Union[_builtins.str, 'PolicyDocumentArgs']]", "pulumi.Input[Sequence[Union[_builtins.str, 'PolicyDocumentArgs']]]")
    with pytest.raises(generator.SchemaShapeError, match="RoleArgs.assumeRolePolicy: .* cannot place"):
        generator.build(_sdk(tmp_path, role=role), "0.0.0")
