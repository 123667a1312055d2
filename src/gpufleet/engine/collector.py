"""The cyclic garbage collector's policy while gpufleet works: for a program's run (runtime) and for
a CLI command as a whole (cli/main.py)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_EVERY = 50_000  # allocations between collections of the youngest generation
OLD_NEVER = 1 << 30  # the full passes' threshold: not reached within a preview


def preview_thresholds() -> tuple[int, int, int]:
    """The collector's thresholds while a program runs: the youngest generation every YOUNG_EVERY
    allocations, the middle one as the interpreter has it, no full passes. A hosted program's
    interpreter is given the same (engine/program_exec.py), since it cannot import this module."""
    return YOUNG_EVERY, gc.get_threshold()[1], OLD_NEVER


@contextlib.contextmanager
def young_collections_only() -> Iterator[None]:
    """The SDK allocates many short-lived objects per resource; with the cyclic collector as it is,
    its full passes over an ever larger heap made a preview's cost grow faster than its resource
    count (bench/preview.py). Off altogether, the cycles that die young (one per unknowns check of
    an Output: rpc.contains_unknowns's recursive closure) piled up to a third of the peak memory.
    So only the young generations are collected during a preview, and the youngest every 50,000
    allocations instead of 700 (collected that often, they cost a cold preview 50 ms); the full
    passes resume after. Around the program, a command's own objects (modules, the spec, the plan,
    the report) live as long as it runs: a cold preview of bench/cdk.py's fleets spent about 15 % of
    the CLI's CPU in the default collections (full passes during the imports, gen1 passes over the
    new plan after the program), 0.3 s of 2.1 s at 20 groups."""
    was_enabled = gc.isenabled()
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.enable()
    gc.set_threshold(*preview_thresholds())
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        if not was_enabled:
            gc.disable()
