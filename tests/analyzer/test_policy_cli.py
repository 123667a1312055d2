"""The pack inside `gpufleet preview`: enforcement levels, policy config, another pack, and failing
closed when the pack cannot judge."""

from __future__ import annotations

import json
import os
import signal
import threading

import pytest

from gpufleet.analyzer.client import PolicyPack, PolicyPackError
from gpufleet.analyzer.pack_dir import DEFAULT_PACK
from gpufleet.plans.index import from_plan
from tests.conftest import ROOT, run_cli
from tests.policy_helpers import gpu_container, resource, task_definition

PACKS = ROOT / "tests" / "packs"


def _preview(*flags: str, stack: str = "ecs-gpu") -> tuple[int, dict | None, str]:
    code, out, err = run_cli("preview", stack, "--json", *flags)
    return code, (json.loads(out) if out else None), err


def _config(tmp_path, document) -> str:
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps(document))
    return str(path)


def test_shipped_stack_passes_the_pack():
    code, plan, _ = _preview()
    assert code == 0
    assert plan["policy"] == {"pack": "gpufleet-guard", "version": "0.1.0", "violations": []}


def test_policy_config_makes_a_mandatory_violation_exit_1(tmp_path):
    code, plan, err = _preview("--policy-config", _config(tmp_path, {"ecs-gpus-fit-instance": {"maxGpusPerTask": 4}}))
    assert code == 1, err
    [v] = plan["policy"]["violations"]
    assert v["policy"] == "ecs-gpus-fit-instance" and v["level"] == "mandatory"
    assert v["urn"].endswith("aws:ecs/taskDefinition:TaskDefinition::ml-gpu-train")
    assert "8 GPUs; this pack allows at most 4" in v["message"] and v["fix"]


def test_enforcement_levels_from_the_config_file(tmp_path):
    advisory = {"ecs-gpus-fit-instance": {"enforcementLevel": "advisory", "maxGpusPerTask": 4}}
    code, plan, _ = _preview("--policy-config", _config(tmp_path, advisory))
    assert code == 0 and [v["level"] for v in plan["policy"]["violations"]] == ["advisory"]
    disabled = {"all": "disabled", "ecs-gpus-fit-instance": {"maxGpusPerTask": 4}}
    code, plan, _ = _preview("--policy-config", _config(tmp_path, disabled))
    assert code == 0 and plan["policy"]["violations"] == []


def test_human_output_groups_findings_by_resource(tmp_path):
    code, out, _ = run_cli("preview", "ecs-gpu", "--policy-config", _config(tmp_path, {"ecs-gpus-fit-instance": {"maxGpusPerTask": 2}}))
    assert code == 1
    report = out[out.index("Policy pack gpufleet-guard"):]
    assert "2 mandatory, 0 advisory" in report
    for name in ("ml-gpu-train", "ml-gpu-embed-rerank"):
        assert f"aws:ecs/taskDefinition:TaskDefinition::{name}" in report
    assert report.count("fix: Lower the containers' GPU resourceRequirements") == 2


@pytest.mark.parametrize(
    "document,expected",
    [
        ({"ecs-gpus-fit-instanse": "mandatory"}, "'ecs-gpus-fit-instanse' is not a policy of pack gpufleet-guard"),
        ({"ecs-gpus-fit-instance": "blocking"}, 'enforcementLevel "blocking" is not one of advisory, mandatory'),
        ({"ecs-gpus-fit-instance": {"maxGpusPerTask": "four"}}, "ecs-gpus-fit-instance: maxGpusPerTask: 'four' is not of type 'integer'"),
        ({"ecs-gpus-fit-instance": 3}, "ecs-gpus-fit-instance: 3 is not a valid value"),
        (["mandatory"], "must be a JSON object keyed by policy name"),
    ],
)
def test_bad_policy_config_is_exit_2(tmp_path, document, expected):
    code, plan, err = _preview("--policy-config", _config(tmp_path, document))
    assert code == 2 and plan is None
    assert expected in err and "Traceback" not in err


def test_no_policy_skips_the_pack():
    code, plan, _ = _preview("--no-policy")
    assert code == 0 and plan["policy"] == {"pack": None, "violations": []}
    code, _, err = _preview("--no-policy", "--policy-pack", str(PACKS / "other"))
    assert code == 2 and "cannot be combined" in err


def test_another_pack_runs_over_the_same_protocol():
    code, plan, _ = _preview("--policy-pack", str(PACKS / "other"))
    assert code == 1
    assert plan["policy"]["pack"] == "naming"
    [v] = plan["policy"]["violations"]
    assert v["policy"] == "ecs-cluster-name-prefix" and "'ml-gpu' does not start with prod-" in v["message"]


