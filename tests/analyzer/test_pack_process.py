"""The pack's process under `kept_running()` (each `--all` worker): gpufleet's own pack serves stack
after stack once a stack's session ended cleanly; a session that did not, a pack that cannot be told
the stack, or any other pack, gets a process of its own per stack; none outlives the keeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufleet.analyzer import pack_process

# A pack that starts and waits: enough for the process's keeping (the protocol is tested elsewhere).
IDLE = "import sys, time\nprint(0)\nsys.stdout.flush()\ntime.sleep(300)\n"


def _pack(folder: Path) -> Path:
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (folder / "__main__.py").write_text(IDLE)
    return folder.resolve()


@pytest.fixture
def own(tmp_path, monkeypatch) -> Path:
    """A pack folder taken for gpufleet's own."""
    folder = _pack(tmp_path / "own")
    monkeypatch.setattr(pack_process, "DEFAULT_PACK", folder)
    return folder


def _start(folder: Path, stack: str) -> pack_process.PackProcess:
    return pack_process.start(folder, project="gpufleet", stack=stack, config={})


def test_a_clean_session_hands_the_process_to_the_next_stack(own):
    with pack_process.kept_running():
        first = _start(own, "a")
        first.placement_file.write_text("{}")  # what stack a's placement left
        first.ended_cleanly()
        first.stop()
        first.stop()  # the client and the CLI both stop it: it stays kept
        assert first.process.poll() is None
        second = _start(own, "b")
        assert second is first and second.placement() is None
        second.stop()  # not ended cleanly (a failure, a stopped program): it ends
        assert first.process.poll() is not None
        third = _start(own, "c")
        assert third is not first
        third.ended_cleanly()
        third.stop()
    assert third.process.poll() is not None  # the keeping ended: so did the pack


def test_a_pack_that_cannot_be_told_the_stack_ends_with_it(own):
    with pack_process.kept_running():
        first = _start(own, "a")
        first.one_stack_only()  # ConfigureStack unimplemented
        first.ended_cleanly()
        first.stop()
        assert first.process.poll() is not None
        assert _start(own, "b") is not first


def test_another_pack_and_a_preview_outside_the_keeping_start_their_own(own, tmp_path):
    theirs = _pack(tmp_path / "theirs")
    with pack_process.kept_running():
        other = _start(theirs, "a")
        other.ended_cleanly()
        other.stop()
        assert other.process.poll() is not None
    alone = _start(own, "a")
    alone.ended_cleanly()
    alone.stop()
    assert alone.process.poll() is not None
