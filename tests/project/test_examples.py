"""The example programs in examples/, written against gpufleet.library as an infra engineer would,
previewed offline by `gpufleet preview --program DIR` with the policy pack; and the errors a program
of one's own can meet there (exit 2, named)."""

from __future__ import annotations

import sys

import base64
import json
import shutil
from pathlib import Path

import pytest

from gpufleet.catalog import catalog
from gpufleet.rules import eks as eks_rules
from gpufleet.rules.efa import efa_layout
from tests.conftest import ROOT, run_cli

EXAMPLES = ROOT / "examples"


def _preview(folder: Path, *flags: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("preview", "--program", str(folder), "--python", sys.executable, *flags, "--json")
    assert "Traceback" not in err, err
    return code, (json.loads(out) if out else {}), err


def _by_type(plan: dict, type_: str) -> list[dict]:
    return [r for r in plan["resources"] if r["type"] == type_]


def _copy(tmp_path: Path, example: str) -> Path:
    folder = tmp_path / example
    shutil.copytree(EXAMPLES / example, folder)
    return folder


def test_every_example_is_a_program_with_one_stack():
    found = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
    assert found == ["ecs-gpu-capacity-provider", "eks-efa-node-group"]
    for name in found:
        assert (EXAMPLES / name / "Pulumi.yaml").is_file() and len(list((EXAMPLES / name).glob("Pulumi.*.yaml"))) == 1
        assert "from gpufleet.library import" in (EXAMPLES / name / "__main__.py").read_text()


def test_the_efa_node_group_joins_the_existing_cluster_with_the_types_interfaces():
    code, plan, err = _preview(EXAMPLES / "eks-efa-node-group")
    assert code == 0, err
    assert (plan["project"], plan["stack"]) == ("eks-efa-node-group", "dev")
    [group] = _by_type(plan, "aws:eks/nodeGroup:NodeGroup")
    inputs = group["inputs"]
    assert (inputs["clusterName"], inputs["subnetIds"], inputs["nodeRoleArn"]) == (
        "ml-prod",
        ["subnet-0123456789abcdef0"],
        "arn:aws:iam::123456789012:role/ml-prod-nodes",
    )
    cat = catalog.load()
    p5 = cat.get("p5.48xlarge")
    assert inputs["amiType"] == eks_rules.default_ami_type(p5, cat.facts.eks)
    [template] = _by_type(plan, "aws:ec2/launchTemplate:LaunchTemplate")
    # The interfaces are the type's layout from its network cards: every EFA interface it takes.
    interfaces = template["inputs"]["networkInterfaces"]
    expected = [(i.network_card_index, i.device_index, i.interface_type) for i in efa_layout(p5)]
    assert [(i["networkCardIndex"], i["deviceIndex"], i.get("interfaceType", "interface")) for i in interfaces] == expected
    assert sum(i.get("interfaceType") in ("efa", "efa-only") for i in interfaces) == p5.max_efa_interfaces == 32
    # The cluster security group the user gave is on every interface.
    assert all("sg-0123456789abcdef0" in i["securityGroups"] for i in interfaces)
    releases = {r["name"]: r["inputs"] for r in _by_type(plan, "kubernetes:helm.sh/v3:Release")}
    assert set(releases) == {"accelerators-nvidia", "accelerators-efa"}
    taint = {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}
    assert all(taint in r["values"]["tolerations"] for r in releases.values())
    assert [v for v in plan["policy"]["violations"] if v["level"] == "mandatory"] == []
    # The NCCL workers land on the new group, one per node.
    workers = [p for p in plan["placement"]["pods"] if p["pod"].endswith("(Worker)")]
    assert [(w["status"], w["nodeGroups"]["p5-train"]["placed"]) for w in workers] == [("scheduled", 2)]


def test_the_gpu_capacity_provider_joins_the_existing_cluster_on_the_gpu_ami():
    code, plan, err = _preview(EXAMPLES / "ecs-gpu-capacity-provider")
    assert code == 0 and plan["policy"]["violations"] == [], err
    [provider] = _by_type(plan, "aws:ecs/capacityProvider:CapacityProvider")
    assert provider["inputs"]["name"] == "ml-services-g6"
    [template] = _by_type(plan, "aws:ec2/launchTemplate:LaunchTemplate")
    assert template["inputs"]["instanceType"] == "g6.12xlarge" and template["inputs"]["imageId"].startswith("ami-")
    assert "ECS_CLUSTER=ml-services\n" in base64.b64decode(template["inputs"]["userData"]).decode()
    [association] = _by_type(plan, "aws:ecs/clusterCapacityProviders:ClusterCapacityProviders")
    assert association["inputs"]["capacityProviders"] == ["FARGATE", "ml-services-g6"]
    [task] = plan["placement"]["tasks"]
    assert (task["task"], task["capacityProvider"], task["status"]) == ("inference", "ml-services-g6", "placed")


def test_a_task_asking_for_more_gpus_than_the_type_has_is_a_mandatory_violation(tmp_path):
    folder = _copy(tmp_path, "ecs-gpu-capacity-provider")
    main = folder / "__main__.py"
    main.write_text(main.read_text().replace('{"type": "GPU", "value": "4"}', '{"type": "GPU", "value": "8"}'))
    code, plan, _ = _preview(folder)
    assert code == 1
    mandatory = [v for v in plan["policy"]["violations"] if v["level"] == "mandatory"]
    assert mandatory and any("8" in v["message"] and "g6.12xlarge" in v["message"] for v in mandatory)


def test_a_program_that_raises_is_exit_2_naming_its_line(tmp_path):
    folder = _copy(tmp_path, "eks-efa-node-group")
    main = folder / "__main__.py"
    main.write_text(main.read_text().replace('instance_type="p5.48xlarge"', 'instance_type="p5.96xlarge"'))
    code, _, err = run_cli("preview", "--program", str(folder), "--python", sys.executable)
    assert code == 2 and "Traceback" not in err
    assert "the program raised" in err and "p5.96xlarge" in err and f"{main.resolve()}:" in err


def test_a_provider_function_the_engine_cannot_answer_is_exit_2_naming_it(tmp_path):
    folder = _copy(tmp_path, "eks-efa-node-group")
    main = folder / "__main__.py"
    main.write_text(main.read_text() + '\nimport pulumi_aws as aws\naws.eks.get_cluster(name="ml-prod")\n')
    code, _, err = run_cli("preview", "--program", str(folder), "--python", sys.executable)
    assert code == 2 and "Traceback" not in err and "aws:eks/getCluster:getCluster" in err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: (f / "Pulumi.yaml").unlink(), "no Pulumi.yaml there"),
        *[
            (
                lambda f, r=runtime: (f / "Pulumi.yaml").write_text(f"name: x\nruntime: {r}\n"),
                f"runtime = '{runtime}': offline, gpufleet runs Python and Node.js",
            )
            for runtime in ("go", "dotnet", "java", "yaml")
        ],
        (
            lambda f: (f / "Pulumi.yaml").write_text("name: x\nruntime: go\n"),
            "run `pulumi preview --json > plan.json` where the CLI is, then `gpufleet check plan.json`",
        ),
        (
            lambda f: (f / "Pulumi.yaml").write_text("name: x\nruntime: python\nconfig: [a]\n"),
            "config = ['a']: must be a mapping of config keys",
        ),
        (lambda f: (f / "Pulumi.yaml").write_text("runtime: python\n"), "a project name is required"),
        (lambda f: shutil.copy(f / "Pulumi.dev.yaml", f / "Pulumi.prod.yaml"), "2 stack config files"),
    ],
)
def test_a_folder_that_is_not_a_runnable_program_is_exit_2(tmp_path, edit, message):
    folder = _copy(tmp_path, "eks-efa-node-group")
    edit(folder)
    code, _, err = run_cli("preview", "--program", str(folder), "--python", sys.executable)
    assert code == 2 and message in err, err


