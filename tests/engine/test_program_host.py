"""A program of one's own runs as the CLI's language host runs it: in its own interpreter, against a
monitor gpufleet serves over Pulumi's gRPC protocol. Every wait is bounded, every refusal is named,
and the program's output is the program's (never the plan's stdout)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.engine.collector import preview_thresholds
from tests.conftest import run_cli


def _program(tmp_path: Path, body: str, project: str = "Pulumi.yaml: name: hosted\nruntime: python\n") -> Path:
    folder = tmp_path / "prog"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text(project.split(": ", 1)[1] if project.startswith("Pulumi.yaml: ") else project)
    (folder / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (folder / "__main__.py").write_text("import pulumi\n" + textwrap.dedent(body))
    return folder


def _preview(folder: Path, *flags: str) -> tuple[int, str, str]:
    return run_cli("preview", "--program", str(folder), "--python", sys.executable, "--no-policy", *flags)


THING = 'pulumi.CustomResource("test:index:Thing", "one", {"size": 2, "gone": None})\n'


def test_urns_and_inputs_are_the_engines(tmp_path):
    """The engine's URN: a child of the stack is not qualified by the stack's type, a child of a
    component is; a null input is no input, as the SDK reads it."""
    folder = _program(
        tmp_path,
        THING + 'parent = pulumi.ComponentResource("test:index:Box", "box")\n'
        'pulumi.CustomResource("test:index:Thing", "two", {}, opts=pulumi.ResourceOptions(parent=parent))\n'
        'pulumi.export("size", 2)\n',
    )
    code, out, err = _preview(folder, "--json")
    assert code == 0, err
    plan = json.loads(out)
    urns = {r["name"]: r["urn"] for r in plan["resources"]}
    assert urns["one"] == "urn:pulumi:dev::hosted::test:index:Thing::one"
    assert urns["two"] == "urn:pulumi:dev::hosted::test:index:Box$test:index:Thing::two"
    [one] = [r for r in plan["resources"] if r["name"] == "one"]
    assert one["inputs"] == {"size": 2}
    assert plan["outputs"] == {"size": 2}


def test_the_programs_output_reaches_stderr_and_not_the_plan(tmp_path):
    folder = _program(
        tmp_path,
        THING + 'import sys\nprint("x" * 10_000)\nprint("to stderr", file=sys.stderr)\nfor _ in range(500):\n    print("y" * 10_000)\n',
    )
    code, out, err = _preview(folder, "--json")
    assert code == 0
    json.loads(out)  # stdout is the plan alone
    assert "to stderr\n" in err and err.count("y" * 10_000 + "\n") == 500


def test_a_program_that_never_ends_is_stopped_at_the_bound_naming_its_last_call(tmp_path):
    folder = _program(tmp_path, "import time\nthing = " + THING + "thing.urn.apply(lambda _: time.sleep(3600))\n")
    start = time.monotonic()
    code, out, err = _preview(folder, "--timeout", "3")
    assert code == 2 and out == "" and "Traceback" not in err
    assert time.monotonic() - start < 60
    assert "did not finish within 3 s (--timeout)" in err
    assert "the last RegisterResource test:index:Thing 'one'" in err


def test_a_program_stuck_before_its_first_call_says_so(tmp_path):
    folder = _program(tmp_path, "import time\ntime.sleep(3600)\n")
    code, _, err = _preview(folder, "--timeout", "2")
    assert code == 2 and "did not finish within 2 s (--timeout); the program made no call to the monitor" in err


LEFT_RUNNING = {
    "child process": "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'])\n",
    "thread": "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,)).start()\n",
}


@pytest.mark.parametrize("left", LEFT_RUNNING.values(), ids=LEFT_RUNNING.keys())
def test_what_a_program_leaves_running_does_not_hold_the_preview(tmp_path, left):
    """A child holding the output pipes, a thread keeping the interpreter up: both are stopped."""
    start = time.monotonic()
    code, _, err = _preview(_program(tmp_path, THING + left), "--timeout", "120")
    assert code == 0, err
    assert time.monotonic() - start < 60


def test_the_programs_interpreter_collects_as_gpufleets_engine_does(tmp_path):
    """The program's interpreter gets the collector's thresholds gpufleet's own engine runs a program
    with (no full passes over the SDKs' classes), and its teardown is frozen once the program has
    ended and reported: the program's exit handlers still run, and their output is passed on."""
    folder = _program(
        tmp_path,
        THING + "import atexit, gc, sys\n"
        'print("thresholds", gc.get_threshold(), file=sys.stderr)\n'
        'atexit.register(lambda: print("at exit, frozen:", gc.get_freeze_count() > 0, file=sys.stderr))\n',
    )
    code, _, err = _preview(folder)
    assert code == 0, err
    assert f"thresholds {preview_thresholds()}" in err
    assert "at exit, frozen: True" in err


# What the program's own interpreter shows of gpufleet's SDK patches: a service package it uses loaded
# lean (a few of its modules), the stack walk per registration skipped, outputs made when read, debug
# messages not sent.
_PATCHES_SEEN = THING + """import sys
import pulumi_aws
from pulumi.runtime import resource, rpc
pulumi_aws.ec2.SecurityGroup
print("ec2 modules", sum(name.startswith("pulumi_aws.ec2.") for name in sys.modules), file=sys.stderr)
print("stack walk", resource._get_stack_trace.__name__, file=sys.stderr)
print("transfer", rpc.transfer_properties.__module__, file=sys.stderr)
print("debug", pulumi.log.debug.__module__, file=sys.stderr)
"""


@pytest.mark.parametrize("switch", ["on", "off"])
def test_the_programs_interpreter_gets_the_sdk_patches_within_their_gate(tmp_path, monkeypatch, switch):
    """A program of one's own gets gpufleet's HOSTED patches in its own interpreter, each through its
    version gate against that interpreter's packages, and the off switch turns them off there too."""
    monkeypatch.setenv("GPUFLEET_SDK_PATCHES", switch)
    code, _, err = _preview(_program(tmp_path, _PATCHES_SEEN))
    assert code == 0, err
    modules = int(err.split("ec2 modules ", 1)[1].split()[0])
    if switch == "on":
        assert modules < 20 and "stack walk StackTrace" in err and "transfer _gpufleet_patches.lazy_outputs" in err, err
        assert "debug _gpufleet_patches.debug_logs" in err
    else:
        assert modules > 100 and "stack walk _get_stack_trace" in err and "transfer pulumi.runtime.rpc" in err, err
        assert "debug pulumi.log" in err


def test_a_patch_room_the_programs_interpreter_cannot_load_leaves_its_sdk_as_it_is_and_says_so(tmp_path, monkeypatch):
    from gpufleet.engine import program_host

    monkeypatch.setattr(program_host, "PATCHES", tmp_path / "no-room")
    code, _, err = _preview(_program(tmp_path, _PATCHES_SEEN))
    assert code == 0, err
    assert f"gpufleet: the SDK runs as it is for this program: gpufleet's patches do not load in {sys.executable} (FileNotFoundError" in err
    assert "stack walk _get_stack_trace" in err


def test_a_program_that_raises_names_its_file_and_line(tmp_path):
    folder = _program(tmp_path, THING + "raise ValueError('no such cluster')\n")
    code, _, err = _preview(folder)
    assert code == 2 and "Traceback" not in err
    assert f"the program raised ValueError: no such cluster ({(folder / '__main__.py').resolve()}:3)" in err


def test_an_interpreter_without_the_sdk_is_exit_2_naming_it(tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    folder = _program(tmp_path, THING)
    code, _, err = run_cli("preview", "--program", str(folder), "--python", str(bare / "bin" / "python"), "--no-policy")
    assert code == 2 and "Traceback" not in err
    assert f"the program's interpreter {bare / 'bin' / 'python'} has no Pulumi SDK (ModuleNotFoundError: No module named 'pulumi')" in err


@pytest.mark.parametrize(
    ("project", "flags", "message"),
    [
        (
            "name: hosted\nruntime:\n  name: python\n  options:\n    virtualenv: venv\n",
            (),
            "runtime.options.virtualenv = 'venv': no virtualenv at",
        ),
        (
            "name: hosted\nruntime:\n  name: python\n  options:\n    virtualenv: ''\n",
            (),
            "runtime.options.virtualenv = '': a folder name is required",
        ),
        ("name: hosted\nruntime: python\n", ("--python", "/no/such/python"), "--python /no/such/python: no executable interpreter there"),
    ],
    ids=["missing-virtualenv", "empty-virtualenv", "missing-python"],
)
def test_an_interpreter_that_is_not_there_is_exit_2_naming_it(tmp_path, project, flags, message):
    folder = _program(tmp_path, THING, project)
    code, _, err = run_cli("preview", "--program", str(folder), "--no-policy", *flags)
    assert code == 2 and message in err, err


def test_without_a_named_interpreter_the_program_runs_in_gpufleets_and_says_so(tmp_path):
    folder = _program(tmp_path, THING)
    code, _, err = run_cli("preview", "--program", str(folder), "--no-policy")
    assert code == 0, err
    assert f"note: the program runs with gpufleet's own interpreter (Pulumi.yaml names no virtualenv): {sys.executable}" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--timeout", "0"), "argument --timeout: '0': a number of seconds from 1 to 86400"),
        (("--timeout", "nan"), "argument --timeout: 'nan': a number of seconds from 1 to 86400"),
        (("ecs-gpu", "--python", sys.executable), "--python, --timeout and --answers are for a program of your own"),
    ],
)
def test_the_hosts_flags_are_checked(flags, message):
    code, _, err = run_cli("preview", *flags)
    assert code == 2 and message in err, err


