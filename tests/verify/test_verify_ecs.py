"""`gpufleet verify` on an ECS fleet, through boto3 (botocore's Stubber answers the ECS API with
describe output checked against the service's model: the live path) and from the same output on
disk: a fleet that matches ecs-gpu's plan, and an instance registered without its GPUs."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber

from tests.conftest import ROOT, run_cli
from tests.verify import fleets

PLAN = str(ROOT / "tests" / "golden" / "ecs-gpu.plan.json")
CLUSTER = "ml-gpu-7f3a2c1"


def _fleet(gpus: int = 4, running: int = 4):
    instances = [fleets.container_instance(1, "ml-gpu-inference", "g5.12xlarge", gpus)]
    tasks = [fleets.service_task(i, "llm-serve", "ml-gpu-inference") for i in range(running)]
    return instances, tasks


@pytest.fixture
def ecs_api(monkeypatch):
    """`ecs_api(instances, tasks)`: boto3's ECS client for us-west-2, stubbed with those answers."""
    made = {}

    def stub(instances, tasks):
        session = boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test", region_name="us-west-2")
        client = session.client("ecs", region_name="us-west-2")
        stubber = Stubber(client)
        arns = [ci["containerInstanceArn"] for ci in instances]
        stubber.add_response("list_container_instances", {"containerInstanceArns": arns}, {"cluster": CLUSTER})
        stubber.add_response("describe_container_instances", {"containerInstances": instances, "failures": []}, {"cluster": CLUSTER, "containerInstances": arns})
        task_arns = [t["taskArn"] for t in tasks]
        stubber.add_response("list_tasks", {"taskArns": task_arns}, {"cluster": CLUSTER})
        stubber.add_response("describe_tasks", {"tasks": tasks, "failures": []}, {"cluster": CLUSTER, "tasks": task_arns})
        stubber.activate()
        made["stubber"] = stubber

        class Session:
            def client(self, service, region_name=None):
                assert (service, region_name) == ("ecs", "us-west-2")
                return client

        monkeypatch.setattr(boto3.session, "Session", Session)
        return stubber

    return stub


def _live():
    code, out, err = run_cli("verify", PLAN, "--region", "us-west-2", "--ecs-cluster", CLUSTER, "--json")
    assert "Traceback" not in err, err
    return code, (json.loads(out)["verify"] if out else None), err


def test_a_fleet_that_matches_the_plan(ecs_api):
    stubber = ecs_api(*_fleet())
    code, verdict, err = _live()
    assert code == 0, err
    stubber.assert_no_pending_responses()
    by_subject = {f["subject"]: f for f in verdict["findings"]}
    assert by_subject["capacity provider ml-gpu-inference"]["verdict"] == "match"
    assert by_subject["service llm-serve"]["message"] == "4 of 4 tasks RUNNING on ml-gpu-inference"
    assert "4 GPU ids" in by_subject["container instance i-0a1b2c3d4e5f60001"]["message"]


def test_an_instance_registered_without_gpus_is_named_with_its_drain(ecs_api, tmp_path):
    instances, tasks = _fleet(gpus=0, running=0)
    ecs_api(instances, tasks)
    code, verdict, _ = _live()
    assert code == 1
    [instance] = [f for f in verdict["findings"] if f["subject"] == "container instance i-0a1b2c3d4e5f60001"]
    assert instance["verdict"] == "mismatch" and "0 of 4 GPUs registered" in instance["message"]
    assert instance["commands"] == [f"aws ecs update-container-instances-state --cluster {CLUSTER} --container-instances {instances[0]['containerInstanceArn']} --status DRAINING"]
    [service] = [f for f in verdict["findings"] if f["subject"] == "service llm-serve"]
    assert service["verdict"] == "mismatch" and "0 of 4 tasks RUNNING" in service["message"]
    # The same output, recorded: the same verdict.
    folder = fleets.write_case(tmp_path / "ecs", ecs={"container-instances": {"containerInstances": instances, "failures": []}, "tasks": {"tasks": tasks, "failures": []}})
    code_disk, out, _ = run_cli("verify", PLAN, "--from", str(folder), "--ecs-cluster", CLUSTER, "--json")
    assert code_disk == 2  # --ecs-cluster goes with --region only
    code_disk, out, err = run_cli("verify", PLAN, "--from", str(folder), "--json")
    assert code_disk == 1, err
    recorded = json.loads(out)["verify"]["findings"]
    assert [f["verdict"] for f in recorded if f["check"].startswith("ecs")] == [f["verdict"] for f in verdict["findings"] if f["check"].startswith("ecs")]


