"""The Analyze relay (analyzer/relay.py and relay_link.py) against a gRPC server of the test's own:
requests held until the session's pack is configured and dropped when it will not analyse through
the relay, answers matched to their requests whichever order they come in, kept answers repeated by
index within a session only, and every way the relay or the pack fails reported, never waited on."""

from __future__ import annotations

import ast
import os
import signal
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from pulumi.runtime.proto import analyzer_pb2

from gpufleet.analyzer import relay
from gpufleet.analyzer.client import PolicyPack, PolicyPackError
from gpufleet.analyzer.pack_dir import DEFAULT_PACK
from gpufleet.analyzer.relay_link import RelayError, RelayLink
from gpufleet.analyzer.results import LEVEL_CODES
from gpufleet.plans.index import from_plan
from tests.policy_helpers import gpu_container, task_definition

WAIT = 30.0


def _passed(*policies: str) -> bytes:
    return analyzer_pb2.AnalyzeResponse(
        not_applicable=[analyzer_pb2.PolicyNotApplicable(policy_name=p) for p in policies]
    ).SerializeToString()


def _finding(urn: str) -> bytes:
    diagnostic = analyzer_pb2.AnalyzeDiagnostic(policyName="p", urn=urn, message="m", enforcementLevel=LEVEL_CODES["mandatory"])
    return analyzer_pb2.AnalyzeResponse(diagnostics=[diagnostic]).SerializeToString()


class Pack:
    """A pack's Analyze: answers what `answer(request bytes)` returns, and records what it was asked."""

    def __init__(self, answer):
        self.asked: list[bytes] = []
        self._answer = answer

        def analyze(request: bytes, context: grpc.ServicerContext) -> bytes:
            self.asked.append(request)
            return self._answer(request, context)

        handler = grpc.method_handlers_generic_handler("pulumirpc.Analyzer", {"Analyze": grpc.unary_unary_rpc_method_handler(analyze)})
        self.server = grpc.server(futures.ThreadPoolExecutor(4))
        self.server.add_generic_rpc_handlers((handler,))
        self.target = f"127.0.0.1:{self.server.add_insecure_port('127.0.0.1:0')}"
        self.server.start()


@pytest.fixture
def link():
    made = RelayLink()
    yield made
    made.stop()


@pytest.fixture
def pack():
    made: list[Pack] = []

    def serving(answer) -> Pack:
        made.append(Pack(answer))
        return made[-1]

    yield serving
    for p in made:
        p.server.stop(None)


def test_held_requests_wait_for_go_and_dropped_ones_never_reach_the_pack(link, pack):
    served = pack(lambda request, _: _passed(request.decode()))
    link.connect(served.target, WAIT, WAIT)
    link.hold(WAIT)
    link.send([b"dropped-1", b"dropped-2"], [0, 1], WAIT)
    link.drop(WAIT)
    link.send([b"after-drop"], [2], WAIT)  # a remediating session's: analysed by the client itself
    link.hold(WAIT)
    link.send([b"held"], [0], WAIT)
    link.go(WAIT)
    link.send([b"at-once"], [1], WAIT)
    assert link.answers(2, WAIT) == [(0, _passed("held")), (0, _passed("at-once"))]
    assert sorted(served.asked) == [b"at-once", b"held"]  # frames are read in order: the dropped were gone before GO


def test_answers_alike_travel_once_a_session_and_findings_whole(link, pack):
    """An answer without diagnostics is kept by both ends and repeated by its index; each session
    starts its table afresh, so indexes of the session before never name this one's answers."""
    answers = {b"a": _passed("x"), b"b": _passed("y"), b"f": _finding("u1")}
    served = pack(lambda request, _: answers[request[:1]])
    link.connect(served.target, WAIT, WAIT)
    for session in range(2):
        link.hold(WAIT)
        order = [b"b", b"a"] if session else [b"a", b"b"]  # the kept indexes name other answers now
        requests = [r + str(i).encode() for i in range(20) for r in order] + [b"f1", b"f2"]
        link.send(requests, list(range(len(requests))), WAIT)
        link.go(WAIT)
        assert link.answers(len(requests), WAIT) == [(0, answers[r[:1]]) for r in requests]
        assert sorted(link._kept) == sorted([_passed("x"), _passed("y")])  # findings are never kept


