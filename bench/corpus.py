"""How long a public program takes to preview, cold, as a user runs it, measured in one run for both
corpora: `gpufleet preview --program DIR --json` in a fresh process, three times each; the claim is
each corpus's median, and the TypeScript corpus's median over the Python corpus's (TypeScript's
compile and type check included, as the CLI runs them).

    python bench/corpus.py [--runs N]    # after scripts/prepare-tests (the corpus virtualenv, the TypeScript install)

Seconds move with the host's load; the ratio, measured in the same run, is the claim. The
TypeScript programs run from a folder beneath the shared install, as tests/corpus_ts does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PYTHON_CORPUS = ROOT / "tests" / "corpus" / "third_party"
TS_CORPUS = ROOT / "tests" / "corpus_ts" / "third_party"
PREPARED = ROOT / ".test-env"


def cold(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gpufleet.cli.main", *args], capture_output=True, text=True, cwd=ROOT, timeout=900, env={**os.environ, **env}
    )
    return time.perf_counter() - start, done.returncode


def _reviewed(corpus: Path) -> dict:
    return yaml.safe_load((corpus.parent / "expected.yaml").read_text())


def programs(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.iterdir() if (p / "Pulumi.yaml").is_file())


def median_of(label: str, runs: int, folders: list[Path], extra: list[str], reviewed: dict) -> float:
    medians = []
    for program in folders:
        # What a program reads from its environment, as its corpus test sets it (expected.yaml `env`).
        env = {k: str(v) for k, v in (reviewed.get(program.name, {}).get("env") or {}).items()}
        timed = [cold(["preview", "--program", str(program), *extra, "--json", "--timeout", "900"], env) for _ in range(runs)]
        medians.append(statistics.median(t for t, _ in timed))
        print(
            f"{label} {program.name:<36} exit {timed[0][1]}  median {medians[-1]:5.2f} s  (runs {', '.join(f'{t:.2f}' for t, _ in timed)})"
        )
    return statistics.median(medians)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    python = PREPARED / "corpus" / "venv" / "bin" / "python"
    install = PREPARED / "ts-corpus" / "node_modules"
    if not python.is_file() or not install.is_dir():
        sys.exit("bench/corpus.py: run scripts/prepare-tests first (the corpus virtualenv and the TypeScript install)")
    py = median_of("python", runs, programs(PYTHON_CORPUS), ["--python", str(python)], _reviewed(PYTHON_CORPUS))
    with tempfile.TemporaryDirectory(prefix="gpufleet-ts-corpus-") as top:
        (Path(top) / "node_modules").symlink_to(install)
        copies = [Path(shutil.copytree(p, Path(top) / p.name)) for p in programs(TS_CORPUS)]
        ts = median_of("typescript", runs, copies, [], _reviewed(TS_CORPUS))
    print(f"python corpus median cold preview {py:.2f} s over {len(programs(PYTHON_CORPUS))} programs")
    print(f"typescript corpus median cold preview {ts:.2f} s over {len(programs(TS_CORPUS))} programs")
    print(f"typescript / python: {ts / py:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