def test_a_named_stack_that_does_not_exist_is_exit_2(tmp_path):
    code, _, err = run_cli("preview", "--program", str(EXAMPLES / "eks-efa-node-group"), "prod", "--python", sys.executable)
    assert code == 2 and "no " in err and "stacks: dev" in err


def test_the_guide_shows_the_example_as_it_is():
    """docs/programs.md's first program is the EKS example's program."""
    guide = (ROOT / "docs" / "programs.md").read_text()
    block = guide.split("```python\n", 1)[1].split("```", 1)[0]
    program = (EXAMPLES / "eks-efa-node-group" / "__main__.py").read_text()
    assert block.strip() and block in program


def test_a_library_args_mistake_names_the_field_and_the_rule(tmp_path):
    """A component made from the library resolves its args itself: an AMI variant the type's
    accelerator has not is refused with the variants it has (exit 2, not a traceback)."""
    folder = _copy(tmp_path, "ecs-gpu-capacity-provider")
    main = folder / "__main__.py"
    main.write_text(main.read_text().replace('instance_type="g6.12xlarge",', 'instance_type="inf2.xlarge", ami_variant="al2-kernel-5.10",'))
    code, _, err = run_cli("preview", "--program", str(folder), "--python", sys.executable)
    assert code == 2 and "Traceback" not in err
    assert "amiVariant = 'al2-kernel-5.10': inf2.xlarge runs on the ECS neuron AMI, whose variants are al2023, al2" in err


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # A field the library would have ignored is refused, naming it.
        (
            'efa=EfaArgs(availability_zone=config.require("zone")),',
            'zones=["us-east-1a"], efa=EfaArgs(availability_zone=config.require("zone")),',
            "zones = ['us-east-1a']: zones place a group in a VPC the stack file creates",
        ),
        (
            "min_size=0,",
            'min_size=0, subnet_ids=["subnet-0123456789abcdef0"],',
            "subnetIds = ['subnet-0123456789abcdef0']: the group's subnets are given twice",
        ),
        ('    subnet_ids=[config.require("subnetId")],\n', "", "subnetIds of node group 'p5-train': missing"),
    ],
    ids=["zones", "subnets-twice", "no-subnets"],
)
def test_a_node_group_of_your_own_uses_every_field_it_takes(tmp_path, old, new, message):
    _refused_once_edited(tmp_path, "eks-efa-node-group", old, new, message)


