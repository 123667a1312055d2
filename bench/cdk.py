"""The same fleet, gpufleet against the AWS CDK (issue 56's figures), measured in one run.

The fleet (bench/fleets.py cdk_peer_fleet, and bench/cdk_peer/app.js for the CDK): one VPC, an ECS GPU
cluster and an EKS GPU cluster, with N GPU groups on each (capacity providers, node groups) and a
one-GPU service or Deployment on each group, at N=1 and N=20. gpufleet's side is
`gpufleet preview --jobs 1 --config-file FILE` of the fleet as a stack file, with the policy pack and
the placement, as a user runs it; the CDK's side is `cdk synth --quiet` of the same fleet written in
plain JavaScript (no TypeScript compile is measured), one env-agnostic stack: no account, no lookup.

    cd bench/cdk_peer && npm ci     # once: the CDK CLI and library, pinned in package-lock.json
    python bench/cdk.py

After one unmeasured run of each side (bytecode written, files in the page cache), five pairs per
N, back to back, their order alternating; each pair gives three ratios
(gpufleet / CDK): wall time, CPU (user + system of the command's whole process tree, from the
children's rusage), and peak memory (the largest sum of RSS over the process tree, sampled every
20 ms). The claim is the median of the pairs' ratios: these machines' speed drifts over seconds.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import as_installed  # noqa: E402
from bench.fleets import cdk_peer_fleet  # noqa: E402
from bench.scale import GPUFLEET, write_stack  # noqa: E402

PEER = ROOT / "bench" / "cdk_peer"
CDK = PEER / "node_modules" / ".bin" / "cdk"
SIZES = (1, 20)
PAIRS = 5
SAMPLE_SECONDS = 0.02
# The CLI's telemetry and notices reach the network; a synth measured offline leaves them out.
CDK_ENV = {**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "true"}


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, as the kernel lists each task's children."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                todo.extend(int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return pids


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def measure(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """One run of `argv`: wall seconds, CPU seconds of its process tree, its tree's peak RSS in KB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    errors = tempfile.TemporaryFile()  # a file, not a pipe: the CDK's warnings at N=20 would fill a pipe
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
    peak = 0
    while process.poll() is None:
        peak = max(peak, sum(map(_rss_kb, _tree(process.pid))))
        time.sleep(SAMPLE_SECONDS)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # gpufleet exits 0 with advisories, 1 on a mandatory finding; either is a finished preview.
    if process.returncode not in (0, 1):
        errors.seek(0)
        raise SystemExit(f"{argv[:3]} exited {process.returncode}: {errors.read().decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # Not the children's ru_maxrss: it is the largest of every child this process ever waited for.
    return {"wall": wall, "cpu": cpu, "memory": float(peak)}


def commands(groups: int, folder: Path) -> dict[str, tuple[list[str], Path, dict[str, str] | None]]:
    stack = write_stack(folder, f"cdk-{groups}", cdk_peer_fleet(groups))
    return {
        "gpufleet": ([GPUFLEET, "preview", "--jobs", "1", "--config-file", str(stack)], folder, as_installed()),
        "cdk": ([str(CDK), "synth", "--quiet", "--no-notices", "-c", f"groups={groups}", "-o", str(folder / "cdk.out")], PEER, CDK_ENV),
    }


def compare(groups: int, folder: Path) -> dict[str, list[float]]:
    """PAIRS back-to-back pairs, the order alternating; each pair's gpufleet / CDK ratios."""
    runs = commands(groups, folder)
    for side in runs.values():  # unmeasured: bytecode written, files in the page cache
        measure(*side)
    ratios: dict[str, list[float]] = {"wall": [], "cpu": [], "memory": []}
    for i in range(PAIRS):
        order = ("gpufleet", "cdk") if i % 2 else ("cdk", "gpufleet")
        pair = {side: measure(*runs[side]) for side in order}
        for key in ratios:
            ratios[key].append(pair["gpufleet"][key] / pair["cdk"][key])
        print(
            f"  N={groups} pair {i + 1}: "
            + "  ".join(f"{s} {m['wall']:.2f} s wall, {m['cpu']:.2f} s CPU, {m['memory'] / 1024:.0f} MB" for s, m in pair.items())
        )
    return ratios


def main() -> None:
    if not CDK.exists():
        raise SystemExit(f"the CDK peer is not installed: cd {PEER.relative_to(ROOT)} && npm ci")
    table = {}
    with tempfile.TemporaryDirectory() as tmp:
        for groups in SIZES:
            folder = Path(tmp) / f"n{groups}"
            folder.mkdir()
            table[groups] = compare(groups, folder)
    print("\ngpufleet / CDK, median of the pairs' ratios:")
    print(f"{'N':>4} {'wall':>8} {'CPU':>8} {'memory':>8}")
    for groups, ratios in table.items():
        print(f"{groups:>4} " + " ".join(f"{statistics.median(ratios[k]):>7.2f}x" for k in ("wall", "cpu", "memory")))


if __name__ == "__main__":
    main()