def test_mps_tasks_need_the_mps_capability_on_their_instances(ecs_api):
    plan = str(ROOT / "tests" / "golden" / "ecs-mps.plan.json")
    instances = [fleets.container_instance(1, "ml-shared-gpu-shared", "g6e.12xlarge", 4)]
    ecs_api(instances, [])
    code, out, _ = run_cli("verify", plan, "--region", "us-west-2", "--ecs-cluster", CLUSTER, "--json")
    [finding] = [f for f in json.loads(out)["verify"]["findings"] if f["subject"] == "container instance i-0a1b2c3d4e5f60001"]
    assert code == 1 and "no ecs.capability.gpu-sharing-mps attribute" in finding["message"]


def test_no_credentials_is_bad_input_naming_the_cluster_and_region(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # The plan's cluster is named (ml-gpu): the default for --ecs-cluster.
    code, _, err = run_cli("verify", PLAN, "--region", "us-west-2")
    assert code == 2 and err == "error: --region us-west-2 --cluster ml-gpu: no AWS credentials to read the cluster with\n"


def test_an_instance_with_no_gpus_registered_does_not_count_toward_desired(ecs_api):
    """The AWS CLI example's instance registers no GPU (as documented): it is ACTIVE with its agent
    connected, yet its g5.12xlarge's 4 GPUs are not there, so the provider has 0 of 1 desired."""
    instances, tasks = _fleet(gpus=0)
    ecs_api(instances, tasks)
    code, verdict, _ = _live()
    assert code == 1 and verdict["outcome"] == "mismatch"
    [provider] = [f for f in verdict["findings"] if f["subject"] == "capacity provider ml-gpu-inference"]
    assert provider["verdict"] == "mismatch" and provider["expected"] == 1 and provider["observed"] == 0
    assert provider["message"] == "0 container instance(s) ACTIVE with the agent connected and their type's GPUs registered, of 1 desired"
    [entry] = [j for j in verdict["plan"] if j["subject"] == "capacity provider ml-gpu-inference"]
    assert entry["judged"] and not entry["matched"] and "0 of 4 GPUs registered" in entry["reason"]


def test_instances_outside_the_plans_capacity_providers_are_listed(ecs_api):
    """The CLI example's instance as documented names no capacity provider; another names one the
    plan does not hold. Both are listed; the plan's own provider is still judged."""
    instances, tasks = _fleet()
    bare = fleets.container_instance(2, "ml-gpu-inference", "g5.12xlarge", 4)
    del bare["capacityProviderName"]
    other = fleets.container_instance(3, "someone-elses-provider", "g5.12xlarge", 4)
    ecs_api([*instances, bare, other], tasks)
    code, verdict, _ = _live()
    assert code == 0 and verdict["outcome"] == "match"
    [outside] = [f for f in verdict["findings"] if f["subject"] == "container instances outside the plan"]
    assert outside["verdict"] == "not-judged" and outside["observed"] == 2
    assert outside["message"] == (
        "2 container instance(s) belong to no capacity provider of the plan: "
        "i-0a1b2c3d4e5f60002 (no capacity provider), i-0a1b2c3d4e5f60003 (someone-elses-provider)"
    )
    assert {j["subject"]: j["matched"] for j in verdict["plan"]} == {
        "capacity provider ml-gpu-inference": True,
        "capacity provider ml-gpu-training": True,
        "service llm-serve": True,
    }


def test_an_ecs_plan_with_no_ecs_recording_is_not_proven(tmp_path):
    folder = fleets.write_case(tmp_path / "case", ecs={"events": fleets.event_list()})
    code, out, _ = run_cli("verify", PLAN, "--from", str(folder), "--json")
    verdict = json.loads(out)["verify"]
    assert code == 5 and {j["subject"] for j in verdict["unjudged"]} == {
        "capacity provider ml-gpu-inference",
        "capacity provider ml-gpu-training",
        "service llm-serve",
    }
    assert all("no ECS description was read" in j["reason"] for j in verdict["unjudged"])
