"""Many stacks in one run against one cold preview per stack, measured in one run on this machine:
each shipped stack previewed by its own `gpufleet preview STACK` process (a cold start each), then
all of them by one `gpufleet preview --all` (worker processes, one import per worker). Prints the
seconds of each, the amortized seconds per stack and the ratio.

    python bench/many_stacks.py [--no-policy]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from gpufleet.stack import files as stackfile

GPUFLEET = [str(Path(sys.executable).with_name("gpufleet"))]


def _run(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([*GPUFLEET, "preview", *argv], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"gpufleet preview {' '.join(argv)}: exit {done.returncode}\n{done.stderr}")
    return time.perf_counter() - start


def main() -> None:
    flags = sys.argv[1:]
    stacks = stackfile.stack_names()
    singles = sum(_run([stack, *flags]) for stack in stacks)
    together = _run(["--all", *flags])
    n = len(stacks)
    print(f"{n} stacks: one cold preview each {singles:.1f} s ({singles / n:.2f} s per stack)")
    print(f"{n} stacks: preview --all        {together:.1f} s ({together / n:.2f} s per stack)")
    print(f"--all / cold previews: {together / singles:.2f}x")


if __name__ == "__main__":
    main()