def _refused_once_edited(tmp_path, example: str, old: str, new: str, message: str) -> None:
    """The example with `old` replaced by `new` previews to exit 2 saying `message`."""
    folder = _copy(tmp_path, example)
    main = folder / "__main__.py"
    text = main.read_text()
    assert old in text
    main.write_text(text.replace(old, new))
    code, _, err = run_cli("preview", "--program", str(folder), "--python", sys.executable)
    assert code == 2 and "Traceback" not in err and message in err, err


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            "        instance_profile_arn=role.profile.arn,\n",
            "",
            "EcsClusterRef.instance_profile_arn: missing; Auto Scaling capacity runs with an instance profile",
        ),
        ("        name=cluster_name,\n", "        name=instances.id,\n", "EcsClusterRef.name = <pulumi.output.Output"),
    ],
    ids=["no-instance-profile", "name-not-a-string"],
)
def test_an_ecs_cluster_reference_without_what_its_capacity_needs_is_exit_2(tmp_path, old, new, message):
    _refused_once_edited(tmp_path, "ecs-gpu-capacity-provider", old, new, message)


def test_the_group_s_own_subnets_are_used():
    """Subnets in the group's args, none in the reference: the node group runs in them."""
    from gpufleet.eks.args import NodeGroupArgs
    from gpufleet.eks.node_group import EksClusterRef, group_subnets

    args = NodeGroupArgs(name="g", instance_type="g5.xlarge", min_size=0, desired_size=1, max_size=1, subnet_ids=["subnet-1"])
    assert group_subnets(args, EksClusterRef("c", "sg", "arn", "vpc"), placed=False) == ["subnet-1"]
    assert group_subnets(
        args.model_copy(update={"subnet_ids": []}), EksClusterRef("c", "sg", "arn", "vpc", ["subnet-2"]), placed=False
    ) == ["subnet-2"]


def test_each_platform_s_namespace_holds_its_public_names():
    import importlib

    import gpufleet.library as library

    found = set()
    for name in ("ecs", "eks", "k8s", "ack", "gke", "aks", "network"):
        namespace = importlib.import_module(f"gpufleet.library.{name}")
        public = [n for n in vars(namespace) if not n.startswith("_")]
        assert public and not hasattr(namespace, "__all__")  # its names are listed once, by their imports
        assert all(getattr(namespace, n) is getattr(library, n) for n in public)
        found |= set(public)
    # The flat module lists every platform's names, and nothing else.
    assert set(library.__all__) == found
