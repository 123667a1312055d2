"""Many stacks in one run against one cold preview per stack, measured in one run on this machine:
each shipped stack previewed by its own `gpufleet preview STACK` process (a cold start each), then
all of them by one `gpufleet preview --all` (worker processes, one import per worker). Prints the
seconds of each, wall and CPU (every process of the command: gpufleet, its workers, the packs),
the amortized seconds per stack and the ratios. On a shared machine the CPU ratio is the steadier.

    python bench/many_stacks.py [--no-policy]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import as_installed  # noqa: E402
from gpufleet.stack import files as stackfile  # noqa: E402

GPUFLEET = [str(Path(sys.executable).with_name("gpufleet"))]


def _cpu() -> float:
    # Waited-for descendants, theirs included (the pack a worker stopped and reaped counts).
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one `gpufleet preview`."""
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run([*GPUFLEET, "preview", *argv], capture_output=True, text=True, env=as_installed())
    if done.returncode not in (0, 1):
        raise SystemExit(f"gpufleet preview {' '.join(argv)}: exit {done.returncode}\n{done.stderr}")
    return time.perf_counter() - start, _cpu() - cpu


def main() -> None:
    flags = sys.argv[1:]
    stacks = stackfile.stack_names()
    runs = [_run([stack, *flags]) for stack in stacks]
    singles, singles_cpu = sum(w for w, _ in runs), sum(c for _, c in runs)
    together, together_cpu = _run(["--all", *flags])
    n = len(stacks)
    print(
        f"{n} stacks: one cold preview each {singles:.1f} s wall, {singles_cpu:.1f} s CPU ({singles / n:.2f} / {singles_cpu / n:.2f} s per stack)"
    )
    print(
        f"{n} stacks: preview --all        {together:.1f} s wall, {together_cpu:.1f} s CPU ({together / n:.2f} / {together_cpu / n:.2f} s per stack)"
    )
    print(f"--all / cold previews: {together / singles:.2f}x wall, {together_cpu / singles_cpu:.2f}x CPU (target <= 0.35)")


if __name__ == "__main__":
    main()
