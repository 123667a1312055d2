"""src/gpufleet/policies/serve.py: the pack's process. Its shell (policies/__main__.py) turns the
collector off while the pack imports; serve() must turn it back on, or a pack judging a plan of
thousands of resources would never collect."""

from __future__ import annotations

import gc

from gpufleet.policies import serve as serve_module


def test_serve_turns_the_collector_back_on(monkeypatch):
    served = []
    monkeypatch.setattr(serve_module, "PolicyPack", lambda **kwargs: served.append(kwargs))
    thresholds = gc.get_threshold()
    gc.disable()
    try:
        serve_module.serve()
        assert gc.isenabled() and served and served[0]["name"] == "gpufleet-guard"
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        gc.enable()


def test_the_shell_turns_the_collector_off_before_the_pack_imports():
    from gpufleet.analyzer.pack_dir import DEFAULT_PACK

    lines = (DEFAULT_PACK / "__main__.py").read_text().splitlines()
    assert lines.index("gc.disable()") < next(i for i, line in enumerate(lines) if line.startswith("from gpufleet"))
