"""What each engine path costs on the same program, measured in one run: gpufleet's in-process
engine (the SDK's mocks, with its patches) against the hosted path a program of one's own takes (its
own interpreter and SDK, with the patches its gate lets through there, against the monitor gpufleet serves over gRPC).

    python bench/hosting.py [STACK ...]

Each preview runs in a fresh process (cold, as a user runs it), without the pack; for each program
the two paths alternate over pairs of back-to-back runs, and the claim is the median of the pairs'
ratios (hosted / in-process): these machines' speed drifts over seconds. The programs are the
shipped stacks named (default: ecs-gpu and eks-p5-efa, gpufleet's own program under its stack file)
and the example programs in examples/. Ratios, not absolute seconds, are the claim.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import as_installed  # noqa: E402

PAIRS = 5

# One cold preview in a fresh interpreter: argv = path ("stack" NAME | "program" DIR).
# It ends as the `gpufleet` command does (cli/main.py: main under young_collections_only, then the
# process ends without the interpreter's teardown), so each path costs what a user waits for.
_ONE = """
import os
import sys
from pathlib import Path
from gpufleet.engine.collector import young_collections_only
with young_collections_only():
    from gpufleet.stack import files as stackfile
    from gpufleet.engine import user_program
    from gpufleet.engine.preview import preview_plan
    from gpufleet.engine.program_host import Hosting
    from gpufleet.engine.recorded import PROGRAM, Program
    from gpufleet.engine import PROJECT
    path, kind, what = sys.argv[1:4]
    if kind == "stack":
        config, stack, program = stackfile.load(stackfile.stack_path(what, stackfile.STACKS), what).pulumi_config(), what, Program(PROGRAM, PROJECT)
    else:
        loaded = user_program.load(Path(what), None, Path(sys.executable))
        config, stack, program = loaded.config, loaded.stack, loaded.program
    hosted = Hosting(Path(sys.executable)) if path == "hosted" else None
    plan = preview_plan(config, stack, None, {}, program if path == "hosted" or kind == "program" else None, hosted=hosted)
print(plan["summary"]["resourceCount"], flush=True)
os._exit(0)
"""


def cold(path: str, kind: str, what: str) -> tuple[int, float]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _ONE, path, kind, what], capture_output=True, text=True, cwd=ROOT, env=as_installed(), timeout=600
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{path} {kind} {what}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return int(done.stdout.split()[-1]), seconds


def measure(kind: str, what: str) -> None:
    ratios: list[float] = []
    times: dict[str, list[float]] = {"in-process": [], "hosted": []}
    resources = 0
    for i in range(PAIRS):
        order = ("in-process", "hosted") if i % 2 == 0 else ("hosted", "in-process")
        pair = {}
        for path in order:
            resources, pair[path] = cold(path, kind, what)
            times[path].append(pair[path])
        ratios.append(pair["hosted"] / pair["in-process"])
    print(
        f"{kind} {what:<40} {resources:>5} resources  in-process {statistics.median(times['in-process']):6.2f} s  "
        f"hosted {statistics.median(times['hosted']):6.2f} s  hosted/in-process {statistics.median(ratios):5.2f}x "
        f"(pairs {min(ratios):.2f}-{max(ratios):.2f})"
    )


def main(argv: list[str]) -> None:
    print(f"median of {PAIRS} alternating pairs of cold previews, no pack")
    for stack in argv or ["ecs-gpu", "eks-p5-efa"]:
        measure("stack", stack)
    for example in sorted(p for p in (ROOT / "examples").iterdir() if (p / "Pulumi.yaml").exists()):
        measure("program", str(example))


if __name__ == "__main__":
    main(sys.argv[1:])
