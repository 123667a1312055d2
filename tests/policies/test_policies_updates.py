"""src/gpufleet/policies/updates.py (update-drains-capacity): the pack given the deployed plan as its config says
which groups an update drains, at the group's URN, judged over gRPC on golden-plan edits."""

from __future__ import annotations

import json

from gpufleet.catalog import catalog
from tests.plan_edits import edited, golden
from tests.policy_helpers import findings

POLICY = "update-drains-capacity"


def _judge(judge, deployed: dict | None, head: dict):
    config = {POLICY: {"deployed": deployed["resources"]}} if deployed is not None else {}
    return judge(head["resources"], config)


def _g5_ami(r):
    r["inputs"]["amiType"] = "BOTTLEROCKET_x86_64_NVIDIA"


def test_a_replaced_node_group_drains_its_running_gpus(judge):
    head = edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", _g5_ami)
    result = _judge(judge, golden("eks-g5-timeslice"), head)
    gpus = catalog.load().get("g5.2xlarge").gpu.count * 2  # desiredSize 2
    [message] = findings(result, POLICY, "inference-g5")
    assert message.splitlines()[-1] == f"eks g5 is replaced by this update: its 2 running g5.2xlarge instances with {gpus} GPUs drain and their jobs stop"
    assert {f.level for f in result.findings if f.policy == POLICY} == {"advisory"}


def test_without_the_deployed_plan_nothing_is_said(judge):
    head = edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", _g5_ami)
    assert findings(_judge(judge, None, head), POLICY) == []


def test_the_same_plan_drains_nothing(judge):
    plan = golden("eks-trn1")
    assert findings(_judge(judge, plan, plan), POLICY) == []


def test_a_group_whose_auto_scaling_group_is_replaced_drains(judge):
    # The inference provider's Auto Scaling group is renamed: replaced, so its instances go, and the
    # provider with it (its autoScalingGroupArn cannot change in place).
    head = edited("ecs-gpu", "ml-gpu-inference", "autoscaling/group:Group", lambda r: r["inputs"].update(name="ml-gpu-inference-v2"))
    result = _judge(judge, golden("ecs-gpu"), head)
    gpus = catalog.load().get("g5.12xlarge").gpu.count  # desiredCapacity 1
    [message] = findings(result, POLICY, "ml-gpu-inference")
    assert message.splitlines()[-1] == (
        f"ecs ml-gpu-inference is replaced by this update: "
        f"its 1 running g5.12xlarge instance with {gpus} GPUs drains and its jobs stop"
    )


def test_a_group_with_no_running_instances_drains_nothing(judge):
    # The training provider runs 0 instances (desiredCapacity 0): renaming its group drains nothing.
    head = edited("ecs-gpu", "ml-gpu-training", "autoscaling/group:Group", lambda r: r["inputs"].update(name="ml-gpu-training-v2"))
    assert findings(_judge(judge, golden("ecs-gpu"), head), POLICY) == []
    # ... and does not stop the groups read after it from being judged
    deployed = golden("ecs-gpu")
    deployed["resources"].reverse()  # the training provider first
    for r in head["resources"]:
        if r["name"] == "ml-gpu-inference" and r["type"].endswith("autoscaling/group:Group"):
            r["inputs"]["name"] = "ml-gpu-inference-v2"
    assert [m.splitlines()[-1].split(" is ")[0] for m in findings(_judge(judge, deployed, head), POLICY)] == ["ecs ml-gpu-inference"]


def test_a_removed_group_is_named_removed_and_has_no_urn_in_the_new_stack(judge):
    base = golden("eks-trn1")
    head = json.loads(json.dumps(base))
    head["resources"] = [r for r in head["resources"] if not (r["name"] == "trn1-train-trn1" and r["type"].endswith("nodeGroup:NodeGroup"))]
    result = _judge(judge, base, head)
    [finding] = [f for f in result.findings if f.policy == POLICY]
    chips = catalog.load().get("trn1.32xlarge").neuron.count * 2
    assert finding.message.splitlines()[-1].startswith(f"eks trn1 is removed by this update: its 2 running trn1.32xlarge instances with {chips} Neuron chips, ")
    assert "trn1-train-trn1" not in (finding.urn or "")  # reported on the stack: the group's resource is gone


def test_malformed_deployed_rows_are_left_out(judge):
    base = golden("eks-g5-timeslice")
    head = edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", _g5_ami)
    # rows the config schema takes (objects) but that name no resource: without a string urn and type
    rows = [*base["resources"], {"urn": 7, "type": "x"}, {"urn": "urn:pulumi:s::p::t::n"}, {"type": "aws:eks/nodeGroup:NodeGroup"}]
    result = judge(head["resources"], {POLICY: {"deployed": rows}})
    assert len(findings(result, POLICY, "inference-g5")) == 1


def test_deployed_rows_without_names_are_named_by_their_urn(judge):
    base = golden("eks-g5-timeslice")
    for r in base["resources"]:
        del r["name"]
        r["inputs"].pop("nodeGroupName", None)
    head = edited("eks-g5-timeslice", "inference-g5", "nodeGroup:NodeGroup", _g5_ami)
    [message] = findings(_judge(judge, base, head), POLICY, "inference-g5")
    assert message.splitlines()[-1].startswith("eks inference-g5 is replaced by this update: its 2 running g5.2xlarge instances")


def test_a_group_left_alone_does_not_stop_the_next_from_being_judged(judge):
    def running(r):
        r["inputs"]["desiredCapacity"] = 1

    base = edited("ecs-neuron", "ml-neuron-training", "autoscaling/group:Group", running)
    head = json.loads(json.dumps(base))
    for r in head["resources"]:
        if r["name"] == "ml-neuron-training" and r["type"].endswith("autoscaling/group:Group"):
            r["inputs"]["name"] = "ml-neuron-training-v2"
    # The inference provider (first) is left alone; training, after it, drains.
    found = [m.splitlines()[-1].split(" is ")[0] for m in findings(_judge(judge, base, head), POLICY)]
    assert found == ["ecs ml-neuron-training"]
