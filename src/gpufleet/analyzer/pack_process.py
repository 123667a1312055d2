"""A policy pack's process, started as the Pulumi CLI starts it (the pack's folder as the working
directory, the project, stack and dry-run in the environment), reading its port and its stderr.

Kept apart from the gRPC client and free of heavy imports, so the CLI can start the pack before it
imports the engine: the pack's own start (pulumi_policy, the catalog, the rules: about a second)
then overlaps the CLI's imports and the program instead of following them. The process that makes
the Analyze calls (relay.py) starts with the pack and ends with it.

Within `kept_running()` (each `--all` worker), gpufleet's own pack is started once and judges stack
after stack: started for every stack, `--all` took 0.64x a cold preview's CPU per stack; started
once per worker, 0.34-0.36x (bench/many_stacks.py, 16 shipped stacks, 2 cores). Each stack still has its own session
over the protocol (GetAnalyzerInfo, Configure, ConfigureStack, Analyze, AnalyzeStack), as a
`pulumi preview --policy-pack` of its own would; ConfigureStack makes the pack forget the stack
before (src/gpufleet/engine/patches/stack_config.py). A session that did not end cleanly ends the
process, and the next stack starts a fresh one.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

from gpufleet import process_groups
from gpufleet.analyzer.pack_dir import DEFAULT_PACK, interpreter, read_pack_manifest
from gpufleet.analyzer.relay_link import RelayLink
from gpufleet.errors import NotJudged
from gpufleet.plans.placement import PLACEMENT_OUT

# Bytes of stack config still handed over in the environment as well (well under Linux's 128 KiB
# per string, MAX_ARG_STRLEN, and the whole environment's share of ARG_MAX).
ENV_CONFIG_LIMIT = 32 * 1024


class PolicyPackError(NotJudged):
    """The pack could not judge the resources (did not start, crashed, timed out): fail closed."""


class PackProcess:
    """The running pack process: its port line once printed, and its last words on stderr."""

    def __init__(self, pack_dir: Path, *, project: str, stack: str, config: dict[str, str] | None = None, kept: bool = False):
        self.pack_dir = pack_dir.resolve()
        # Kept: serves the next stack once this one's session ended cleanly (see start()).
        self.kept, self.in_use, self.clean = kept, True, False
        self.manifest = read_pack_manifest(self.pack_dir)
        env = dict(os.environ)
        env.update(PULUMI_PROJECT=project, PULUMI_STACK=stack, PULUMI_DRY_RUN="true", PYTHONUNBUFFERED="1")
        # The config travels in ConfigureStack (the pack applies it: src/gpufleet/engine/patches/stack_config.py); the
        # environment carries it too while it is small, for packs that read only the variable. A
        # large stack's would not fit an environment string (Linux: 128 KiB): the pack could not start.
        text = json.dumps(dict(config or {}))
        if len(text.encode()) <= ENV_CONFIG_LIMIT:
            env["PULUMI_CONFIG"] = text
        else:
            env.pop("PULUMI_CONFIG", None)
        # The placement is simulated once per preview: gpufleet's pack writes the one it judged
        # here, and the engine reads it back for the plan, the report and the cost (a pack that
        # writes none, such as a user's own, leaves the engine to simulate it).
        self._scratch = tempfile.mkdtemp(prefix="gpufleet-pack-")
        self.placement_file = Path(self._scratch) / "placement.json"
        env[PLACEMENT_OUT] = str(self.placement_file)
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._port_line: list[str] = []
        self._port_ready = threading.Event()
        # Its own session, as the program's: stopping it ends whatever the pack forked too.
        self.process = process_groups.start(
            [interpreter(self.pack_dir, self.manifest), "-u", str(self.pack_dir)],
            cwd=self.pack_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        threading.Thread(target=self._read_port, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()
        # The Analyze calls' own process (relay.py), up while the pack starts; it lives as the pack does.
        try:
            self.relay = RelayLink()
        except BaseException:
            process_groups.stop(self.process)
            raise

    def _read_port(self) -> None:
        stdout = cast(IO[str], self.process.stdout)  # a pipe: Popen(stdout=PIPE)
        line = stdout.readline()
        self._port_line.append(line)
        self._port_ready.set()
        for _ in stdout:  # keep the pipe drained; a pack may print
            pass

    def _drain_stderr(self) -> None:
        for line in cast(IO[str], self.process.stderr):  # a pipe: Popen(stderr=PIPE)
            self._stderr.append(line.rstrip())

    def port(self, timeout: float) -> str:
        """The port the pack listens on; PolicyPackError when it does not print one in time."""
        if not self._port_ready.wait(timeout):
            raise self.failure(f"did not print its port within {timeout:.0f} s")
        line = self._port_line[0].strip()
        if not self._port_line[0]:
            raise self.failure("ended its output before printing its gRPC port")
        if not line.isdigit():
            raise self.failure(f"printed {line!r} instead of its gRPC port")
        return line

    def failure(self, what: str) -> PolicyPackError:
        try:  # a pack that is going down gets a moment, so its exit code and last words are reported
            self.process.wait(2)
            self._stderr_reader.join(2)
        except subprocess.TimeoutExpired:
            pass
        code = self.process.poll()
        state = f"the pack process exited with code {code}" if code is not None else "the pack process is still running"
        tail = "\n".join(list(self._stderr)[-12:])
        detail = f"\n--- pack stderr (last lines) ---\n{tail}" if tail else ""
        return PolicyPackError(f"policy pack {self.pack_dir}: {what}; {state}. No policy results: nothing was judged.{detail}")

    def stop(self) -> None:
        """The stack's preview is over: a kept pack whose session ended cleanly waits for the next
        stack; any other ends (a second call changes nothing)."""
        if self.kept and not self.in_use:
            return
        if self.kept and self.clean and self.process.poll() is None:
            self.in_use = self.clean = False
            return
        self.kept = self.in_use = False
        self.relay.stop()
        process_groups.stop(self.process, grace=5)
        shutil.rmtree(self._scratch, ignore_errors=True)

    def ended_cleanly(self) -> None:
        """The client's session ended with every answer in: no call of this stack is still in the pack."""
        self.clean = True

    def one_stack_only(self) -> None:
        """The pack does not take the stack in ConfigureStack: it ends with this stack's preview."""
        self.kept = False

    def _next_stack(self) -> PackProcess:
        # Nothing of the stack before may be read as this one's: its placement, its last words.
        self.placement_file.unlink(missing_ok=True)
        self._stderr.clear()
        self.in_use = True
        return self

    def placement(self) -> dict | None:
        """The placement the pack judged the stack by, if it wrote one."""
        try:
            return json.loads(self.placement_file.read_text())
        except (OSError, ValueError):
            return None


