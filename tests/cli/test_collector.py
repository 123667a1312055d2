"""The CLI's commands run with the young generations collected only (engine/collector.py) and give
the collector back as it was."""

from __future__ import annotations

import gc

from gpufleet.cli import main as cli
from tests.conftest import run_cli


def test_a_command_runs_without_full_passes_and_gives_the_collector_back(monkeypatch, tmp_path):
    seen = []
    real = cli._load_stack

    def spy(args):
        seen.append(gc.get_threshold())
        return real(args)

    monkeypatch.setattr(cli, "_load_stack", spy)
    before = gc.get_threshold()
    code, _, err = run_cli("preview", "--config-file", str(tmp_path / "Pulumi.absent.yaml"))
    assert code == 2 and "Pulumi.absent.yaml" in err
    [(young, _, full)] = seen
    assert (young, full) == (50_000, 1 << 30)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
