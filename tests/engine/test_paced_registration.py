"""The offline engine's paced registration (src/gpufleet/engine/patches/paced_registration.py): registrations
keep pace with a program's declarations (a turn of the event loop every few), a turn is never
taken inside another, and the alias URNs the SDK would compute, which nothing reads under a
monitor with alias specs, are skipped while the monitor receives the same alias specs. The shipped
stacks' golden plans (tests/test_preview*.py) hold the whole preview unchanged."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pulumi.resource
import pytest
from pulumi.runtime import sync_await
from pulumi.runtime.proto import resource_pb2

from gpufleet.engine.patches import paced_registration
from gpufleet.engine.patches.paced_registration import _Pace
from gpufleet.engine.runtime import Program, _Recorder, run_program

DECLARED = 400
# Each declaration takes a while, as a real program's work does (here without holding the GIL, so
# that the monitor's threads can answer meanwhile).
FLEET = f'''
import sys, time
import pulumi
declared = sys.modules["__pace_probe__"]
for i in range({DECLARED}):
    pulumi.CustomResource("gpufleet:test:Bare", f"r{{i}}", {{}})
    declared.append(i)
    time.sleep(0.001)
'''


def _registered_early(tmp_path) -> int:
    """How many resources registered while the program was still declaring."""
    main = Path(tmp_path) / "__main__.py"
    main.write_text(FLEET)
    declared: list[int] = []
    sys.modules["__pace_probe__"] = declared
    seen = []
    try:
        run_program({}, "pace", program=Program(main, "pace", Path(tmp_path)),
                    on_resource=lambda r: r.type == "gpufleet:test:Bare" and seen.append(len(declared)))
    finally:
        del sys.modules["__pace_probe__"]
    assert len(seen) == DECLARED
    return sum(1 for count in seen if count < DECLARED)


def test_registrations_keep_pace_with_declarations(tmp_path, monkeypatch):
    assert _registered_early(tmp_path) >= DECLARED // 2
    # Without the turns, nothing registers before the program has declared everything.
    monkeypatch.setattr(paced_registration, "EVERY", 10 * DECLARED)
    assert _registered_early(tmp_path) == 0


def test_a_turn_every_fifty_declarations_in_the_body_and_never_inside_a_turn(monkeypatch):
    pace, turns = _Pace(), []

    def turn(loop):
        turns.append(pace.declared)
        for _ in range(50):  # declared during the turn (in an apply): they wait for the next
            pace.register_resource()

    monkeypatch.setattr(paced_registration, "_SDK_REGISTER", lambda *args, **kwargs: None)
    monkeypatch.setattr(pace, "_turn", turn)
    for _ in range(50):
        pace.register_resource()
    assert turns == []  # not in the program's body

    def body():
        for _ in range(49):
            pace.register_resource()
        assert turns == []
        pace.register_resource()
        assert turns == [100] and pace.declared == 150 and not pace.in_turn
        for _ in range(50):
            pace.register_resource()
        return turns

    async def program():
        return pace.body(body)

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(program()) == [100, 200] and not pace.in_body
    finally:
        loop.close()


def test_no_turn_for_a_declaration_outside_the_bodys_step(monkeypatch):
    """An apply that declares while the body's synchronous invoke runs the loop is another step."""
    monkeypatch.setattr(paced_registration, "_SDK_REGISTER", lambda *args, **kwargs: None)
    pace, turns = _Pace(), []
    monkeypatch.setattr(pace, "_turn", lambda loop: turns.append(pace.declared))

    async def apply():
        for _ in range(100):
            pace.register_resource()

    def body():
        for _ in range(50):
            pace.register_resource()
        sync_await._sync_await(apply())  # as an invoke from the body waits
        for _ in range(50):
            pace.register_resource()

    async def program():
        pace.body(body)

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(program())
    finally:
        loop.close()
    assert turns == [50, 200]


def _in_a_pass(body, before: int = 0, after: int = 0) -> list[str]:
    """Run `body` as one handle of a loop's pass, between `before` and `after` other handles."""
    loop = asyncio.new_event_loop()
    ran: list[str] = []
    try:
        for i in range(before):
            loop.call_soon(ran.append, f"before {i}")
        loop.call_soon(body, loop, ran)
        for i in range(after):
            loop.call_soon(ran.append, f"after {i}")
        loop.call_soon(loop.stop)
        loop.run_forever()
    finally:
        loop.close()
    return ran


