"""Progress on stderr: drawn only when stderr is a terminal, never on stdout."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest

from gpufleet.cli.main import main


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(argv: list[str], err: io.StringIO) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue()


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch):
    # rich honours these before isatty(): a CI runner's settings must not decide the test.
    for name in ("TERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "JUPYTER_COLUMNS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("flags", [["--json"], []])
def test_a_terminal_sees_resources_registered_and_stdout_is_unchanged(flags):
    code, plain = _run(["preview", "eks-g5-timeslice", "--no-policy", *flags], io.StringIO())
    terminal = Terminal()
    code_tty, shown = _run(["preview", "eks-g5-timeslice", "--no-policy", *flags], terminal)
    assert code == code_tty == 0
    assert shown == plain
    assert "preview eks-g5-timeslice:" in terminal.getvalue() and "resources registered" in terminal.getvalue()


def test_without_a_terminal_nothing_is_drawn():
    err = io.StringIO()
    _run(["preview", "eks-g5-timeslice", "--no-policy", "--json"], err)
    assert err.getvalue() == ""


def test_several_stacks_count_the_stacks_done():
    terminal = Terminal()
    code, shown = _run(["preview", "ecs-gpu", "ecs-mps", "--no-policy", "--json", "--jobs", "1"], terminal)
    _, plain = _run(["preview", "ecs-gpu", "ecs-mps", "--no-policy", "--json", "--jobs", "1"], io.StringIO())
    assert code == 0 and shown == plain
    assert "2/2" in terminal.getvalue()