def test_a_method_the_monitor_does_not_serve_is_refused_by_name():
    import grpc

    from gpufleet.engine.monitor import Monitor, handlers
    from gpufleet.engine.serving import Served

    monitor = Monitor("p", "s", None, "us-east-1", None)
    with Served(handlers(monitor)) as served, grpc.insecure_channel(served.address) as channel:
        with pytest.raises(grpc.RpcError) as raised:
            channel.unary_unary("/pulumirpc.ResourceMonitor/SomethingNewer")(b"", timeout=10)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert monitor.refused == [
        "the program's SDK called /pulumirpc.ResourceMonitor/SomethingNewer, which the offline engine does not serve"
    ]


def test_a_component_its_provider_builds_is_a_named_gap(tmp_path):
    folder = _program(tmp_path, 'pulumi.ComponentResource("eks:index:Cluster", "c", {"instanceType": "t3.large"}, remote=True)\n')
    code, out, err = _preview(folder, "--json")
    assert code == 0, err
    plan = json.loads(out)
    assert (
        "component 'c' (eks:index:Cluster) is built by its provider, which the offline engine does not run: the resources it creates are not in the plan"
        in plan["placement"]["gaps"]
    )
    [component] = [r for r in plan["resources"] if r["name"] == "c"]
    assert component["inputs"] == {"instanceType": "t3.large"} and component["custom"] is False


