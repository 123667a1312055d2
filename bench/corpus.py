"""How long a public program of tests/corpus takes to preview, cold, as a user runs it, measured in
one run: `gpufleet preview --program DIR --python PY --json` in a fresh process, three times each;
the claim is the corpus's median.

    python bench/corpus.py --python PATH    # a virtualenv with tests/corpus/requirements*.txt installed (README there)

Seconds, not ratios, are printed here because the issue's target is absolute (about 3 s on these
machines); they move with the host's load, so read them against the in-process figure this prints
beside them (bench/hosting.py measures that ratio alone).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "third_party"
RUNS = 3


def cold(args: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gpufleet.cli.main", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)
    return time.perf_counter() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", type=Path, required=True, help="the corpus virtualenv's interpreter")
    python = parser.parse_args().python
    medians = {}
    for program in sorted(p for p in CORPUS.iterdir() if (p / "Pulumi.yaml").is_file()):
        runs = [cold(["preview", "--program", str(program), "--python", str(python), "--json"]) for _ in range(RUNS)]
        medians[program.name] = statistics.median(t for t, _ in runs)
        print(f"{program.name:<40} exit {runs[0][1]}  median {medians[program.name]:5.2f} s  (runs {', '.join(f'{t:.2f}' for t, _ in runs)})")
    stack = statistics.median(cold(["preview", "ecs-gpu", "--json"])[0] for _ in range(RUNS))
    print(f"corpus median cold preview {statistics.median(medians.values()):.2f} s over {len(medians)} programs; "
          f"gpufleet's own ecs-gpu stack in-process {stack:.2f} s in the same run")


if __name__ == "__main__":
    main()
