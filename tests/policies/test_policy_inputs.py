"""src/gpufleet/policies/inputs.py: how every policy reads a resource's inputs as the engine sends them during a
preview: values known only after apply (pulumi_policy's proxy raises on them), strings for booleans,
doubles for numbers, base64 user data, and the region a resource is created in."""

from __future__ import annotations

import base64
from types import SimpleNamespace

import pytest
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, unknown_checking_proxy

from gpufleet.policies import inputs
from tests.conftest import shipped_plan

UNKNOWN = UNKNOWN_STRING_VALUE


def _preview(value: dict):
    """Inputs as a policy gets them during preview: unknown values raise when read."""
    return unknown_checking_proxy(value)


RESOURCE = _preview({
    "name": "g5",
    "arn": UNKNOWN,
    "tags": {"team": "ml", "owner": UNKNOWN},
    "subnets": ["subnet-a", UNKNOWN, "subnet-c"],
    "sizes": [1, 2],
    "nested": [{"id": UNKNOWN_NUMBER_VALUE, "kind": "efa"}],
    "empty": None,
})


@pytest.mark.parametrize(
    "path, value, is_present",
    [
        (("name",), "g5", True),
        (("arn",), None, True),  # known after apply: present, but no value to judge
        (("tags", "team"), "ml", True),
        (("tags", "owner"), None, True),
        (("tags", "missing"), None, False),
        (("subnets", 0), "subnet-a", True),
        (("subnets", 1), None, True),
        (("subnets", 2), "subnet-c", True),
        (("subnets", 3), None, False),  # past the end
        (("name", 0), None, False),  # a string is not a list
        (("tags", 0), None, False),
        (("sizes", "x"), None, False),  # a list has no keys
        (("nested", 0, "kind"), "efa", True),
        (("nested", 0, "id"), None, True),
        (("empty",), None, False),  # set to null: not present
        (("nowhere", "deeper"), None, False),
    ],
)
def test_get_and_present_read_through_unknowns(path, value, is_present):
    assert inputs.get(RESOURCE, *path) == value
    assert inputs.present(RESOURCE, *path) is is_present


def test_items_leaves_unknown_elements_out():
    assert inputs.items(RESOURCE["subnets"]) == ["subnet-a", "subnet-c"]
    assert inputs.items("subnet-a") == [] and inputs.items(None) == []


def test_plain_leaves_unknowns_out_or_marks_them():
    assert inputs.plain(RESOURCE["tags"]) == {"team": "ml"}
    assert inputs.plain(RESOURCE["subnets"]) == ["subnet-a", "subnet-c"]
    marked = inputs.plain(RESOURCE, unknown="?")
    assert marked["arn"] == "?" and marked["tags"] == {"team": "ml", "owner": "?"}
    assert marked["subnets"] == ["subnet-a", "?", "subnet-c"]
    assert marked["nested"] == [{"id": "?", "kind": "efa"}]
    left_out = inputs.plain(RESOURCE)
    assert "arn" not in left_out and left_out["name"] == "g5" and left_out["nested"] == [{"kind": "efa"}]
    assert list(left_out) == ["name", "tags", "subnets", "sizes", "nested", "empty"]  # every known key, in order


@pytest.mark.parametrize("stack", ["ecs-gpu", "eks-p5-efa", "ack-shared-gpu"])
def test_plain_reads_pulumi_policys_proxies_directly_as_it_reads_them_through_their_checks(stack, monkeypatch):
    assert inputs._DICT_PROXY is not None and inputs._LIST_PROXY is not None  # pulumi_policy 1.21's proxies
    odd = {"a": [None, UNKNOWN_STRING_VALUE, {"b": UNKNOWN_NUMBER_VALUE, "c": None}, [1, None]], "d": UNKNOWN_STRING_VALUE}
    props = [unknown_checking_proxy(r["inputs"]) for r in [*shipped_plan(stack)["resources"], {"inputs": odd}]]
    direct = [(inputs.plain(p), inputs.plain(p, "?")) for p in props]
    monkeypatch.setattr(inputs, "_DICT_PROXY", None)
    monkeypatch.setattr(inputs, "_LIST_PROXY", None)
    assert direct == [(inputs.plain(p), inputs.plain(p, "?")) for p in props]
    assert direct[-1] == ({"a": [{"c": None}, [1]]}, {"a": [None, "?", {"b": "?", "c": None}, [1, None]], "d": "?"})


def test_truthy_reads_pulumi_aws_string_booleans():
    assert [inputs.truthy(v) for v in (True, "true", "True", "TRUE")] == [True] * 4
    assert [inputs.truthy(v) for v in (False, "false", "yes", 1, None, "")] == [False] * 6


def test_text_prints_whole_doubles_as_integers():
    assert [inputs.text(v) for v in (22.0, 22.5, 3, "4.0", True)] == ["22", "22.5", "3", "4.0", "True"]


def test_json_document():
    assert inputs.json_document('[{"name": "a"}]') == [{"name": "a"}]
    assert inputs.json_document("not json") is None
    assert inputs.json_document([{"name": "a"}]) == [{"name": "a"}]