def test_a_turn_runs_what_was_ready_and_what_that_made_ready_without_waiting(monkeypatch):
    monkeypatch.setattr(paced_registration, "_SDK_REGISTER", lambda *args, **kwargs: None)

    def body(loop, ran):
        loop.call_soon(lambda: loop.call_soon(ran.append, "made ready"))
        loop.call_later(0.5, ran.append, "later")
        pace = _Pace()
        pace.body(lambda: [pace.register_resource() for _ in range(50)])
        ran.append("body")

    assert _in_a_pass(body, after=2) == ["after 0", "after 1", "made ready", "body"]


def test_a_turn_stops_once_nothing_is_ready(monkeypatch):
    monkeypatch.setattr(paced_registration, "_SDK_REGISTER", lambda *args, **kwargs: None)

    def body(loop, ran):
        passes = []
        run_once = loop._run_once
        monkeypatch.setattr(loop, "_run_once", lambda: passes.append(1) or run_once())
        loop.call_soon(lambda: loop.call_soon(ran.append, "second"))
        pace = _Pace()
        pace.body(lambda: [pace.register_resource() for _ in range(50)])
        ran.append(len(passes))
        monkeypatch.undo()

    assert _in_a_pass(body) == ["second", 2]


def test_a_turn_ends_after_its_passes_even_if_something_is_always_ready(monkeypatch):
    monkeypatch.setattr(paced_registration, "_SDK_REGISTER", lambda *args, **kwargs: None)
    spins = []

    def body(loop, ran):
        def spin():  # a callback that schedules itself again, forever
            spins.append(1)
            if len(spins) < 10 * paced_registration.PASSES:
                loop.call_soon(spin)

        loop.call_soon(spin)
        pace = _Pace()
        pace.body(lambda: [pace.register_resource() for _ in range(50)])
        ran.append(len(spins))

    assert _in_a_pass(body) == [100]


def test_the_pass_running_the_body_finds_its_handles_after_many_turns(monkeypatch):
    """The loop's pass that runs the body takes its remaining handles after it: the turns ran
    them, so the queue is padded, to a length learnt once and not grown turn after turn."""
    monkeypatch.setattr(paced_registration, "_SDK_REGISTER", lambda *args, **kwargs: None)
    lengths = []

    def body(loop, ran):
        pace = _Pace()

        def declare():
            for turn in range(40):
                for i in range(30):  # what the program schedules between turns
                    loop.call_soon(ran.append, f"turn {turn} {i}")
                for _ in range(50):
                    pace.register_resource()
                lengths.append(len(loop._ready))

        pace.body(declare)

    ran = _in_a_pass(body, before=3, after=5)
    assert ran[:3] == ["before 0", "before 1", "before 2"] and ran[3:8] == [f"after {i}" for i in range(5)]
    assert len(ran) == 8 + 40 * 30
    # Padded to the queue at the first turn (the pass's five, its stop, the first thirty), and no more.
    assert lengths == [6 + 30] * 40


ALIASED = '''
import sys
import pulumi
import pulumi_kubernetes as k8s

class Pool(pulumi.ComponentResource):
    def __init__(self, name, opts=None):
        super().__init__("gpufleet:test:Pool", name, None, opts)
        app = k8s.apps.v1.Deployment("app", metadata={"name": "app"}, spec={"selector": {"matchLabels": {"app": "app"}},
            "template": {"metadata": {"labels": {"app": "app"}}, "spec": {"containers": [{"name": "app", "image": "busybox"}]}}},
            opts=pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(name="old-app")]))
        sys.modules["__alias_probe__"].append(app)
        self.register_outputs({})

Pool("pool", opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(name="old-pool")]))
'''


def _aliases_sent(tmp_path, monkeypatch) -> tuple[dict[str, list[str]], list]:
    """The alias specs each resource's registration sent, and the Deployment's `_aliases`."""
    main = Path(tmp_path) / "__main__.py"
    main.write_text(ALIASED)
    sent: dict[str, list[str]] = {}
    register = _Recorder.RegisterResource

    def spy(self, request):
        sent[request.name] = sorted(str(a).replace("\n", " ") for a in request.aliases)
        return register(self, request)

    monkeypatch.setattr(_Recorder, "RegisterResource", spy)
    sys.modules["__alias_probe__"] = probe = []
    try:
        run_program({}, "aliases", program=Program(main, "aliases", Path(tmp_path)))
    finally:
        del sys.modules["__alias_probe__"]
    return sent, probe[0]._aliases