def test_a_pack_that_crashes_mid_run_fails_closed():
    code, plan, err = _preview("--policy-pack", str(PACKS / "crashing"))
    assert code == 2 and plan is None
    assert "Analyze failed" in err and "exited with code 7" in err
    assert "crashing on purpose at urn:pulumi:ecs-gpu::gpufleet::" in err  # the pack's own stderr
    assert "No policy results: nothing was judged" in err and "Traceback" not in err.split("--- pack stderr")[0]


def test_a_pack_that_hangs_times_out(monkeypatch):
    monkeypatch.setenv("GPUFLEET_POLICY_TIMEOUT", "1")
    code, plan, err = _preview("--policy-pack", str(PACKS / "slow"))
    assert code == 2 and plan is None and "Analyze timed out after 1 s" in err


@pytest.mark.parametrize(
    "pack,expected",
    [
        ("noport", "printed 'hello from a script' instead of its gRPC port"),
        ("missing", "no such directory"),
    ],
)
def test_a_pack_that_cannot_start_fails_closed(pack, expected):
    code, plan, err = _preview("--policy-pack", str(PACKS / pack))
    assert code == 2 and plan is None and expected in err


def test_a_pack_that_fails_to_import_reports_its_error(tmp_path):
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (tmp_path / "__main__.py").write_text("import no_such_module_for_gpufleet\n")
    code, plan, err = _preview("--policy-pack", str(tmp_path))
    assert code == 2 and plan is None
    assert "ended its output before printing its gRPC port; the pack process exited with code 1" in err
    assert "ModuleNotFoundError: No module named 'no_such_module_for_gpufleet'" in err


def test_a_directory_without_a_manifest_is_not_a_pack(tmp_path):
    code, _, err = _preview("--policy-pack", str(tmp_path))
    assert code == 2 and "no PulumiPolicy.yaml there" in err


def test_killing_the_pack_between_calls_fails_closed():
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack="kill") as pack:
        pack.configure({})
        os.kill(pack.process.pid, signal.SIGKILL)
        pack.process.wait(10)
        with pytest.raises(PolicyPackError, match="exited with code -9"):
            pack.judge({}, from_plan({"resources": [task_definition("t", [gpu_container("a", 1)])]}))


def test_resources_submitted_from_many_threads_are_all_judged():
    """The SDK's mock monitor registers resources on executor threads: batching them must lose none,
    the last partial batch included (37 per thread is not a multiple of the batch)."""
    threads, each = 8, 37
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack="threads") as pack:
        pack.begin({})
        made = [from_plan({"resources": [task_definition(f"t{t}-{i}", [gpu_container("a", 1)]) for i in range(each)]}) for t in range(threads)]
        workers = [threading.Thread(target=lambda rs: [pack.submit(r) for r in rs], args=(rs,)) for rs in made]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        result = pack.finish([r for rs in made for r in rs])
    unpinned = {f.urn for f in result.findings if f.policy == "ecs-gpu-task-placement"}
    assert unpinned == {r.urn for rs in made for r in rs}


def test_answers_alike_are_read_once_and_counted_for_every_resource(monkeypatch):
    """Resources the policies pass get their type's answer, byte for byte: read once a session; a
    finding names its resource and is read on its own. Every resource's skips are still counted."""
    from gpufleet.analyzer import client

    real, read = client._answer, []

    def reading(response):
        read.append(real(response))
        return read[-1]

    monkeypatch.setattr(client, "_answer", reading)
    passing = [resource("random:index/randomId:RandomId", f"id{i}", {"byteLength": 8}) for i in range(5)]
    unpinned = task_definition("unpinned", [gpu_container("a", 1)])
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack="alike") as pack:
        result = pack.judge({}, from_plan({"resources": [*passing, unpinned]}))
    assert {f.urn for f in result.findings} == {unpinned["urn"]}
    assert len(read) == 3  # one answer for the five passing ones, the unpinned one's, the stack's
    stack = read[-1]
    [passed] = [a for a in read[:-1] if not a.diagnostics]
    [found] = [a for a in read[:-1] if a.diagnostics]
    expected: dict[str, int] = {}
    for answer, times in ((passed, 5), (found, 1), (stack, 1)):
        for name in answer.not_applicable:
            expected[name] = expected.get(name, 0) + times
    assert result.not_applicable == expected and expected


def test_a_resource_that_cannot_be_sent_fails_the_session():
    """Inputs that are not JSON (a caller's bug) must not vanish from the judgement."""
    clean = task_definition("clean", [gpu_container("a", 1)], 'attribute:ecs.instance-type == "g5.xlarge"')
    broken = task_definition("broken", [gpu_container("a", 1)])
    broken["inputs"]["family"] = {1, 2}
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack="unsendable") as pack:
        with pytest.raises(PolicyPackError, match="could not be sent to Analyze"):
            pack.judge({}, from_plan({"resources": [clean, broken]}))