# gpufleet's own pack by (folder, project) while kept_running(); None: a process per preview.
_KEPT: dict[tuple[Path, str], PackProcess] | None = None


def start(pack_dir: Path, *, project: str, stack: str, config: dict[str, str] | None = None) -> PackProcess:
    """The pack's process for one stack's preview. Within kept_running(), gpufleet's own pack
    already serving this process is handed over again: only its rules are known to forget each
    stack at ConfigureStack; another pack (a user's) starts afresh for every stack, as under the CLI."""
    folder = pack_dir.resolve()
    if _KEPT is None or folder != DEFAULT_PACK:
        return PackProcess(folder, project=project, stack=stack, config=config)
    found = _KEPT.pop((folder, project), None)
    if found is not None and not found.in_use and found.process.poll() is None:
        _KEPT[(folder, project)] = found
        return found._next_stack()
    if found is not None:  # gone, or (a preview that never stopped it) still held: it ends with its holder
        found.kept = False
        if not found.in_use:
            found.stop()
    found = _KEPT[(folder, project)] = PackProcess(folder, project=project, stack=stack, config=config, kept=True)
    return found


@contextlib.contextmanager
def kept_running() -> Iterator[None]:
    """Within: start() keeps gpufleet's own pack running between previews; all end on the way out."""
    global _KEPT
    outer, _KEPT = _KEPT, {}
    try:
        yield
    finally:
        kept, _KEPT = _KEPT, outer
        for pack in kept.values():
            pack.kept = False
            pack.stop()