REMOTE_CLUSTER = """
import pulumi_aws  # noqa: F401 - its resource modules turn a reference into a resource

box = pulumi.ComponentResource("test:index:Box", "box")
c = pulumi.ComponentResource("eks:index:Cluster", "c", {"eksCluster": None, "kubeconfig": None}, remote=True,
                             opts=pulumi.ResourceOptions(parent=box))
pulumi.export("urn", c.eksCluster.apply(lambda cluster: cluster.urn))
pulumi.export("name", c.eksCluster.apply(lambda cluster: cluster.name))
pulumi.export("kubeconfig", c.kubeconfig)
"""


@pytest.mark.parametrize(
    ("refused", "urn"),
    [("", "urn:pulumi:dev::hosted::test:index:Box$eks:index:Cluster$aws:eks/cluster:Cluster::c-eksCluster"), ("true", UNKNOWN)],
    ids=["references", "references-refused"],
)
def test_a_remote_component_s_outputs_refer_to_the_resources_its_code_always_makes(tmp_path, monkeypatch, refused, urn):
    """As its provider's Construct answers in a preview: pulumi-eks's Cluster output eksCluster is a
    reference to its `<name>-eksCluster` child, whose URN is known (createManagedNodeGroup aliases a
    node group to it); the child's properties and the other outputs stay unknown. A program that
    refuses references gets the child's id, unknown, as the engine downgrades a reference."""
    monkeypatch.setenv("PULUMI_DISABLE_RESOURCE_REFERENCES", refused)
    code, out, err = _preview(_program(tmp_path, REMOTE_CLUSTER), "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"] == {"urn": urn, "name": UNKNOWN, "kubeconfig": UNKNOWN}


def test_the_program_s_diagnostics_reach_stderr_as_the_cli_shows_them(tmp_path):
    folder = _program(tmp_path, THING + 'pulumi.log.info("hello from info")\npulumi.log.warn("careful")\npulumi.log.debug("not shown")\n')
    code, out, err = _preview(folder, "--json")
    assert code == 0 and json.loads(out)
    assert "info: hello from info" in err and "warning: careful" in err and "not shown" not in err