def test_remediate_level_rewrites_inputs_before_analysis(tmp_path):
    """As under the CLI: a Remediate pass first, then Analyze sees (and the plan shows) the result."""
    pack = str(PACKS / "remediating")
    fixture = str(ROOT / "tests" / "fixtures" / "pulumi-preview.json")
    code, out, _ = run_cli("check", fixture, "--json", "--policy-pack", pack)
    assert code == 1
    assert {v["policy"] for v in json.loads(out)["violations"]} == {"set-imdsv2", "imdsv2-checked"}
    code, out, err = run_cli("check", fixture, "--json", "--policy-pack", pack, "--policy-config", _config(tmp_path, {"set-imdsv2": "remediate"}))
    assert code == 0, err
    block = json.loads(out)
    assert block["violations"] == []
    assert block["remediations"] == [{"policy": "set-imdsv2", "urn": "urn:pulumi:dev::gpu-app::aws:ec2/launchTemplate:LaunchTemplate::gpu-nodes"}]
    code, out, _ = run_cli("check", fixture, "--policy-pack", pack, "--policy-config", _config(tmp_path, {"set-imdsv2": "remediate"}))
    assert code == 0 and "set-imdsv2 remediated urn:pulumi:dev::gpu-app::aws:ec2/launchTemplate:LaunchTemplate::gpu-nodes" in out


def test_remediated_inputs_replace_the_resource_inputs():
    """The client hands the rewritten inputs back by URN, and the plan's door writes them into the
    plan's entries; the typed resources the client read stay as they were."""
    from gpufleet.analyzer.policy_config import parse
    from gpufleet.cli import plan_file
    from tests.policy_helpers import launch_template

    template = launch_template("lt", "g5.xlarge", metadataOptions={"httpTokens": "optional"})
    typed = from_plan({"resources": [template]})
    with PolicyPack(PACKS / "remediating", project="gpufleet", stack="remediate") as pack:
        result = pack.judge(parse({"set-imdsv2": "remediate"}), typed)
        assert result.findings == []
        assert result.remediated[template["urn"]]["metadataOptions"]["httpTokens"] == "required"
        assert template["inputs"]["metadataOptions"]["httpTokens"] == typed[0].props["metadataOptions"]["httpTokens"] == "optional"
        result = plan_file.judged(pack, parse({"set-imdsv2": "remediate"}), [template])
    assert result.findings == []
    assert template["inputs"]["metadataOptions"]["httpTokens"] == "required"
    volume_size = template["inputs"]["blockDeviceMappings"][0]["ebs"]["volumeSize"]
    assert volume_size == 100 and isinstance(volume_size, int)  # integral doubles back to ints, as in the plan


@pytest.mark.parametrize("count, judged", [(100, False), (1500, True)])
def test_the_stack_deadline_grows_with_the_stack(monkeypatch, count, judged):
    """AnalyzeStack gets the per-call deadline and 2 ms a resource: a stack policy of three seconds
    passes the deadline of 1 s over 100 resources (1.2 s) and is judged over 1,500 (4 s)."""
    monkeypatch.setenv("GPUFLEET_POLICY_TIMEOUT", "1")
    resources = [
        {"urn": f"urn:pulumi:s::p::aws:s3/bucket:Bucket::b{i}", "type": "aws:s3/bucket:Bucket", "name": f"b{i}", "inputs": {"bucket": f"b{i}"}}
        for i in range(count)
    ]
    with PolicyPack(PACKS / "slow-stack", project="p", stack="s") as pack:
        if judged:
            assert pack.judge({}, from_plan({"resources": resources})).findings == []
        else:
            with pytest.raises(PolicyPackError, match="AnalyzeStack timed out after 1 s"):
                pack.judge({}, from_plan({"resources": resources}))


