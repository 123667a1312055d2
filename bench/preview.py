"""Offline preview cost as fleets grow: 1, 10, 50 and 200 GPU services (on up to 20 capacity providers,
ECS's quota per cluster), measured in one run.

    python bench/preview.py

Prints resources, seconds and per-resource cost per size, the per-resource cost ratios (200 vs 1,
200 vs 10: growth should stay linear), the policy column (the same preview judged by the policy
pack over gRPC) with its overhead, both sides warm: the plain preview runs in this warm process, and
the pack is kept running across the judged previews (analyzer/pack_process.kept_running, as each
`--all` worker keeps it), started once before the timed runs, each preview a session of its own over
the protocol as under `pulumi preview --policy-pack`, for a stack of its own name (as `--all` hands
the pack stack after stack, so the pack forgets the one before); so the column is the pack's work on
the resources, not its start. The pack's start is in the next line: the same overhead at 200 services
between cold `gpufleet preview` processes, as a user runs it (the CLI starts the pack before its own
imports). Then the placement simulation's overhead (the judged preview with it against the same with
GPUFLEET_PLACEMENT=off, which skips it in the spec, the plan and the pack: a pack reads the switch
when it starts, so these previews start a pack each), the cold-process
time of `gpufleet preview ecs-gpu`, and the price snapshot's share of that cold preview (its modules,
the snapshot's load and the pricing of the plan, timed in a cold process of their own).

The overhead is the median, over pairs of back-to-back runs (their order alternating), of each
pair's ratio: these machines' speed drifts over seconds, which a ratio of two minimums taken minutes
apart does not cancel. Seven pairs per size, fifteen at 200 services, where the claim is made: single
pairs there range from about 0 % to 40 % on a busy host.
Ratios, not absolute seconds, are the claim: these machines are noisy.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import as_installed  # noqa: E402
from bench.fleets import ecs_fleet  # noqa: E402
from gpufleet.analyzer import pack_process  # noqa: E402
from gpufleet.analyzer.pack_dir import DEFAULT_PACK  # noqa: E402
from gpufleet.engine import PROJECT  # noqa: E402
from gpufleet.engine.preview import preview_plan  # noqa: E402
from gpufleet.stack.spec import decode_config, load_spec  # noqa: E402

# Every preview names a stack of its own, as `--all` hands its kept pack stack after stack: the pack
# forgets the stack before (src/gpufleet/engine/patches/stack_config.py), where told the same stack
# again it would answer from what it kept of the last preview's identical resources, which no
# `gpufleet preview` gets.
_PREVIEWS = itertools.count()


def preview(services: int, policy: bool = False) -> tuple[int, float]:
    """`gpufleet preview`'s work on a generated fleet (the spec check, the program, the pack if asked:
    started as the CLI starts it, or handed over again within pack_process.kept_running())."""
    config, stack = ecs_fleet(services), f"bench-{services}-{next(_PREVIEWS):05d}"
    start = time.perf_counter()
    load_spec(decode_config(config))
    started = pack_process.start(DEFAULT_PACK, project=PROJECT, stack=stack, config=config) if policy else None
    plan = preview_plan(config, stack, DEFAULT_PACK if policy else None, {}, started=started)
    assert not plan["policy"]["violations"], plan["policy"]  # the bench fleet is clean: every rule ran to the end
    return plan["summary"]["resourceCount"], time.perf_counter() - start


def simulation_overhead(providers: int, pairs: int) -> float:
    """The placement simulation's share of a judged preview: median over back-to-back pairs of (with
    the simulation in the spec, the plan and the pack) / (with GPUFLEET_PLACEMENT=off) - 1."""
    ratios = []
    for i in range(pairs):
        runs = {}
        for mode in ("on", "off") if i % 2 else ("off", "on"):
            os.environ["GPUFLEET_PLACEMENT"] = mode
            runs[mode] = preview(providers, policy=True)[1]
        ratios.append(runs["on"] / runs["off"])
    os.environ.pop("GPUFLEET_PLACEMENT", None)
    return statistics.median(ratios) - 1


def cold_cli(*argv: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpufleet.cli.main", "preview", *(argv or ("ecs-gpu",)), "--json"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env=as_installed(),
    )
    return time.perf_counter() - start


def cold_pack_overhead(services: int, pairs: int) -> float:
    """The pack's overhead as `gpufleet preview` costs it, each run a cold process: the pack's own start
    is paid in every judged run (the CLI starts it before it imports the engine, so the start overlaps
    those imports), where the rows above start it once. Median over back-to-back pairs of
    (judged) / (--no-policy) - 1."""
    with tempfile.TemporaryDirectory() as folder:
        stack = Path(folder) / f"Pulumi.bench-{services}.yaml"
        config = {key: json.loads(value) if value.startswith("{") else value for key, value in ecs_fleet(services).items()}
        stack.write_text(json.dumps({"config": config}))  # JSON is YAML
        ratios = []
        for i in range(pairs):
            runs = {}
            for judged in (True, False) if i % 2 else (False, True):
                runs[judged] = cold_cli("--config-file", str(stack), *(() if judged else ("--no-policy",)))
            ratios.append(runs[True] / runs[False])
    return statistics.median(ratios) - 1


# What the price snapshot adds to a cold process: the modules and the snapshot the cost block alone
# needs (everything else the preview imports is imported first), loaded and applied to the plan.
_COST_PART = """
import json, sys, time
import gpufleet.plans.groups, gpufleet.plans.placement, gpufleet.catalog.catalog as c
from gpufleet.plans.index import from_plan
cat = c.load()
plan = json.loads(open(sys.argv[1]).read())
resources = from_plan(plan)
start = time.perf_counter()
from gpufleet.plans import cost
cost.plan_cost(resources, plan["placement"], cat=cat)
print(time.perf_counter() - start)
"""


def cold_cost_share(pairs: int = 7) -> float:
    """The snapshot's share of a cold `gpufleet preview ecs-gpu --json`: median over back-to-back
    pairs of (a cold process's cost part) / (a cold preview)."""
    golden = ROOT / "tests" / "golden" / "ecs-gpu.plan.json"
    ratios = []
    for _ in range(pairs):
        part = float(
            subprocess.run(
                [sys.executable, "-c", _COST_PART, str(golden)], cwd=ROOT, check=True, capture_output=True, text=True, env=as_installed()
            ).stdout
        )
        ratios.append(part / cold_cli())
    return statistics.median(ratios)


def simulations_per_preview(services: int = 10) -> dict[str, int]:
    """The plan's placement simulations in one preview, judged and not, counted across the engine's
    and the pack's processes (each appends a line to GPUFLEET_PLACEMENT_RUNS)."""
    counts = {}
    for judged in (True, False):
        with tempfile.NamedTemporaryFile("r", suffix=".log") as log:
            os.environ["GPUFLEET_PLACEMENT_RUNS"] = log.name
            preview(services, policy=judged)
            counts["judged" if judged else "unjudged"] = len(log.read().splitlines())
    os.environ.pop("GPUFLEET_PLACEMENT_RUNS", None)
    return counts


def judged_rows() -> tuple[dict[int, tuple[int, float]], dict[int, float]]:
    """The table: per size, the plain preview's resources and best seconds, and the pack's overhead
    (median over back-to-back pairs, their order alternating, of judged / plain - 1)."""
    rows, judged = {}, {}
    print(f"{'services':>9} {'resources':>9} {'seconds':>8} {'ms/resource':>11} {'+policy s':>9} {'overhead':>8}")
    for n in (1, 10, 50, 200):
        pairs = []
        for i in range(15 if n == 200 else 7):
            if i % 2:
                judged_run = preview(n, policy=True)
                plain_run = preview(n)
            else:
                plain_run = preview(n)
                judged_run = preview(n, policy=True)
            pairs.append((plain_run, judged_run[1]))
        resources, seconds = min(plain for plain, _ in pairs)
        with_policy = min(judged_s for _, judged_s in pairs)
        rows[n] = (resources, seconds)
        judged[n] = statistics.median(judged_s / plain_s for (_, plain_s), judged_s in pairs) - 1
        print(f"{n:>9} {resources:>9} {seconds:>8.3f} {1000 * seconds / resources:>11.3f} {with_policy:>9.3f} {judged[n]:>8.0%}")
    return rows, judged


def main() -> None:
    with pack_process.kept_running():
        # Warm-up: imports and the catalog load are a per-process cost (measured by cold_cli), the
        # pack's start too (it is started here, once); its first previews fill its per-type memos.
        preview(1)
        for _ in range(2):
            preview(200, policy=True)
        rows, judged = judged_rows()
    per = {n: s / r for n, (r, s) in rows.items()}
    print(f"per-resource cost ratio 200 vs 1:  {per[200] / per[1]:.2f}")
    print(f"per-resource cost ratio 200 vs 10: {per[200] / per[10]:.2f}  (target <= 1.3)")
    print(f"200 services: {rows[200][1]:.2f} s for {rows[200][0]} resources")
    print(f"policy pack overhead at 200 services, pack kept running: {judged[200]:.0%} (median of paired ratios; target < 25%)")
    print(
        f"policy pack overhead at 200 services, cold `gpufleet preview` processes: {cold_pack_overhead(200, 7):.0%} (median of paired ratios)"
    )
    print(
        f"placement simulation overhead at 200 services: {simulation_overhead(200, 15):.0%} "
        "(judged preview with the simulation vs GPUFLEET_PLACEMENT=off, median of paired ratios; target < 10%)"
    )
    runs = simulations_per_preview()
    print(f"plan placement simulations per preview: {runs['judged']} judged by the pack, {runs['unjudged']} with --no-policy")
    print(f"cold process `gpufleet preview ecs-gpu --json`: {cold_cli():.2f} s (target < 2 s)")
    print(
        f"price snapshot and cost block in a cold preview of ecs-gpu: {cold_cost_share():.1%} "
        "(its modules, snapshot load and pricing in a cold process / a cold preview, median of paired ratios; target < 5%)"
    )


if __name__ == "__main__":
    main()