def test_alias_urns_are_skipped_and_the_monitor_gets_the_same_alias_specs(tmp_path, monkeypatch):
    skipped, kept = _aliases_sent(tmp_path, monkeypatch)
    assert len(skipped["app"]) == 4 and len(skipped["pool"]) == 1  # three of pulumi_kubernetes's, one of ours
    assert any("kubernetes:apps/v1beta1:Deployment" in a for a in skipped["app"])
    assert len(kept) == 4 and not any(isinstance(a, pulumi.Output) for a in kept)
    # With the SDK's alias URNs: an Output made for each alias, and the same specs sent.
    monkeypatch.setattr(paced_registration, "_alias_as_given", paced_registration._SDK_ALIAS_URN)
    made, urns = _aliases_sent(tmp_path, monkeypatch)
    assert made == skipped
    assert len(urns) == 4 and all(isinstance(a, pulumi.Output) for a in urns)
    assert pulumi.resource.collapse_alias_to_urn is paced_registration._SDK_ALIAS_URN  # restored after the run


@pytest.mark.parametrize("features", [[], [resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS]])
def test_a_monitor_without_alias_specs_gets_the_sdks_alias_urns(features):
    with paced_registration.paced_registration(features):
        assert pulumi.resource.collapse_alias_to_urn is paced_registration._SDK_ALIAS_URN
        assert pulumi.resource.register_resource is not paced_registration._SDK_REGISTER
    assert pulumi.resource.register_resource is paced_registration._SDK_REGISTER


URNS = '''
import asyncio
import pulumi
from gpufleet.engine.patches import paced_registration as pr

parent = pulumi.CustomResource("gpufleet:test:Parent", "par", {})
cases = {
    "stack's child": ("a", "gpufleet:test:T", None, None, None),
    "a parent's URN": ("b", "gpufleet:test:T", "urn:pulumi:urns::urns::gpufleet:test:Parent::par", None, None),
    "project and stack given": ("c", "gpufleet:test:T", None, "other", "prod"),
    "a nested parent's URN": ("d", "gpufleet:test:T", "urn:pulumi:s::p::x:y:P$x:y:Q::q", "ignored", "ignored"),
    "a parent resource": ("e", "gpufleet:test:T", parent, None, None),
    "an Output name": (pulumi.Output.from_input("f"), "gpufleet:test:T", None, None, None),
}
for case, args in cases.items():
    before = len(asyncio.all_tasks())
    made = pr._urn(*args)
    tasks = len(asyncio.all_tasks()) - before
    pulumi.export(case, pulumi.Output.all(made, pr._SDK_CREATE_URN(*args), tasks))
'''


def test_urns_of_strings_are_the_sdks(tmp_path):
    main = Path(tmp_path) / "__main__.py"
    main.write_text(URNS)
    outputs = run_program({}, "urns", program=Program(main, "urns", Path(tmp_path))).outputs
    assert {case: fast == sdk for case, (fast, sdk, _) in outputs.items()} == dict.fromkeys(outputs, True)
    assert outputs["stack's child"][0] == "urn:pulumi:urns::urns::gpufleet:test:T::a"
    assert outputs["a parent's URN"][0] == "urn:pulumi:urns::urns::gpufleet:test:Parent$gpufleet:test:T::b"
    assert outputs["project and stack given"][0] == "urn:pulumi:prod::other::gpufleet:test:T::c"
    assert outputs["a nested parent's URN"][0] == "urn:pulumi:s::p::x:y:P$x:y:Q$gpufleet:test:T::d"
    assert outputs["a parent resource"][0].endswith("::pulumi:pulumi:Stack$gpufleet:test:Parent$gpufleet:test:T::e")
    # Strings make no task; parts that are not strings go to the SDK's own, which makes several.
    assert {case for case, (_, _, tasks) in outputs.items() if tasks} == {"a parent resource", "an Output name"}
    assert pulumi.resource.create_urn is not paced_registration._urn  # the SDK's public function is untouched


def test_the_sdks_create_urn_is_back_after_the_run(tmp_path):
    from pulumi.runtime import resource as sdk_resource

    with paced_registration.paced_registration([]):
        assert sdk_resource.create_urn is paced_registration._urn
    assert sdk_resource.create_urn is paced_registration._SDK_CREATE_URN