def test_a_failed_call_comes_back_with_its_status_and_details(link, pack):
    def answer(request: bytes, context: grpc.ServicerContext) -> bytes:
        if request == b"slow":
            time.sleep(2)
        elif request == b"bad":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no such resource type")
        return _passed()

    served = pack(answer)
    link.connect(served.target, 0.5, WAIT)  # each call's deadline
    link.hold(WAIT)
    link.send([b"bad", b"slow", b"good"], [0, 1, 2], WAIT)
    link.go(WAIT)
    got = link.answers(3, WAIT)
    assert got[0] == (grpc.StatusCode.INVALID_ARGUMENT.value[0], b"no such resource type")
    assert got[1][0] == grpc.StatusCode.DEADLINE_EXCEEDED.value[0]
    assert got[2] == (0, _passed())


def test_a_relay_that_ends_or_stops_answering_is_reported(link, pack):
    served = pack(lambda request, _: _passed())
    link.connect(served.target, WAIT, WAIT)
    link.hold(WAIT)
    link.send([b"one"], [0], WAIT)
    os.kill(link.process.pid, signal.SIGSTOP)
    link.go(WAIT)
    with pytest.raises(RelayError, match=r"answered nothing for 1 s; its process is running"):
        link.answers(1, 1)
    os.kill(link.process.pid, signal.SIGKILL)
    link.process.wait(WAIT)
    with pytest.raises(RelayError, match=r"ended with 1 answers outstanding; its process exited with code -9"):
        link.answers(1, WAIT)
    with pytest.raises(RelayError, match=r"could not be written to .*exited with code -9"):
        link.send([b"two"], [1], WAIT)


def test_a_relay_that_takes_no_request_is_reported(link):
    os.kill(link.process.pid, signal.SIGSTOP)
    try:
        with pytest.raises(RelayError, match="took no request for 1 s"):
            for _ in range(64):  # past the pipe's buffer: 1 MiB, or the system's smaller limit
                link.send([b"x" * (64 * 1024)], [0], 1)
    finally:
        os.kill(link.process.pid, signal.SIGCONT)


def test_a_relay_killed_during_a_session_fails_it_closed():
    """The client's side: the session's resources are not judged, and the error says why."""
    resources = from_plan({"resources": [task_definition(f"t{i}", [gpu_container("a", 1)]) for i in range(3)]})
    with PolicyPack(DEFAULT_PACK, project="gpufleet", stack="relay-killed") as pack:
        pack.configure({})
        os.kill(pack.pack.relay.process.pid, signal.SIGKILL)
        pack.pack.relay.process.wait(WAIT)
        with pytest.raises(PolicyPackError, match="the Analyze relay .*exited with code -9.*nothing was judged"):
            pack.judge({}, resources)


def test_requests_written_from_many_threads_arrive_whole(link, pack):
    """Frames from the program's threads and the session's own never interleave."""
    served = pack(lambda request, _: request[:8])
    link.connect(served.target, WAIT, WAIT)
    link.hold(WAIT)

    def write(thread: int) -> None:
        for i in range(50):
            link.send([f"{thread:04d}{i:04d}".encode() + bytes(20_000)], [thread * 50 + i], WAIT)

    threads = [threading.Thread(target=write, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    link.go(WAIT)
    for t in threads:
        t.join()
    assert link.answers(300, WAIT) == [(0, f"{i // 50:04d}{i % 50:04d}".encode()) for i in range(300)]


def test_the_relay_imports_nothing_of_gpufleet():
    """It runs by path in an isolated interpreter: gpufleet's modules are neither needed nor loaded,
    at its top or inside a function (where it imports grpc once it runs)."""
    tree = ast.parse(Path(relay.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "grpc" in imported and not [name for name in imported if name.split(".")[0] == "gpufleet"], imported


def _nice(pid: int) -> int:
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[16])


def test_the_relay_yields_the_cores_to_the_program(link):
    """Its calls can wait a moment; the program, on the preview's longest path, should not."""
    for _ in range(200):
        if _nice(link.process.pid) == relay.NICE:
            break
        time.sleep(0.05)
    assert _nice(link.process.pid) == relay.NICE
    group = f"/proc/{link.process.pid}/autogroup"
    if os.path.exists(group):  # Linux with autogroups: the relay's session is weighed, not its nice
        assert open(group).read().endswith(f"nice {relay.NICE}\n")
