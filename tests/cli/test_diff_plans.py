"""`gpufleet diff --json` over small edits of the shipped stacks' golden plans: how resources are
matched, which property changes are noise, which replace a resource (and what that drags along), and
the lines a reviewer reads for each change. Plans are read, never previewed (milliseconds each); the
pack's findings, exit codes and both output formats are test_diff.py's."""

from __future__ import annotations

import json

import pytest

from gpufleet.cli.diff_render import _cost_lines
from gpufleet.engine.runtime import UNKNOWN
from tests.plan_edits import diff_json, edited, golden


def _resource(plan: dict, name: str, type_suffix: str) -> dict:
    [r] = [r for r in plan["resources"] if r["name"] == name and r["type"].endswith(type_suffix)]
    return r


def _by_name(entries: list[dict]) -> dict[str, dict]:
    return {e["name"]: e for e in entries}


def _containers(r: dict) -> list[dict]:
    return json.loads(r["inputs"]["containerDefinitions"])


def _set_containers(r: dict, containers: list[dict]) -> None:
    r["inputs"]["containerDefinitions"] = json.dumps(containers)


def test_plans_of_one_program_under_two_stack_names_match_by_urn(tmp_path):
    base = golden("ecs-gpu")
    head = json.loads(json.dumps(base).replace("urn:pulumi:ecs-gpu::", "urn:pulumi:ecs-gpu-staging::"))
    d = diff_json(tmp_path, base, head)
    assert d["changed"] is False and d["resources"] == {"added": [], "removed": [], "replaced": [], "updated": []}


def test_a_container_definition_change_is_read_inside_the_json_and_registers_a_new_revision(tmp_path):
    def new_model(r):
        containers = _containers(r)
        containers[0]["environment"][0]["value"] = "example/13b-instruct"
        _set_containers(r, containers)

    d = diff_json(tmp_path, golden("ecs-gpu"), edited("ecs-gpu", "ml-gpu-llm-serve", "taskDefinition:TaskDefinition", new_model))
    [replaced] = d["resources"]["replaced"]
    assert replaced["name"] == "ml-gpu-llm-serve"
    path = "containerDefinitions[0].environment[0].value"
    assert replaced["properties"] == [{"path": path, "before": "example/7b-instruct", "after": "example/13b-instruct"}]
    assert replaced["summary"] == [f"{path}: example/7b-instruct -> example/13b-instruct"]
    assert replaced["reason"] == f"{path} cannot change in place" and replaced["deleteFirst"] is False
    # The service reads the new revision's ARN: it is updated in place (a rolling deployment), not replaced.
    [service] = d["resources"]["updated"]
    assert (service["name"], service["properties"], service["summary"]) == ("ml-gpu-llm-serve", [], [])
    [affected] = d["affected"]
    assert affected["name"] == "ml-gpu-llm-serve" and affected["type"].endswith("service:Service")
    assert affected["effect"] == "updated" and affected["because"] == ["taskDefinition <- TaskDefinition ml-gpu-llm-serve (replaced)"]


def test_an_in_place_change_is_an_update_with_no_reason(tmp_path):
    head = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", lambda r: r["inputs"].update(desiredCount=6))
    d = diff_json(tmp_path, golden("ecs-gpu"), head)
    assert d["resources"]["replaced"] == [] and d["affected"] == []
    [updated] = d["resources"]["updated"]
    assert updated["summary"] == ["desiredCount: 4 -> 6"] and "reason" not in updated


def test_a_field_that_only_starts_like_a_replacing_one_changes_in_place(tmp_path):
    # amiType replaces an EKS node group; a key that merely begins with it does not.
    head = edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", lambda r: r["inputs"].update(amiTypeHint="x"))
    d = diff_json(tmp_path, golden("eks-g5-timeslice"), head)
    assert [u["name"] for u in d["resources"]["updated"]] == ["inference-g5"] and d["resources"]["replaced"] == []


