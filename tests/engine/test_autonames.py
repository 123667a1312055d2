"""Names as the providers make them when a program leaves them out (curated `autonaming`, from the
providers' sources): the logical name, the separator and hex, deterministic offline; which property
is the provider's own rule (a bridged provider's input literally named `name`, an override, or a
Kubernetes object's metadata.name)."""

from __future__ import annotations

import hashlib
import sys
import textwrap

import pytest

from gpufleet.catalog import catalog
from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.engine.autonames import TooLong, sdk_inputs, with_auto_names
from tests.conftest import run_cli

FACTS = catalog.load().facts.autonaming
URN = "urn:pulumi:dev::p::t::x"
HEX = hashlib.sha256(URN.encode()).hexdigest()


def _named(type_: str, inputs: dict, logical: str = "svc", custom: bool = True) -> dict:
    return with_auto_names(type_, logical, URN, inputs, custom, FACTS)


def test_a_bridged_resource_with_a_name_input_is_auto_named():
    assert _named("aws:ecs/service:Service", {"cluster": "c"}) == {"cluster": "c", "name": f"svc-{HEX[:7]}"}
    assert _named("gcp:container/nodePool:NodePool", {})["name"] == f"svc-{HEX[:7]}"
    assert (
        _named("azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool", {}, "gpu")["name"] == f"gpu{HEX[:7]}"
    )  # no separator


def test_what_the_program_names_or_the_provider_computes_is_left_alone():
    assert _named("aws:ecs/service:Service", {"name": "given"}) == {"name": "given"}
    assert _named("aws:iam/role:Role", {"namePrefix": "ml-"}) == {"namePrefix": "ml-", "name": UNKNOWN}
    assert _named("aws:ecs/taskDefinition:TaskDefinition", {}) == {}  # family: no input named name, no override
    assert _named("eks:index:Cluster", {}, custom=False) == {}  # a component names nothing itself


def test_overrides_name_another_property_or_length():
    assert _named("aws:eks/nodeGroup:NodeGroup", {}, "gpus") == {"nodeGroupName": f"gpus-{HEX[:7]}"}
    assert _named("aws:eks/nodeGroup:NodeGroup", {"nodeGroupNamePrefix": "g-"}, "gpus")["nodeGroupName"] == UNKNOWN
    assert _named("azure:containerservice/kubernetesCluster:KubernetesCluster", {}, "Training")["name"] == f"training-{HEX[:7]}"
    assert len(_named("aws:iam/role:Role", {}, "r" * 56)["name"]) == 64
    with pytest.raises(TooLong, match=r"aws:iam/role:Role 'r+': name 'r+-' plus 7 random chars is longer than maximum length 64"):
        _named("aws:iam/role:Role", {}, "r" * 57)


def test_a_kubernetes_object_is_named_in_its_metadata():
    assert _named("kubernetes:apps/v1:Deployment", {"spec": {}}, "web")["metadata"] == {"name": f"web-{HEX[:8]}"}
    assert _named("kubernetes:apps/v1:Deployment", {"metadata": {"generateName": "web-"}}, "web")["metadata"] == {"generateName": "web-"}
    assert "metadata" not in _named("kubernetes:helm.sh/v3:Release", {}, "plugin")


def test_the_rule_is_read_from_the_provider_sdk():
    assert "name" in sdk_inputs("aws:ecs/service:Service") and "family" in sdk_inputs("aws:ecs/taskDefinition:TaskDefinition")
    assert "name" not in sdk_inputs("aws:ecs/taskDefinition:TaskDefinition")
    assert sdk_inputs("nosuch:index:Thing") is None


def test_an_auto_named_service_is_no_missing_name_to_the_pack(tmp_path):
    """`pulumi preview` fills the name in; the API model check sees it, as the real pack would."""
    folder = tmp_path / "prog"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: named\nruntime: python\n")
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text(
        textwrap.dedent("""
        import pulumi_aws as aws
        cluster = aws.ecs.Cluster("cluster")
        aws.ecs.Service("svc", cluster=cluster.arn, desired_count=1)
    """)
    )
    code, out, err = run_cli("preview", "--program", str(folder), "--python", sys.executable, "--json")
    assert code == 0, err
    assert '"name": "svc-' in out and "Missing required parameter" not in out


@pytest.mark.parametrize(
    "module, args_class",
    [
        ("ec2/launch_template.py", "LaunchTemplateArgs"),
        ("ecs/service.py", "ServiceArgs"),
        ("iam/role.py", "RoleArgs"),
        ("ec2/_inputs.py", "LaunchTemplateTagSpecificationArgs"),
    ],
)
def test_the_args_signature_alone_declares_what_the_whole_module_does(module, args_class):
    import importlib.util
    from pathlib import Path

    from gpufleet.engine.autonames import _args_signature, _declared

    source = Path(importlib.util.find_spec("pulumi_aws").submodule_search_locations[0], module).read_text(encoding="utf-8")
    signature = _args_signature(source, args_class)
    assert len(signature) < len(source) / 4
    assert _declared(signature, args_class) == _declared(source, args_class) != frozenset()


def test_a_signature_read_past_a_closing_default_and_a_layout_it_does_not_know():
    from gpufleet.engine.autonames import _args_signature, _declared

    source = textwrap.dedent(
        """
        class XArgs:
            def __init__(__self__, *, a: str = "):", b_c: int = 1):
                pass

            def other(self):
                pass
        """
    )
    assert _declared(_args_signature(source, "XArgs"), "XArgs") == {"a", "bC"}
    nested = "class XArgs:\n    pass\nX = 1\nclass Y:\n    def __init__(self, z): pass\n"
    assert _args_signature(nested, "XArgs") == ""