def test_the_stack_request_carries_each_resource_as_analysed_with_its_links():
    """AnalyzeStack's request is written out serialized, resource by resource: parsed, it is the
    message built field by field (a body past 16 KB has a three-byte length)."""
    from pulumi.runtime.proto import analyzer_pb2

    from gpufleet.analyzer import wire

    stack = "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s"
    provider = {"urn": "urn:pulumi:s::p::pulumi:providers:aws::east", "type": "pulumi:providers:aws", "name": "east",
                "parent": stack, "inputs": {"region": "us-east-1"}}
    template = {"urn": "urn:pulumi:s::p::aws:ec2/launchTemplate:LaunchTemplate::lt", "type": "aws:ec2/launchTemplate:LaunchTemplate",
                "name": "lt", "parent": stack, "provider": provider["urn"], "inputs": {"userData": "x" * 20_000, "tags": {"équipe": "ü"}}}
    group = {"urn": "urn:pulumi:s::p::aws:eks/nodeGroup:NodeGroup::ng", "type": "aws:eks/nodeGroup:NodeGroup", "name": "ng",
             "parent": stack, "provider": provider["urn"], "dependencies": [template["urn"], provider["urn"]],
             "propertyDependencies": {"launchTemplate": [template["urn"]], "subnetIds": []}, "inputs": {"scalingConfig": {"desiredSize": 2}}}
    bare = {"urn": "urn:pulumi:s::p::gpufleet:eks:EksFleet::f", "type": "gpufleet:eks:EksFleet", "name": "f", "inputs": {}}
    resources = [provider, template, group, bare]
    typed = from_plan({"resources": resources})
    pack = object.__new__(PolicyPack)  # no process: the request is built from the resources alone
    pack._requests, pack._providers, pack._by_urn = {}, {}, {r.urn: r for r in typed}
    sent = analyzer_pb2.AnalyzeStackRequest.FromString(pack._stack_request(typed))
    # The message built field by field from the plan's entries, as the client had sent them before
    # it read typed resources: the same bytes, whichever the client reads.
    expected = analyzer_pb2.AnalyzeStackRequest()
    for r in resources:
        by = r.get("provider")
        served = None if by is None else analyzer_pb2.AnalyzerProviderResource(
            type=provider["type"], urn=by, name=provider["name"], properties=wire.struct(provider["inputs"])
        )
        message = expected.resources.add(
            type=r["type"], urn=r["urn"], name=r["name"], properties=wire.struct(r["inputs"]),
            options=analyzer_pb2.AnalyzerResourceOptions(parent=r.get("parent") or ""), provider=served,
        )
        message.parent = r.get("parent") or ""
        message.dependencies.extend(r.get("dependencies") or [])
        for key, urns in (r.get("propertyDependencies") or {}).items():
            message.propertyDependencies[key].urns.extend(urns)
    assert sent == expected
    assert sent.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
    assert [r.name for r in sent.resources] == ["east", "lt", "ng", "f"]
    assert sent.resources[1].properties["userData"] == "x" * 20_000 and sent.resources[1].properties["tags"]["équipe"] == "ü"
    assert sent.resources[2].provider.urn == provider["urn"] and list(sent.resources[2].dependencies) == group["dependencies"]
    assert list(sent.resources[2].propertyDependencies["launchTemplate"].urns) == [template["urn"]]


def test_a_remediated_provider_is_sent_as_rewritten_with_the_resources_it_serves():
    """The Remediate pass rewrites what the rest of the session sends: a provider remediated before
    the resources it serves are sent is carried with its new inputs, as the CLI's own engine does.
    The typed resources read are left as they were; the new inputs come back by URN."""
    from pulumi.runtime.proto import analyzer_pb2

    from gpufleet.analyzer.results import PolicyResult

    provider = {"urn": "urn:pulumi:s::p::pulumi:providers:aws::east", "type": "pulumi:providers:aws", "name": "east", "inputs": {"region": "us-west-2"}}
    template = {"urn": "urn:pulumi:s::p::aws:ec2/launchTemplate:LaunchTemplate::lt", "type": "aws:ec2/launchTemplate:LaunchTemplate",
                "name": "lt", "provider": provider["urn"], "inputs": {"instanceType": "g5.xlarge"}}
    typed = from_plan({"resources": [provider, template]})
    pack = object.__new__(PolicyPack)  # no process: the pack's answers are written here
    pack._requests, pack._providers, pack._by_urn = {}, {}, {r.urn: r for r in typed}

    def call(method: str, request: bytes, optional: bool = False, timeout: float | None = None):
        response = analyzer_pb2.RemediateResponse()
        if analyzer_pb2.AnalyzeRequest.FromString(request).urn == provider["urn"]:
            response.remediations.add(policyName="pin-region").properties.update({"region": "us-east-1"})
        return response

    pack._call = call
    result = PolicyResult("p", "1")
    rewritten = [pack._remediate_one(r, result) for r in typed]
    assert rewritten[0].props == {"region": "us-east-1"} and rewritten[1] is typed[1]
    assert result.remediated == {provider["urn"]: {"region": "us-east-1"}}
    assert result.remediations == [{"policy": "pin-region", "urn": provider["urn"]}]
    assert typed[0].props == {"region": "us-west-2"}
    sent = analyzer_pb2.AnalyzeRequest.FromString(pack._request(rewritten[1]))
    assert sent.provider.urn == provider["urn"] and dict(sent.provider.properties) == {"region": "us-east-1"}