def test_replace_on_changes_names_its_keys_and_the_paths_that_changed(tmp_path):
    def edit(r):
        r["replaceOnChanges"] = ["desiredCount", "tags"]
        r["inputs"]["desiredCount"] = 5

    base = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", lambda r: r.update(replaceOnChanges=["desiredCount", "tags"]))
    d = diff_json(tmp_path, base, edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", edit))
    [replaced] = d["resources"]["replaced"]
    assert replaced["reason"] == "replaceOnChanges desiredCount, tags: desiredCount changed"


def test_a_replacement_deleted_first_says_so(tmp_path):
    def edit(r):
        r["deleteBeforeReplace"] = True
        r["inputs"]["instanceTypes"] = ["g5.4xlarge"]

    d = diff_json(tmp_path, golden("eks-g5-timeslice"), edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", edit))
    [replaced] = d["resources"]["replaced"]
    assert replaced["deleteFirst"] is True and replaced["reason"] == "instanceTypes[0] cannot change in place"
    assert [x["reason"] for x in d["drains"]] == [
        "the node group is replaced (instanceTypes[0] cannot change in place); the old one is deleted first, so the group has no capacity until the new one is up"
    ]


def test_values_known_now_and_new_autoname_suffixes_are_not_changes(tmp_path):
    def before(r):
        r["inputs"]["cluster"] = UNKNOWN
        r["inputs"]["name"] = "llm-serve-1a2b3c4"

    def after(r):
        r["inputs"]["cluster"] = "arn:aws:ecs:us-east-1:123456789012:cluster/ml-gpu"
        r["inputs"]["name"] = "llm-serve-9f8e7d6"

    base = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", before)
    assert diff_json(tmp_path, base, edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", after))["changed"] is False


@pytest.mark.parametrize(
    "before, after, line",
    [
        ("llm-serve-1a2b3c4", "llm-serve-9f8e7d6x", "name: llm-serve-1a2b3c4 -> llm-serve-9f8e7d6x"),  # not an auto-name
        ("llm-serve-1a2b3c4", "llm-other-9f8e7d6", "name: llm-serve-1a2b3c4 -> llm-other-9f8e7d6"),  # another logical name
        ("llm-serve", UNKNOWN, "name: llm-serve -> (known after apply)"),  # known before, unknown now
        (UNKNOWN, None, "name: (known after apply) -> (none)"),  # unknown before, gone now
    ],
)
def test_what_is_a_change(tmp_path, before, after, line):
    base = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", lambda r: r["inputs"].update(name=before))
    head = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", lambda r: r["inputs"].update(name=after))
    [updated] = diff_json(tmp_path, base, head)["resources"]["updated"]
    assert updated["summary"] == [line]


def _p5_interfaces(keep: int):
    def edit(r):
        r["inputs"]["networkInterfaces"] = r["inputs"]["networkInterfaces"][:keep]

    return edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", edit)


def test_list_entries_removed_or_added_whole_read_as_one_line(tmp_path):
    base = golden("eks-p5-efa")
    interfaces = _resource(base, "p5-train-p5", "launchTemplate:LaunchTemplate")["inputs"]["networkInterfaces"]
    n = len(interfaces)
    cards = [i["networkCardIndex"] for i in interfaces[n - 16:]]
    [template] = diff_json(tmp_path, base, _p5_interfaces(n - 16))["resources"]["updated"]
    first, last = min(cards), max(cards)
    assert template["summary"] == [f"networkInterfaces: 16 entries removed ([{n - 16}]-[{n - 1}]; networkCardIndex {first}-{last})"]
    [template] = diff_json(tmp_path, _p5_interfaces(n - 16), base)["resources"]["updated"]
    assert template["summary"] == [f"networkInterfaces: 16 entries added ([{n - 16}]-[{n - 1}]; networkCardIndex {first}-{last})"]
    # One small entry reads whole.
    [template] = diff_json(tmp_path, base, _p5_interfaces(n - 1))["resources"]["updated"]
    assert interfaces[-1]["securityGroups"] == [UNKNOWN, UNKNOWN]
    assert template["summary"] == [
        f"networkInterfaces: 1 entry removed ([{n - 1}]: deleteOnTermination=true, deviceIndex=0, interfaceType=efa-only, "
        f"networkCardIndex={last}, securityGroups[0]=(known after apply), securityGroups[1]=(known after apply))"
    ]


def test_removed_entries_name_their_network_cards_as_runs(tmp_path):
    base = golden("eks-p5-efa")
    n = len(_resource(base, "p5-train-p5", "launchTemplate:LaunchTemplate")["inputs"]["networkInterfaces"])

    def scatter(r):
        # the last four interfaces on cards 1, 2, 3 and 7: a run and a single
        for i, card in zip(range(n - 4, n), (1, 2, 3, 7)):
            r["inputs"]["networkInterfaces"][i]["networkCardIndex"] = card

    wide = edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", scatter)
    narrow = json.loads(json.dumps(wide))
    template = _resource(narrow, "p5-train-p5", "launchTemplate:LaunchTemplate")
    template["inputs"]["networkInterfaces"] = template["inputs"]["networkInterfaces"][:-4]
    [changed] = diff_json(tmp_path, wide, narrow)["resources"]["updated"]
    assert changed["summary"] == [f"networkInterfaces: 4 entries removed ([{n - 4}]-[{n - 1}]; networkCardIndex 1-3, 7)"]


def _description(text: str | None):
    return lambda r: r["inputs"].update(description=text)


@pytest.mark.parametrize(
    "before, after, line",
    [
        ("a\nb\nc", "a\nB\nc\nd", "description: text of 3 lines -> 4 lines (- b | + B | + d)"),
        ("a\nb", "a\n\nb", "description: text of 2 lines -> 3 lines (whitespace only)"),
        ("a\nb", "a \nb", "description: text of 2 lines -> 2 lines (- a | + a)"),  # trailing blanks are not shown
        (None, "a\nb", "description: text of 0 lines -> 2 lines (+ a | + b)"),
        ("a\nb", "one line", "description: text of 2 lines -> 1 lines (- a | - b | + one line)"),
        ("\n".join("abcdef"), "\n".join("ABCDEF"), "description: text of 6 lines -> 6 lines (- a | - b | - c | - d | ... 8 more)"),
        ("\n".join("abcd"), "\n".join("abcdX"), "description: text of 4 lines -> 5 lines (+ X)"),
        ("a\nb", "c\nd", "description: text of 2 lines -> 2 lines (- a | - b | + c | + d)"),  # four lines: all shown
    ],
)
def test_a_text_of_many_lines_reads_as_the_lines_that_changed(tmp_path, before, after, line):
    base = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", _description(before))
    head = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", _description(after))
    [template] = diff_json(tmp_path, base, head)["resources"]["updated"]
    assert template["summary"] == [line]


def test_values_print_as_a_reviewer_writes_them(tmp_path):
    def before(r):
        r["inputs"]["capacityProviderStrategies"][0]["weight"] = 1
        r["inputs"]["enableExecuteCommand"] = True

    def after(r):
        r["inputs"]["capacityProviderStrategies"][0]["weight"] = 2.5
        r["inputs"]["enableExecuteCommand"] = False
        r["inputs"]["tags"] = {"team": "ml"}

    base = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", before)
    [service] = diff_json(tmp_path, base, edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", after))["resources"]["updated"]
    assert service["summary"] == ["capacityProviderStrategies[0].weight: 1 -> 2.5", "enableExecuteCommand: true -> false", "tags.team: (none) -> ml"]


def test_findings_are_matched_by_policy_resource_and_message_across_stack_names():
    from gpufleet.cli.diff import diff_plans

    plan = golden("ecs-gpu")["resources"]
    old = {"policy": "ecs-gpus-fit-instance", "urn": "urn:pulumi:ecs-gpu::gpufleet::t::a", "message": "too many", "level": "mandatory"}
    same = {**old, "urn": "urn:pulumi:ecs-gpu-staging::gpufleet::t::a"}
    reworded = {**old, "message": "too many GPUs"}
    other = {**old, "policy": "ecs-tasks-placeable"}
    d = diff_plans(plan, plan, [old], [same, reworded, other]).as_json()
    assert d["policy"] == {"new": [reworded, other], "fixed": []}
    d = diff_plans(plan, plan, [old, other], [same]).as_json()
    assert d["policy"] == {"new": [], "fixed": [other]}


def test_a_toleration_change_is_listed_with_its_paths(tmp_path):
    def drop_gpu_toleration(r):
        r["inputs"]["values"]["tolerations"] = r["inputs"]["values"]["tolerations"][:1]

    head = edited("eks-g5-timeslice", "inference-device-plugins-nvidia", "helm.sh/v3:Release", drop_gpu_toleration)
    d = diff_json(tmp_path, golden("eks-g5-timeslice"), head)
    [entry] = d["tolerations"]
    assert entry["name"] == "inference-device-plugins-nvidia"
    assert [c["path"] for c in entry["properties"]] == ["values.tolerations[1].effect", "values.tolerations[1].key", "values.tolerations[1].operator"]


def test_a_change_that_leaves_tasks_pending_is_worse_and_its_undoing_better(tmp_path):
    base = golden("ecs-gpu")
    head = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", lambda r: r["inputs"].update(desiredCount=99))
    d = diff_json(tmp_path, base, head)
    [worse] = d["placement"]["worse"]
    assert (worse["name"], worse["before"], worse["after"]) == ("task llm-serve", "placed", "pending") and worse["why"]
    assert d["placement"]["better"] == []
    d = diff_json(tmp_path, head, base)
    assert [(b["name"], b["before"], b["after"]) for b in d["placement"]["better"]] == [("task llm-serve", "pending", "placed")]
    assert d["placement"]["worse"] == []


def _replicas(n: int) -> dict:
    return edited("eks-g5-timeslice", "inference-llm-serve", "apps/v1:Deployment", lambda r: r["inputs"]["spec"].update(replicas=n))


def test_pods_placeable_only_after_a_scale_up_sit_between_scheduled_and_pending(tmp_path):
    # g5: 2 nodes (8 at most) of 1 GPU shared 4 ways: 8 pods now, 32 after scale-up.
    now, later, never = _replicas(8), _replicas(9), _replicas(33)
    [worse] = diff_json(tmp_path, now, later)["placement"]["worse"]
    assert (worse["name"], worse["before"], worse["after"]) == ("pod Deployment default/llm-serve", "scheduled", "after-scale-up")
    assert worse["why"] == "needs 1 new node of g5 (a cluster autoscaler or a larger desiredSize)"
    [worse] = diff_json(tmp_path, later, never)["placement"]["worse"]
    assert (worse["before"], worse["after"]) == ("after-scale-up", "pending")
    [better] = diff_json(tmp_path, never, later)["placement"]["better"]
    assert (better["before"], better["after"]) == ("pending", "after-scale-up")


def test_a_subnet_removed_under_running_instances_is_a_refused_delete(tmp_path):
    base = golden("ecs-gpu")
    for r in base["resources"]:
        if r["type"].endswith("capacityProvider:CapacityProvider"):
            r["name"] = f"provider-{r['name']}"  # named apart from the groups that hold the instances
    # What reads the subnet and goes with it (its route table association) comes first: it is passed over.
    base["resources"].sort(key=lambda r: not r["type"].endswith("RouteTableAssociation"))
    head = json.loads(json.dumps(base))
    gone = _resource(head, "ml-gpu-private-us-east-1b", "ec2/subnet:Subnet")
    head["resources"] = [r for r in head["resources"] if gone["urn"] not in (r["urn"], *(r.get("propertyDependencies") or {}).get("subnetId", []))]
    for r in head["resources"]:
        deps = r.get("propertyDependencies") or {}
        if gone["urn"] in deps.get("vpcZoneIdentifiers", []):
            deps["vpcZoneIdentifiers"].remove(gone["urn"])  # the groups move to the other zone: an in-place update
            r["inputs"]["vpcZoneIdentifiers"] = r["inputs"]["vpcZoneIdentifiers"][:1]
    d = diff_json(tmp_path, base, head)
    [refused] = d["refusedDeletes"]
    assert (refused["name"], refused["how"], refused["heldBy"]) == ("ml-gpu-private-us-east-1b", "removed", ["ml-gpu-inference", "ml-gpu-training"])
    assert "the running instances of ml-gpu-inference, ml-gpu-training keep using it until they are replaced" in refused["reason"]


# --- one `pulumi preview --json` of a deployed stack: the engine's verdict per resource --------------


def _verdict(ops, diff_reasons=(), detailed=(), replace_reasons=()) -> dict:
    return {"ops": list(ops), "diffReasons": list(diff_reasons), "replaceReasons": list(replace_reasons), "detailedDiff": list(detailed)}


def _engine(base: dict, head: dict, verdicts: dict) -> dict:
    from gpufleet.cli.diff import diff_plans

    return diff_plans(base["resources"], head["resources"], [], [], verdicts).as_json()


G5 = "inference-g5"


def _g5_urn(plan: dict) -> str:
    return _resource(plan, G5, "nodeGroup:NodeGroup")["urn"]


def _g5_scaled(r):
    r["inputs"]["scalingConfig"]["desiredSize"] = 3
    r["inputs"]["labels"]["team"] = "ml"


def test_the_engine_verdict_keeps_the_changes_it_names():
    base, head = golden("eks-g5-timeslice"), edited("eks-g5-timeslice", G5, "nodeGroup:NodeGroup", _g5_scaled)
    verdict = _verdict(["update"], ["scalingConfig"], ["scalingConfig.desiredSize"])
    [updated] = _engine(base, head, {_g5_urn(head): verdict})["resources"]["updated"]
    # labels.team differs in the inputs, but the engine does not name it: it is not this update's
    assert updated["properties"] == [{"path": "scalingConfig.desiredSize", "before": 2, "after": 3}]
    # The engine may name the top-level input only: the changes under it are kept.
    [updated] = _engine(base, head, {_g5_urn(head): _verdict(["update"], detailed=["scalingConfig"])})["resources"]["updated"]
    assert updated["properties"] == [{"path": "scalingConfig.desiredSize", "before": 2, "after": 3}]


def test_with_the_engine_verdict_what_reads_a_replaced_resource_is_affected_only_if_the_engine_changes_it():
    base = golden("ecs-gpu")
    head = edited("ecs-gpu", "ml-gpu-inference", "autoscaling/group:Group", lambda r: r["inputs"].update(name="ml-gpu-inference-v2"))
    group, provider = (_resource(head, "ml-gpu-inference", t)["urn"] for t in ("autoscaling/group:Group", "capacityProvider:CapacityProvider"))
    replace = _verdict(["replace"], ["name"], ["name"], ["name"])
    d = _engine(base, head, {group: replace, provider: _verdict(["update"], ["autoScalingGroupProvider"])})
    assert [(a["name"], a["type"].rsplit(":", 1)[-1], a["effect"]) for a in d["affected"]] == [("ml-gpu-inference", "CapacityProvider", "updated")]
    d = _engine(base, head, {group: replace})  # the engine leaves the provider alone
    assert d["affected"] == [] and [r["name"] for r in d["resources"]["replaced"]] == ["ml-gpu-inference"]


def test_the_engine_verdict_names_a_change_the_inputs_do_not_show():
    base = golden("eks-g5-timeslice")
    # The engine reports a diff at a path the plan's inputs do not carry (a provider default, say).
    for verdict, paths in (
        (_verdict(["update"], ["diskSize"], ["diskSize"]), ["diskSize"]),
        (_verdict(["update"], ["diskSize", "updateConfig"]), ["diskSize", "updateConfig"]),  # no detailed diff: the reasons
    ):
        [updated] = _engine(base, base, {_g5_urn(base): verdict})["resources"]["updated"]
        assert updated["properties"] == [{"path": p, "before": None, "after": None} for p in paths]


def test_the_engine_verdict_same_is_no_change_whatever_the_inputs_show():
    base, head = golden("eks-g5-timeslice"), edited("eks-g5-timeslice", G5, "nodeGroup:NodeGroup", _g5_scaled)
    for ops in (["same"], ["read"]):
        d = _engine(base, head, {_g5_urn(head): _verdict(ops)})
        assert d["resources"]["updated"] == [] and d["resources"]["replaced"] == []


def test_the_engine_verdict_replaces_and_says_why():
    base, head = golden("eks-g5-timeslice"), edited("eks-g5-timeslice", G5, "nodeGroup:NodeGroup", _g5_ami)
    urn = _g5_urn(head)
    [replaced] = _engine(base, head, {urn: _verdict(["create-replacement", "replace", "delete-replaced"], ["amiType"], ["amiType"], ["amiType"])})["resources"]["replaced"]
    assert replaced["reason"] == "the engine: replaceReasons amiType"
    [replaced] = _engine(base, head, {urn: _verdict(["replace"], ["amiType"], ["amiType"])})["resources"]["replaced"]
    assert replaced["reason"] == "the engine replaces it"
    # An update the engine makes in place stays an update, whatever the curated facts say of amiType.
    d = _engine(base, head, {urn: _verdict(["update"], ["amiType"], ["amiType"])})
    assert [u["name"] for u in d["resources"]["updated"]] == [G5] and d["resources"]["replaced"] == []
    # With the engine's verdict the walk only explains: what the engine leaves alone is not affected.
    assert d["affected"] == []


def _g5_ami(r):
    r["inputs"]["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"


def test_a_new_eks_version_or_release_rolls_the_group():
    base = golden("eks-g5-timeslice")
    for field in ("version", "releaseVersion"):
        head = edited("eks-g5-timeslice", G5, "nodeGroup:NodeGroup", lambda r: r["inputs"].update({field: "1.34"}))
        d = diff_plans_json(base, head)
        assert [(x["group"], x["reason"]) for x in d["drains"]] == [("g5", "its AMI release or Kubernetes version changed: the node group rolls its nodes")]


def diff_plans_json(base: dict, head: dict) -> dict:
    from gpufleet.cli.diff import diff_plans

    return diff_plans(base["resources"], head["resources"], [], []).as_json()


def test_a_resource_replaced_through_what_it_reads_keeps_its_own_changes():
    def rename(r):
        r["inputs"]["name"] = "ml-gpu-inference-v2"  # the group is replaced: its ARN is new

    def retarget(r):
        r["inputs"]["autoScalingGroupProvider"]["managedScaling"]["targetCapacity"] = 90

    head = edited("ecs-gpu", "ml-gpu-inference", "autoscaling/group:Group", rename)
    _resource_edit(head, "ml-gpu-inference", "capacityProvider:CapacityProvider", retarget)
    d = diff_plans_json(golden("ecs-gpu"), head)
    provider = next(r for r in d["resources"]["replaced"] if r["type"].endswith("capacityProvider:CapacityProvider"))
    # its autoScalingGroupArn, inside autoScalingGroupProvider, comes from the group and cannot change in place
    assert provider["reason"] == "autoScalingGroupProvider comes from Group ml-gpu-inference (replaced), and cannot change in place"
    path = "autoScalingGroupProvider.managedScaling.targetCapacity"
    assert provider["properties"] == [{"path": path, "before": 100, "after": 90}] and provider["summary"] == [f"{path}: 100 -> 90"]
    assert not any(u["type"].endswith("capacityProvider:CapacityProvider") for u in d["resources"]["updated"])


def _resource_edit(plan: dict, name: str, type_suffix: str, edit) -> None:
    edit(_resource(plan, name, type_suffix))


def test_a_new_workload_is_judged_against_running_now():
    empty = {**golden("eks-g5-timeslice"), "resources": []}
    d = diff_plans_json(empty, _replicas(33))
    [worse] = d["placement"]["worse"]
    assert (worse["name"], worse["before"], worse["after"]) == ("pod Deployment default/llm-serve", "scheduled", "pending")
    ecs = edited("ecs-gpu", "ml-gpu-llm-serve", "ecs/service:Service", lambda r: r["inputs"].update(desiredCount=99))
    [worse] = diff_plans_json({**ecs, "resources": []}, ecs)["placement"]["worse"]
    assert (worse["name"], worse["before"], worse["after"]) == ("task llm-serve", "placed", "pending")


def test_list_entries_without_cards_and_a_large_single_entry():
    # The launch template's tag specifications for volumes and interfaces go (three fields each, six in
    # all): no card indexes to name, and two entries are not read whole.
    def three(r):
        specs = r["inputs"]["tagSpecifications"]
        specs.append({**specs[1], "resourceType": "network-interface"})

    base = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", three)
    head = json.loads(json.dumps(base))
    _resource(head, "ml-gpu-inference", "launchTemplate:LaunchTemplate")["inputs"]["tagSpecifications"][1:] = []
    [template] = diff_plans_json(base, head)["resources"]["updated"]
    assert template["summary"] == ["tagSpecifications: 2 entries removed ([1]-[2])"]

    def seven(r):  # a p5 interface of seven fields: more than reads well on one line
        r["inputs"]["networkInterfaces"][-1]["description"] = "efa"

    base = edited("eks-p5-efa", "p5-train-p5", "launchTemplate:LaunchTemplate", seven)
    head = json.loads(json.dumps(base))
    interfaces = _resource(head, "p5-train-p5", "launchTemplate:LaunchTemplate")["inputs"]["networkInterfaces"]
    n = len(interfaces)
    card = interfaces.pop()["networkCardIndex"]
    [template] = diff_plans_json(base, head)["resources"]["updated"]
    assert template["summary"] == [f"networkInterfaces: 1 entry removed ([{n - 1}]; networkCardIndex {card})"]


def _new_cidr(r):
    r["inputs"]["cidrBlock"] = "10.9.0.0/16"


def test_a_new_vpc_cidr_replaces_what_reads_it_level_by_level():
    d = diff_plans_json(golden("ecs-gpu"), edited("ecs-gpu", "ml-gpu", "ec2/vpc:Vpc", _new_cidr))
    kind = lambda e: e["type"].rsplit(":", 1)[-1]  # noqa: E731
    # What reads the VPC first, then what reads those (the order the walk finds them in).
    assert [(kind(a), a["name"], a["effect"]) for a in d["affected"]] == [
        ("SecurityGroup", "ml-gpu-instances", "replaced"),
        ("InternetGateway", "ml-gpu", "updated"),
        ("RouteTable", "ml-gpu-private", "replaced"),
        ("RouteTable", "ml-gpu-public", "replaced"),
        ("Subnet", "ml-gpu-private-us-east-1a", "replaced"),
        ("Subnet", "ml-gpu-private-us-east-1b", "replaced"),
        ("Subnet", "ml-gpu-public-us-east-1a", "replaced"),
        ("Subnet", "ml-gpu-public-us-east-1b", "replaced"),
        ("LaunchTemplate", "ml-gpu-inference", "updated"),
        ("LaunchTemplate", "ml-gpu-training", "updated"),
        ("RouteTableAssociation", "ml-gpu-private-us-east-1a", "replaced"),
        ("RouteTableAssociation", "ml-gpu-private-us-east-1b", "replaced"),
        ("RouteTableAssociation", "ml-gpu-public-us-east-1a", "replaced"),
        ("RouteTableAssociation", "ml-gpu-public-us-east-1b", "replaced"),
        ("Group", "ml-gpu-inference", "updated"),
        ("Group", "ml-gpu-training", "updated"),
        ("NatGateway", "ml-gpu-nat", "replaced"),
    ]
    # An association reads a replaced route table (in place) and a replaced subnet (not in place): the
    # subnet is why it is replaced.
    association = next(r for r in d["resources"]["replaced"] if kind(r) == "RouteTableAssociation")
    assert association["reason"] == f"subnetId comes from Subnet {association['name']} (replaced), and cannot change in place"


def test_a_reader_replaced_by_its_own_change_does_not_hide_the_others():
    head = edited("ecs-gpu", "ml-gpu", "ec2/vpc:Vpc", _new_cidr)
    _resource_edit(head, "ml-gpu-private-us-east-1a", "ec2/subnet:Subnet", lambda r: r["inputs"].update(availabilityZone="us-east-1c"))
    d = diff_plans_json(golden("ecs-gpu"), head)
    subnets = {a["name"]: a for a in d["affected"] if a["type"].endswith("subnet:Subnet")}
    assert sorted(subnets) == ["ml-gpu-private-us-east-1b", "ml-gpu-public-us-east-1a", "ml-gpu-public-us-east-1b"]
    own = next(r for r in d["resources"]["replaced"] if r["name"] == "ml-gpu-private-us-east-1a" and r["type"].endswith("subnet:Subnet"))
    assert own["reason"].startswith("availabilityZone cannot change in place")


def test_a_text_that_only_looks_like_json_is_compared_as_text():
    base = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].update(description="[draft] GPU nodes"))
    head = edited("ecs-gpu", "ml-gpu-inference", "launchTemplate:LaunchTemplate", lambda r: r["inputs"].update(description="{gpu} nodes"))
    [template] = diff_plans_json(base, head)["resources"]["updated"]
    assert template["summary"] == ["description: [draft] GPU nodes -> {gpu} nodes"]


def test_a_group_replaced_through_its_subnets_shows_its_own_list_changes_entry_by_entry():
    # The subnet's new CIDR replaces it, and so the node group that reads it (subnetIds cannot
    # change in place); the group's own taint edit is a change of an entry both plans have.
    head = edited("eks-g5-timeslice", "inference-private-us-east-1a", "ec2/subnet:Subnet", lambda r: r["inputs"].update(cidrBlock="10.62.32.0/20"))
    _resource_edit(head, G5, "eks/nodeGroup:NodeGroup", lambda r: r["inputs"]["taints"][0].update(effect="NO_EXECUTE"))
    d = diff_plans_json(golden("eks-g5-timeslice"), head)
    group = next(r for r in d["resources"]["replaced"] if r["type"].endswith("eks/nodeGroup:NodeGroup") and r["name"] == G5)
    assert group["reason"].startswith("subnetIds comes from Subnet inference-private-us-east-1a (replaced)")
    assert group["summary"] == ["taints[0].effect: NO_SCHEDULE -> NO_EXECUTE"]


def test_a_long_lists_changes_keep_its_order():
    """A reviewer reads a list's entries in order: [2] before [10], not as text sorts them."""
    from gpufleet.plans.replacement import property_changes

    changes = property_changes({"command": [f"a{i}" for i in range(12)]}, {"command": [f"b{i}" for i in range(12)]})
    assert [c["path"] for c in changes] == [f"command[{i}]" for i in range(12)]


def _serving(n: int) -> dict:
    return edited("eks-karpenter-gpu", "karp-gpu-llm-serve", "apps/v1:Deployment", lambda r: r["inputs"]["spec"].update(replicas=n))


def test_the_nodes_karpenter_launches_are_priced_by_the_type_the_simulation_names(tmp_path):
    # llm-serve on NodePool inference (limits: 4 GPUs): a g5.xlarge per replica (1.006 $/h on-demand in Karpenter's
    # table; spot or on-demand is priced at on-demand, the most it pays).
    d = diff_json(tmp_path, _serving(3), _serving(4))
    [pool] = [g for g in d["cost"]["groups"] if g["group"] == "inference"]
    assert pool["changes"] == ["launches 3 x g5.xlarge -> 4 x g5.xlarge"]
    assert (pool["launched"]["before"], pool["launched"]["after"], pool["launched"]["hourly"]) == (3.018, 4.024, 1.006)
    lines = _cost_lines(d["cost"], lambda level, text: text, "- ")
    assert "- karpenter inference (g6e.16xlarge) launches 3 x g5.xlarge -> 4 x g5.xlarge: " in "\n".join(lines)
    assert "; the nodes Karpenter launches: +$1.01/h (+$734.38/month)" in "\n".join(lines)
