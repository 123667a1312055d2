"""`gpufleet diff BASE HEAD`: pairs of real plans from the shipped stacks (scale a node group, switch
an AMI variant, drop EFA, relabel an ACK pool, add a violating workload), both plan formats, the exit
codes, and a golden Markdown diff a reviewer reads. An unedited stack's plan is its golden plan
(tests/golden/, which the preview tests hold equal to a fresh preview); an edited one is previewed."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gpufleet.cli.diff import diff_plans
from gpufleet.cli.diff_render import render
from tests.conftest import ROOT, assert_golden, preview_plan, run_cli
from tests.plan_edits import golden
from tests.cli.test_check import _as_pulumi_preview

GOLDEN = ROOT / "tests" / "golden" / "diff-eks-p5-efa.md"
FIRST = "; the old one is deleted first, so the group has no capacity until the new one is up"


def _plan_of(tmp_path: Path, stack: str, edit=None) -> dict:
    """The plan of a shipped stack, or of a copy edited by `edit(config)` under the same stack name
    (so URNs and the stack's tags stay those of the stack)."""
    if edit is None:
        return preview_plan(stack)
    yaml = YAML(typ="rt")
    doc = yaml.load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    edit(doc["config"])
    folder = tmp_path / "head"
    folder.mkdir(exist_ok=True)
    path = folder / f"Pulumi.{stack}.yaml"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    return preview_plan("--config-file", str(path))


def _diff(tmp_path: Path, base: dict, head: dict, *flags: str) -> tuple[int, str, str]:
    paths = []
    for name, plan in (("base", base), ("head", head)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(plan))
        paths.append(str(path))
    return run_cli("diff", *paths, *flags)


def _json_diff(tmp_path, base, head) -> tuple[int, dict]:
    code, out, err = _diff(tmp_path, base, head, "--json")
    assert "Traceback" not in err
    return code, json.loads(out)


def _changed(tmp_path, stack: str, edit) -> dict:
    """The JSON diff of a shipped stack's golden plan against the plan of a copy edited by
    `edit(config)`: a change (exit 3)."""
    code, d = _json_diff(tmp_path, golden(stack), _plan_of(tmp_path, stack, edit))
    assert code == 3
    return d


def _p5_head(c):
    group = c["gpufleet:eks"]["nodeGroups"][0]
    group["desiredSize"] = 1
    group["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"


@pytest.fixture(scope="module")
def p5_pair(tmp_path_factory) -> tuple[dict, dict]:
    return golden("eks-p5-efa"), _plan_of(tmp_path_factory.mktemp("p5"), "eks-p5-efa", _p5_head)


def test_identical_plans_are_exit_0(tmp_path):
    plan = golden("eks-g5-timeslice")
    code, out, _ = _diff(tmp_path, plan, plan)
    assert code == 0 and "No changes." in out


def test_scaling_a_node_group_changes_counts_in_place(tmp_path):
    d = _changed(tmp_path, "eks-trn1", lambda c: c["gpufleet:eks"]["nodeGroups"][0].update(desiredSize=4, maxSize=4))
    [group] = d["accelerators"]["groups"]
    assert "desired instances 2 -> 4" in group["notes"]
    # trn1.32xlarge: 16 chips, 32 NeuronCores, 8 EFA interfaces per node.
    assert d["accelerators"]["totals"]["before"] == {"gpus": 0, "neuronChips": 32, "neuronCores": 64, "efaInterfaces": 16}
    assert d["accelerators"]["totals"]["after"] == {"gpus": 0, "neuronChips": 64, "neuronCores": 128, "efaInterfaces": 32}
    assert d["drains"] == [] and d["resources"]["replaced"] == []
    [updated] = [u for u in d["resources"]["updated"] if u["type"] == "aws:eks/nodeGroup:NodeGroup"]
    assert {"path": "scalingConfig.desiredSize", "before": 2, "after": 4} in updated["properties"]
    assert d["affected"] == [] and d["refusedDeletes"] == [] and d["policy"]["new"] == []


def test_switching_the_ecs_ami_variant_says_running_instances_stay(tmp_path):
    d = _changed(tmp_path, "ecs-gpu", lambda c: c["gpufleet:ecs"]["capacityProviders"][0].__setitem__("amiVariant", "al2"))
    [group] = d["accelerators"]["groups"]
    assert group["group"] == "ml-gpu-inference"
    assert "AMI gpu al2023 -> gpu al2" in group["notes"]
    assert any("running instances are not replaced" in n for n in group["notes"])
    [template] = [u for u in d["resources"]["updated"] if u["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert any(p["path"] == "imageId" for p in template["properties"])


def test_dropping_efa_replaces_the_node_group(tmp_path):
    """Without EFA the group spans every zone: its subnets change, which EKS cannot do in place."""
    d = _changed(tmp_path, "eks-trn1", lambda c: c["gpufleet:eks"]["nodeGroups"][0].pop("efa"))
    [group] = d["accelerators"]["groups"]
    assert "EFA interfaces per instance 8 -> 0" in group["notes"] and "EFA interfaces (desired) 16 -> 0" in group["notes"]
    assert [x["reason"] for x in d["drains"]] == [
        "the node group is replaced (subnetIds[1] cannot change in place); the old one is deleted first, so the group has no "
        "capacity until the new one is up"
    ]
    removed = {r["type"] for r in d["resources"]["removed"]}
    assert "aws:ec2/placementGroup:PlacementGroup" in removed


def test_changing_the_ami_type_replaces_the_node_group(tmp_path, p5_pair):
    code, d = _json_diff(tmp_path, *p5_pair)
    assert code == 3
    [replaced] = d["resources"]["replaced"]
    assert replaced["type"] == "aws:eks/nodeGroup:NodeGroup" and replaced["reason"] == "amiType cannot change in place"
    # EKS refuses a second group of the same name: the old one goes first, and the diff says so.
    assert d["drains"][0]["reason"] == (
        "the node group is replaced (amiType cannot change in place); the old one is deleted first, so the group has no capacity "
        "until the new one is up"
    )
    assert "AMI type AL2023_x86_64_NVIDIA -> BOTTLEROCKET_x86_64_NVIDIA" in d["accelerators"]["groups"][0]["notes"]


def test_relabelling_an_ack_pool_replaces_it(tmp_path):
    d = _changed(tmp_path, "ack-shared-gpu", lambda c: c["gpufleet:ack"]["nodePools"][0].__setitem__("placement", "spread"))
    [replaced] = d["resources"]["replaced"]
    assert replaced["type"] == "alicloud:cs/nodePool:NodePool" and replaced["reason"].startswith("replaceOnChanges labels")
    assert d["drains"] == [
        {
            "group": "v100-core-mem",
            "platform": "ack",
            "urn": replaced["urn"],
            "reason": f"the ACK node pool is replaced ({replaced['reason']})" + FIRST,
        }
    ]


def _with_violating_task(plan: dict) -> dict:
    """A task definition added outside the stack spec (which would refuse it): 9 GPUs pinned to p4d."""
    head = copy.deepcopy(plan)
    [train] = [r for r in head["resources"] if r["type"] == "aws:ecs/taskDefinition:TaskDefinition" and r["name"].endswith("train")]
    extra = copy.deepcopy(train)
    containers = json.loads(extra["inputs"]["containerDefinitions"])
    containers[0]["resourceRequirements"] = [{"type": "GPU", "value": "9"}]
    extra["inputs"]["containerDefinitions"] = json.dumps(containers)
    extra["urn"], extra["name"] = train["urn"] + "-big", train["name"] + "-big"
    head["resources"].append(extra)
    return head


def test_a_new_mandatory_violation_is_exit_1_and_its_removal_is_a_fix(tmp_path):
    base = golden("ecs-gpu")
    head = _with_violating_task(base)
    code, d = _json_diff(tmp_path, base, head)
    assert code == 1
    # The type rule and the placement rule both see it: 9 GPUs fit no p4d.24xlarge.
    assert sorted(n["policy"] for n in d["policy"]["new"]) == ["ecs-gpus-fit-instance", "ecs-tasks-placeable"]
    assert all(n["level"] == "mandatory" and "9 GPUs" in n["message"] for n in d["policy"]["new"])
    assert [a["name"] for a in d["resources"]["added"]] == [head["resources"][-1]["name"]]
    code, d = _json_diff(tmp_path, head, base)
    assert code == 3 and sorted(f["policy"] for f in d["policy"]["fixed"]) == ["ecs-gpus-fit-instance", "ecs-tasks-placeable"]
    assert d["policy"]["new"] == []


def test_pulumi_preview_documents_diff_like_gpufleet_plans(tmp_path, p5_pair):
    base, head = p5_pair
    _, ours = _json_diff(tmp_path, base, head)
    _, theirs = _json_diff(tmp_path, _as_pulumi_preview(base), _as_pulumi_preview(head))
    assert theirs["accelerators"] == ours["accelerators"]
    # A preview's new states do not carry deleteBeforeReplace (only a replacement's step order shows
    # it): the drain says less, nothing else differs.
    assert theirs["drains"] == [{**x, "reason": x["reason"].removesuffix(FIRST)} for x in ours["drains"]] != ours["drains"]
    assert theirs["resources"]["replaced"] == [{**x, "deleteFirst": False} for x in ours["resources"]["replaced"]]


def test_bad_input_is_exit_2(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(golden("eks-g5-timeslice")))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out, err = run_cli("diff", str(good), str(bad))
    assert code == 2 and out == "" and "bad.json: not JSON" in err and "Traceback" not in err
    code, _, err = run_cli("diff", str(good), str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read it" in err


def test_golden_markdown(p5_pair):
    """The pull-request comment for the p5 pair; GPUFLEET_UPDATE_GOLDEN=1 rewrites it after a reviewed change."""
    base, head = p5_pair
    text = render(diff_plans(base["resources"], head["resources"], [], []), "main", "scale-down-bottlerocket", markdown=True)
    assert_golden(GOLDEN, text)
    assert "### Replaces instances (running jobs are drained)" in text and "| GPUs (desired) | 16 | 8 |" in text


def test_terminal_output_reads_the_same_facts(tmp_path, p5_pair):
    code, out, _ = _diff(tmp_path, *p5_pair)
    assert code == 3
    assert "GPUs (desired): 16 -> 8" in out and "eks p5: the node group is replaced (amiType cannot change in place)" in out


def test_a_launch_template_change_rolls_the_node_groups_nodes(tmp_path):
    base = golden("eks-g5-timeslice")
    head = _plan_of(tmp_path, "eks-g5-timeslice", lambda c: c["gpufleet:eks"]["nodeGroups"][0].__setitem__("rootVolumeGiB", 400))
    code, d = _json_diff(tmp_path, base, head)
    assert code == 3 and d["resources"]["replaced"] == []
    assert [x["reason"] for x in d["drains"]] == ["its launch template changed: the node group rolls its nodes to the new version"]


def test_toleration_changes_are_listed(tmp_path):
    d = _changed(tmp_path, "ack-shared-gpu", lambda c: c["gpufleet:ack"]["nodePools"][0].pop("taint"))
    [changed] = d["tolerations"]
    assert changed["name"] == "ack-cuda-sample" and changed["properties"][0]["path"].startswith("spec.template.spec.tolerations")
    [pool] = [g for g in d["accelerators"]["groups"] if g["group"] == "v100-core-mem"]
    assert "taints removed: gpufleet.io/shared-gpu=core-mem:NoSchedule" in pool["notes"]


def test_a_change_that_leaves_pods_pending_is_named(tmp_path):
    base = golden("eks-p5-efa")
    head = copy.deepcopy(base)
    head["resources"] = [r for r in head["resources"] if not r["name"].endswith("-system")]  # the system node group dropped
    code, d = _json_diff(tmp_path, base, head)
    assert code == 1  # new mandatory findings: k8s-pods-schedulable
    worse = {e["name"]: e for e in d["placement"]["worse"]}
    assert set(worse) == {"pod Deployment kube-system/coredns", "pod Deployment mpi-operator/mpi-operator", "pod MPIJob default/nccl-tests-p5 (Launcher)"}
    assert worse["pod Deployment kube-system/coredns"]["before"] == "scheduled" and worse["pod Deployment kube-system/coredns"]["after"] == "pending"
    assert worse["pod Deployment kube-system/coredns"]["why"] == "0/2 nodes are available: 2 node(s) had untolerated taint(s)."
    code, d = _json_diff(tmp_path, head, base)
    assert len(d["placement"]["better"]) == 3 and d["placement"]["worse"] == []
    _, text, _ = _diff(tmp_path, base, head, "--format", "markdown")
    assert "### Placement" in text and "- pod Deployment kube-system/coredns: scheduled -> pending: 0/2 nodes are available" in text


def test_a_type_change_rolls_the_group_and_reads_in_one_line_per_list(tmp_path):
    """The reviewer's change on eks-p5-efa: p5 -> p5en, maxSize 2 -> 4, EFA interfaces 32 -> 16. A
    capacity-block group names its type in the launch template: a new template version, a roll."""

    def edit(c):
        group = c["gpufleet:eks"]["nodeGroups"][0]
        group.update(instanceType="p5en.48xlarge", maxSize=4)
        group["efa"]["interfaces"] = 16

    base, head = golden("eks-p5-efa"), _plan_of(tmp_path, "eks-p5-efa", edit)
    code, d = _json_diff(tmp_path, base, head)
    assert code == 3
    assert d["accelerators"]["totals"]["after"]["efaInterfaces"] == 32
    assert [x["reason"] for x in d["drains"]] == ["its launch template changed: the node group rolls its nodes to the new version"]
    assert d["affected"] == [] and d["refusedDeletes"] == [] and d["resources"]["replaced"] == []
    assert [f for f in d["policy"]["new"] if f["policy"] == "update-drains-capacity"] == []  # a roll, not a replacement
    _, out, _ = _diff(tmp_path, base, head)
    # 96 property changes of the 16 interfaces that go read as one line.
    assert "networkInterfaces: 16 entries removed ([17]-[32]; networkCardIndex 16-31)" in out
    assert "networkInterfaces[17]" not in out and len(out.splitlines()) < 40
    # The README shows this output: its lines are lines of it, in order.
    readme = (ROOT / "README.md").read_text().split("<!-- diff-p5en:", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    shown = readme.splitlines()
    assert len(shown) >= 6
    positions = [out.splitlines().index(line) for line in shown]
    assert positions == sorted(positions)


def test_a_new_vpc_cidr_replaces_what_reads_the_subnets(tmp_path):
    """A replaced VPC's and subnets' ids are unknown until they exist: what reads them is replaced
    where the input cannot change in place (the node groups' subnetIds), updated elsewhere."""
    d = _changed(tmp_path, "eks-p5-efa", lambda c: c["gpufleet:eks"]["network"]["create"].__setitem__("cidr", "10.61.0.0/16"))
    affected = {(a["type"].rsplit(":", 1)[-1], a["name"]): a for a in d["affected"]}
    assert affected[("NodeGroup", "p5-train-p5")]["effect"] == "replaced"
    assert affected[("NodeGroup", "p5-train-p5")]["because"] == ["subnetIds <- Subnet p5-train-private-us-east-1a (replaced)"]
    assert affected[("SecurityGroup", "p5-train-p5-efa")]["effect"] == "replaced"  # vpcId
    assert affected[("LaunchTemplate", "p5-train-p5")]["effect"] == "updated"  # its security group is new
    assert affected[("Cluster", "p5-train")]["effect"] == "updated"
    drains = {x["group"]: x["reason"] for x in d["drains"]}
    assert drains["p5"].startswith("the node group is replaced (subnetIds comes from Subnet p5-train-private-us-east-1a (replaced)")
    assert drains["system-*"].startswith("the node group is replaced (subnetIds comes from Subnet")
    replaced = {r["name"] for r in d["resources"]["replaced"]}
    assert {"p5-train", "p5-train-p5", "p5-train-system", "p5-train-nat", "p5-train-p5-efa"} <= replaced
    # The pack's update policy, given BASE as the deployed stack, names what drains (the system
    # group carries no accelerators: not named).
    [drain] = [f for f in d["policy"]["new"] if f["policy"] == "update-drains-capacity"]
    assert drain["level"] == "advisory" and drain["urn"].endswith("NodeGroup::p5-train-p5")
    assert drain["message"].endswith(
        "eks p5 is replaced by this update: its 2 running p5.48xlarge instances with 16 GPUs, 64 EFA interfaces drain and their jobs stop"
    )


def test_removing_a_zone_under_running_ecs_instances_is_a_refused_delete(tmp_path):
    d = _changed(tmp_path, "ecs-gpu", lambda c: c["gpufleet:ecs"]["network"]["create"].__setitem__("zones", ["us-east-1a"]))
    assert {(a["name"], a["effect"]) for a in d["affected"]} == {("ml-gpu-inference", "updated"), ("ml-gpu-training", "updated")}
    [refused] = d["refusedDeletes"]
    assert (refused["name"], refused["how"], refused["heldBy"]) == ("ml-gpu-private-us-east-1b", "removed", ["ml-gpu-inference", "ml-gpu-training"])
    assert refused["reason"].startswith("You must terminate all running instances in the subnet before you can delete the subnet")


def test_renaming_an_ecs_capacity_provider_moves_the_cluster_and_services(tmp_path):
    def rename(c):
        ecs = c["gpufleet:ecs"]
        ecs["capacityProviders"][0]["name"] = "serving"
        for workload in ecs["workloads"]:
            if workload.get("capacityProvider") == "inference":
                workload["capacityProvider"] = "serving"

    d = _changed(tmp_path, "ecs-gpu", rename)
    assert {(a["name"], a["effect"]) for a in d["affected"]} == {("ml-gpu", "updated"), ("ml-gpu-llm-serve", "updated")}
    assert all(b.endswith("CapacityProvider ml-gpu-inference (removed)") for a in d["affected"] for b in a["because"])
    assert [(x["group"], x["reason"]) for x in d["drains"]] == [("ml-gpu-inference", "the capacity provider's group is removed")]
    assert d["refusedDeletes"] == []
    # The removed group is no resource of HEAD: the finding is on the stack.
    [drain] = [f for f in d["policy"]["new"] if f["policy"] == "update-drains-capacity"]
    assert drain.get("urn") is None and drain["message"].endswith(
        "ecs ml-gpu-inference is removed by this update: its 1 running g5.12xlarge instance with 4 GPUs drains and its jobs stop"
    )


def _state(r: dict) -> dict:
    """A plan resource as `pulumi preview --json` writes a step's state (apitype.ResourceV3 fields)."""
    state = {k: r[k] for k in ("urn", "type", "custom", "inputs", "dependencies", "propertyDependencies") if k in r}
    return {**state, "parent": r["parent"] or ""}


def _deployed_preview(base: dict, head: dict, verdicts: dict[str, dict]) -> dict:
    """`pulumi preview --json` against a stack where BASE is deployed and HEAD is the program, laid
    out as the CLI does (pulumi pkg/display/json.go previewStep: op, urn, oldState, newState,
    diffReasons, replaceReasons, detailedDiff). `verdicts` gives the engine's op for the resources
    that change, by "Kind name"; the others are `same`. A delete-before-replace writes delete-replaced
    before create-replacement (pulumi tests/integration/steps/step4)."""
    old = {r["urn"]: r for r in base["resources"]}
    steps = []
    for r in head["resources"]:
        v = verdicts.get(f"{r['type'].rsplit(':', 1)[-1]} {r['name']}", {"op": "same"})
        detail = {p: {"kind": "update-replace" if p in v.get("replaceReasons", []) else "update", "inputDiff": True} for p in v.get("diffReasons", [])}
        reasons = {k: v[k] for k in ("diffReasons", "replaceReasons") if k in v}
        if v["op"] == "replace":
            order = ["delete-replaced", "replace", "create-replacement"] if v.get("deleteFirst") else ["create-replacement", "replace", "delete-replaced"]
            for op in order:
                step = {"op": op, "urn": r["urn"], **reasons, "detailedDiff": detail}
                if op != "create-replacement":
                    step["oldState"] = _state(old[r["urn"]])
                if op != "delete-replaced":
                    step["newState"] = _state(r)
                steps.append(step)
            continue
        step = {"op": v["op"], "urn": r["urn"], "oldState": _state(old[r["urn"]]), "newState": _state(r), **reasons, "detailedDiff": detail or None}
        if v["op"] == "same":
            # What the engine still shows for an unchanged resource: an output it has not read yet.
            step["newState"]["inputs"] = {**step["newState"]["inputs"], "tagsAll": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"}
        steps.append(step)
    return {"steps": steps, "changeSummary": {"same": len(head["resources"]) - len(verdicts), "replace": 1, "update": len(verdicts) - 1}}


def test_one_real_preview_is_read_with_the_engines_verdict(tmp_path, p5_pair):
    base, head = p5_pair
    preview = _deployed_preview(
        base,
        head,
        {
            "NodeGroup p5-train-p5": {"op": "replace", "diffReasons": ["amiType", "scalingConfig"], "replaceReasons": ["amiType"], "deleteFirst": True},
            "LaunchTemplate p5-train-p5": {"op": "update", "diffReasons": ["blockDeviceMappings"]},
        },
    )
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(preview))
    code, out, err = run_cli("diff", str(path), "--json")
    assert code == 3, err
    d = json.loads(out)
    [replaced] = d["resources"]["replaced"]
    assert (replaced["name"], replaced["reason"], replaced["deleteFirst"]) == ("p5-train-p5", "the engine: replaceReasons amiType", True)
    # The engine said same for everything else: the unknown tagsAll it shows is not a change.
    assert [(u["type"], u["name"]) for u in d["resources"]["updated"]] == [("aws:ec2/launchTemplate:LaunchTemplate", "p5-train-p5")]
    assert {p["path"].split("[")[0] for p in d["resources"]["updated"][0]["properties"]} == {"blockDeviceMappings"}
    assert [x["reason"] for x in d["drains"]] == ["the node group is replaced (the engine: replaceReasons amiType)" + FIRST]
    assert "AMI type AL2023_x86_64_NVIDIA -> BOTTLEROCKET_x86_64_NVIDIA" in d["accelerators"]["groups"][0]["notes"]


def test_one_plan_alone_must_be_a_deployed_preview(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(golden("ecs-gpu")))
    code, _, err = run_cli("diff", str(plan))
    assert code == 2 and "one plan alone is read only as `pulumi preview --json` of a deployed stack" in err


def test_two_previews_do_not_report_autoname_suffixes_or_values_that_became_known(tmp_path):
    """Two previews of one program: the first ran before anything existed (ids unknown), the second
    after; every auto-named resource got a new random suffix. Neither is a change."""
    plan = golden("ecs-gpu")
    first, second = copy.deepcopy(plan), copy.deepcopy(plan)
    for r in first["resources"]:
        if r["type"] == "aws:iam/role:Role":
            r["inputs"]["name"] = f"{r['name']}-32c8f2c"
    for r in second["resources"]:
        if r["type"] == "aws:iam/role:Role":
            r["inputs"]["name"] = f"{r['name']}-4936161"
        for key, value in list(r["inputs"].items()):
            if value == "04da6b54-80e4-46f7-96ec-b56ff0331ba9":
                r["inputs"][key] = "arn:aws:iam::123456789012:role/known-now"
    code, d = _json_diff(tmp_path, _as_pulumi_preview(first), _as_pulumi_preview(second))
    assert code == 0 and d["resources"]["updated"] == [] and d["resources"]["replaced"] == []
    # A real rename still is one.
    for r in second["resources"]:
        if r["type"] == "aws:iam/role:Role":
            r["inputs"]["name"] = "renamed-role"
    code, d = _json_diff(tmp_path, _as_pulumi_preview(first), _as_pulumi_preview(second))
    assert code == 3 and any(p["path"] == "name" for u in d["resources"]["updated"] for p in u["properties"])


def test_a_share_change_is_listed_at_its_field(tmp_path):
    """Growing an MPS share changes the chat task definition: the diff names the share's memory with
    its old and new value."""

    def grow(c):
        c["gpufleet:ecs"]["workloads"][0]["containers"][0]["gpuShare"]["memoryMiB"] = 30000

    base, head = golden("ecs-mps"), _plan_of(tmp_path, "ecs-mps", grow)
    code, out, err = _diff(tmp_path, base, head)
    assert "Traceback" not in err
    assert "sharingStrategy.nvidiaMps.memory: 22000 -> 30000" in out
    assert out.count("aws:ecs/taskDefinition:TaskDefinition") == 1 and "ml-shared-gpu-chat" in out


@pytest.mark.parametrize("value", [None, ""])
def test_a_head_template_with_no_instance_type_is_an_unknown_group_not_a_crash(tmp_path, value):
    """No type (None) is EKS's default type, as the placement reads it; an empty one is no type at all."""
    from gpufleet.catalog import catalog

    expected = catalog.load().facts.eks.node_group_default_instance_type.value if value is None else "?"
    base = golden("eks-p5-efa")
    head = json.loads(json.dumps(base))
    for r in head["resources"]:
        if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate":
            r["inputs"]["instanceType"] = value
    code, d = _json_diff(tmp_path, base, head)
    assert code == 1  # the pack refuses the template (aws-api-model, eks-capacity-block); the diff still reads it
    [group] = d["accelerators"]["groups"]
    assert f"instance type p5.48xlarge -> {expected}" in group["notes"]


def _karpenter_plan(family: str = "g5", limit: int = 8, alias: str = "al2023@latest", weight: int | None = None) -> list[dict]:
    spec = {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [family]}],
                                  "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"}}}, "limits": {"nvidia.com/gpu": limit}}
    if weight is not None:
        spec["weight"] = weight
    pool = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.sh/v1:NodePool::gpu-pool", "type": "kubernetes:karpenter.sh/v1:NodePool", "name": "gpu-pool",
            "inputs": {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"}, "spec": spec}}
    node_class = {"urn": "urn:pulumi:s::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::gpu-class", "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
                  "name": "gpu-class", "inputs": {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "gpu"},
                                                  "spec": {"amiSelectorTerms": [{"alias": alias}], "role": "node"}}}
    return [pool, node_class]


def test_a_change_that_drifts_a_karpenter_pool_says_its_nodes_are_replaced():
    """Karpenter's drift (disruption.md): the node class's AMI and the pool's template drift every
    node; requirements only the nodes they no longer admit; limits and weight none."""
    def drains(head):
        return [(d["group"], d["reason"]) for d in diff_plans(_karpenter_plan(), head, [], []).drains]

    assert drains(_karpenter_plan(alias="al2023@v20260101")) == [
        ("gpu", "its EC2NodeClass gpu changed (spec.amiSelectorTerms[0].alias): Karpenter replaces every node of the pool, within its disruption budgets")]
    assert drains(_karpenter_plan(family="g6e")) == [
        ("gpu", "its requirements changed: Karpenter replaces the nodes they no longer admit, within the pool's disruption budgets")]
    assert drains(_karpenter_plan(limit=16)) == drains(_karpenter_plan(weight=10)) == []
    head = _karpenter_plan()
    head[0]["inputs"]["spec"]["template"]["spec"]["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    [(group, reason)] = drains(head)
    assert reason.startswith("its node template changed (spec.template.spec.taints")


def test_a_change_that_leaves_pods_unprovisionable_is_named():
    pod = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
    web = {"urn": "urn:pulumi:s::p::kubernetes:apps/v1:Deployment::web", "type": "kubernetes:apps/v1:Deployment", "name": "web",
           "inputs": {"metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 1, "template": {"spec": pod}}}}
    result = diff_plans([*_karpenter_plan("m5"), web], [*_karpenter_plan("m5x"), web], [], [])
    [worse] = result.placement_worse
    assert (worse["name"], worse["before"], worse["after"]) == ("pod Deployment default/web", "provisioned", "pending")
    assert "NodePool gpu: its requirements admit no instance type of the catalog" in worse["why"]


COST_GOLDEN = ROOT / "tests" / "golden" / "diff-p5-maxsize.md"


def _p5_on_demand(c):
    group = c["gpufleet:eks"]["nodeGroups"][0]
    group["capacityType"] = "ON_DEMAND"
    group.pop("capacityReservationId", None)


def test_doubling_a_p5_group_s_max_size_names_the_added_cost(tmp_path):
    """p5 maxSize 2 -> 4 (on demand, so the snapshot prices it): +2 x $55.04/h at max, nothing at
    desired. GPUFLEET_UPDATE_GOLDEN=1 rewrites the golden Markdown after a reviewed change."""
    def doubled(c):
        _p5_on_demand(c)
        c["gpufleet:eks"]["nodeGroups"][0]["maxSize"] = 4

    (tmp_path / "b").mkdir()
    (tmp_path / "h").mkdir()
    base, head = _plan_of(tmp_path / "b", "eks-p5-efa", _p5_on_demand), _plan_of(tmp_path / "h", "eks-p5-efa", doubled)
    d = diff_plans(base["resources"], head["resources"], [], [])
    [p5] = d.cost["groups"]
    assert p5["changes"] == ["maxSize 2 -> 4"] and p5["max"]["hourly"] == 110.08 and p5["desired"]["hourly"] == 0
    text = render(d, "main", "p5-max-4", markdown=True)
    assert_golden(COST_GOLDEN, text)
    assert "- eks p5 (p5.48xlarge) maxSize 2 -> 4: +$110.08/h at max (+$80,358.40/month)" in text
    assert "$110.08/h" not in render(diff_plans(base["resources"], base["resources"], [], []), "main", "main", markdown=True)


def test_a_change_to_a_group_of_unknown_price_says_so(tmp_path):
    """eks-p5-efa's p5 group is a Capacity Block: doubling its maxSize has no public price, and the
    diff says that instead of passing over it."""
    def doubled(c):
        c["gpufleet:eks"]["nodeGroups"][0]["maxSize"] = 4

    d = diff_plans(golden("eks-p5-efa")["resources"], _plan_of(tmp_path, "eks-p5-efa", doubled)["resources"], [], [])
    [p5] = d.cost["groups"]
    assert p5["changes"] == ["maxSize 2 -> 4"] and p5["max"]["hourly"] is None and "Capacity Block" in p5["unknown"]
    text = render(d, "main", "head", markdown=False)
    assert "  - eks p5 (p5.48xlarge) maxSize 2 -> 4: cost unknown (a Capacity Block's price is set when the block is bought" in text
    assert "  - fleet: ±$0.00/h at max (±$0.00/month), ±$0.00/h at desired (±$0.00/month) (groups of unknown price left out)" in text