def test_user_data_is_decoded_when_base64_and_kept_as_given_otherwise():
    script = "#!/bin/bash\necho ECS_ENABLE_GPU_SUPPORT=true >> /etc/ecs/ecs.config\n"
    assert inputs.user_data_text(base64.b64encode(script.encode()).decode()) == script
    assert inputs.user_data_text(script) == script  # not base64 (validate=True refuses its characters)
    assert inputs.user_data_text("YWJj\n") == "YWJj\n"  # a newline is not base64 either when validating
    assert inputs.user_data_text("échelle") == "échelle"  # not ASCII: b64decode raises ValueError, not binascii.Error
    assert inputs.user_data_text(base64.b64encode(b"\xff\xfeok").decode()) == "\ufffd\ufffdok"  # bytes that are not UTF-8
    assert inputs.user_data_text(None) == "" and inputs.user_data_text(7) == ""


def _args(region=None):
    provider = None if region is False else SimpleNamespace(props=_preview({} if region is None else {"region": region}))
    return SimpleNamespace(provider=provider)


@pytest.mark.parametrize(
    "provider, config, env, expected",
    [
        ("eu-west-1", "us-east-1", {"AWS_REGION": "ap-south-1"}, "eu-west-1"),  # the provider's own region first
        (UNKNOWN, "us-east-1", {}, "us-east-1"),  # an unknown provider region: the stack's
        (None, "us-east-1", {"AWS_REGION": "ap-south-1"}, "us-east-1"),
        (False, None, {"AWS_REGION": "ap-south-1"}, "ap-south-1"),  # no provider, no config: the environment
        (False, None, {"AWS_DEFAULT_REGION": "sa-east-1"}, "sa-east-1"),
        (False, None, {"AWS_REGION": "", "AWS_DEFAULT_REGION": "sa-east-1"}, "sa-east-1"),
        (False, None, {}, None),
    ],
)
def test_provider_region(monkeypatch, provider, config, env, expected):
    import pulumi

    monkeypatch.setattr(pulumi.Config, "get", lambda self, key: config if (self.name, key) == ("aws", "region") else None)
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert inputs.provider_region(_args(provider), "aws", "AWS_REGION", "AWS_DEFAULT_REGION") == expected


def test_a_reading_is_shared_by_the_same_objects_and_only_by_them():
    """The rules that read a task definition share one reading of the inputs object the servicer
    hands them all (read_once); inputs equal but not the same are read again."""
    read = []
    once = inputs.read_once(lambda props, cat: read.append(props) or [props, cat])
    props, cat = _preview({"family": "f"}), object()
    first = once(props, cat)
    assert once(props, cat) is first and len(read) == 1
    assert once(_preview({"family": "f"}), cat) is not first and len(read) == 2
    assert once(props, object()) is not first and len(read) == 3


def test_the_ecs_rules_read_a_task_definition_once():
    from gpufleet.catalog import catalog
    from gpufleet.policies import ecs_task

    props = _preview({"family": "f", "containerDefinitions": '[{"name": "main", "image": "i"}]'})
    cat = catalog.load()
    assert ecs_task.read_task(props, cat) is ecs_task.read_task(props, cat)


def test_the_readings_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(inputs, "_KEPT", 2)
    read = []
    once = inputs.read_once(lambda value: read.append(value) or len(read))
    a, b, c = object(), object(), object()
    assert [once(a), once(b), once(a)] == [1, 2, 1]
    once(c)  # past the bound: what was kept is let go
    assert once(a) == 4 and len(read) == 4


def _stack(*resources):
    return SimpleNamespace(resources=list(resources))


def _resource(urn: str, props: dict, deps: dict | None = None):
    return SimpleNamespace(urn=urn, props=props, property_dependencies=deps or {})


def test_once_per_stack_reads_a_stack_once_for_every_policy_that_asks():
    reads = []
    read = inputs.once_per_stack(lambda args: reads.append(args) or len(reads))
    a, b = _resource("urn:a", {"x": 1}), _resource("urn:b", {"y": 2})
    assert read(_stack(a, b)) == read(_stack(a, b)) == 1  # each policy its own list, the same objects
    assert read(_stack(a, _resource("urn:b", {"y": 2}))) == 2  # an equal input is another object: read again
    c = _resource("urn:b", b.props, {"y": [a]})
    assert read(_stack(a, c)) == 3  # a dependency changed
    assert read(_stack(a, c)) == 3


class _Counted(SimpleNamespace):
    """A stack resource that counts the reads of its dependencies."""

    reads = 0

    @property
    def property_dependencies(self):
        type(self).reads += 1
        return {}


def test_once_per_stack_knows_the_same_resource_objects_without_reading_each_again():
    read = inputs.once_per_stack(lambda args: len(args.resources))
    resources = [_Counted(urn=f"urn:{i}", props={}) for i in range(3)]
    assert read(_stack(*resources)) == 3
    before = _Counted.reads
    assert read(_stack(*resources)) == 3  # the next policy: its own list, the same objects
    assert _Counted.reads == before


def test_the_stack_policies_that_share_a_reading_read_it_once_per_stack():
    from gpufleet.policies import dra, placement

    assert dra._read.__wrapped__ and placement.placement_of.__wrapped__


def test_a_stack_resource_is_typed_once_for_every_policy_that_reads_it():
    service = SimpleNamespace(
        urn="urn:pulumi:s::p::aws:ecs/service:Service::a", resource_type="aws:ecs/service:Service", name="a", props={"x": 1}
    )
    other = SimpleNamespace(
        urn="urn:pulumi:s::p::random:index/randomId:RandomId::b", resource_type="random:index/randomId:RandomId", name="b", props={}
    )
    first = inputs.plan_resources(_stack(service, other))
    assert [r.urn for r in first] == [service.urn]  # the plan view reads services, not random ids
    assert inputs.plan_resources(_stack(service, other))[0] is first[0]  # the placement's and the DRA install's alike