# A program that forks a helper, says which group it runs in, and sleeps: what a stopped preview must end.
_SLEEPER = (
    "import os, subprocess, sys, time\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'])\n"
    "open(os.environ['GPUFLEET_TEST_MARK'], 'w').write(str(os.getpgid(0)))\n"
    "time.sleep(3600)\n"
)


def _stat(pid: str) -> tuple[str, int, int] | None:
    """A process's state, parent and group, from /proc (None: gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid, pgrp = text.rsplit(")", 1)[1].split()[:3]
    return state, int(ppid), int(pgrp)


def _groups_started_by(parent: int) -> set[int]:
    return {stat[2] for pid in os.listdir("/proc") if pid.isdigit() and (stat := _stat(pid)) and stat[1] == parent}


def _left_in(group: int) -> list[str]:
    """The processes of `group` still running (a zombie has ended: only its parent's wait is missing)."""
    return [pid for pid in os.listdir("/proc") if pid.isdigit() and (stat := _stat(pid)) and stat[2] == group and stat[0] != "Z"]


def _running_preview(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen, set[int]]:
    """`gpufleet preview --program` of the sleeper, with the policy pack, once the program runs:
    the process and the groups of what it started (the program's, the pack's, the pack's Analyze relay's)."""
    folder, mark = _program(tmp_path, _SLEEPER), tmp_path / "mark"
    env = {**os.environ, "GPUFLEET_TEST_MARK": str(mark), "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-m", "gpufleet.cli.main", "preview", "--program", str(folder), "--python", sys.executable, *flags]
    preview = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(1200):
        if mark.exists() and mark.read_text():
            break
        if preview.poll() is not None:
            pytest.fail(f"the preview ended before the program ran: {preview.communicate()}")
        time.sleep(0.25)
    groups = _groups_started_by(preview.pid)
    assert int(mark.read_text()) in groups and len(groups) == 3, groups  # the program, the pack, the relay
    return preview, groups


def _assert_ended(groups: set[int]) -> None:
    for _ in range(200):
        left = {group: _left_in(group) for group in groups}
        if not any(left.values()):
            return
        time.sleep(0.1)
    pytest.fail(f"still running after gpufleet ended: {left}")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_preview_stopped_by_a_signal_ends_the_program_the_pack_and_what_they_forked(tmp_path, signum):
    preview, groups = _running_preview(tmp_path, "--json")
    preview.send_signal(signum)
    out, err = preview.communicate(timeout=300)
    assert preview.returncode == 2 and out == "" and "Traceback" not in err, err
    assert f"gpufleet was stopped by {signum.name}; the processes it started were ended" in err
    _assert_ended(groups)


def test_a_preview_past_its_timeout_ends_the_program_the_pack_and_what_they_forked(tmp_path):
    preview, groups = _running_preview(tmp_path, "--timeout", "3")
    out, err = preview.communicate(timeout=300)
    assert preview.returncode == 2 and "did not finish within 3 s (--timeout)" in err, err
    _assert_ended(groups)


def _marked(mark: Path) -> list[str]:
    """The processes still running with `mark` in their environment (the program and what it forked)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and f"GPUFLEET_TEST_MARK={mark}".encode() in Path(f"/proc/{pid}/environ").read_bytes():
                if (stat := _stat(pid)) and stat[0] != "Z":
                    found.append(pid)
        except OSError:
            continue
    return found


def test_a_failure_while_the_program_runs_ends_it_and_what_it_forked(tmp_path, monkeypatch):
    """A program of one's own starts first (its interpreter's start is the preview's longest path),
    the monitor and the pack meanwhile: whatever fails then, the program is ended with the preview."""
    from gpufleet.engine import program_host

    folder, mark = _program(tmp_path, _SLEEPER), tmp_path / "mark"
    monkeypatch.setenv("GPUFLEET_TEST_MARK", str(mark))

    def failing_after_serving(*args):
        for _ in range(1200):
            if mark.exists() and mark.read_text():
                break
            time.sleep(0.25)
        assert len(_marked(mark)) == 2, "the program and its helper run"
        raise RuntimeError("something failed while the program ran")

    monkeypatch.setattr(program_host, "_compiling_note", failing_after_serving)
    code, _, err = run_cli("preview", "--program", str(folder), "--python", sys.executable, "--no-policy")
    assert code == 4 and "something failed while the program ran" in err
    for _ in range(100):
        if not _marked(mark):
            return
        time.sleep(0.1)
    pytest.fail(f"the program still runs after the preview ended: {_marked(mark)}")
