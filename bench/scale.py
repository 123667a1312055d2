"""Scale, measured in one run on this machine (issue 20's figures; ratios are the claim, since
these machines are noisy):

- the largest stacks AWS allows (bench/fleets.py): ECS 20 capacity providers and 2,000 services,
  EKS 30 EFA node groups and 300 workloads, previewed with the pack as `gpufleet preview` does,
  each in three fresh processes (the median time, the smallest peak): resources, seconds per
  stage (YAML load, spec, program with the pack analysing as resources register, plan, the pack's
  stack verdict, report), peak memory;
- linear cost: seconds per resource at full size over the same at a tenth of it (target <= 1.2);
- memory: peak RSS per resource added between a tenth and the full size (target <= 40 KB), and the
  same for bare resources under the same mocks (what the SDK itself holds per resource);
- the SDK floor: as many bare resources registered under the same mocks; the whole preview with
  the pack over it (target <= 1.5x);
- `gpufleet check` of a `pulumi preview --json` of over 50,000 resources: the verdict, seconds, peak
  memory;
- cold start: `gpufleet preview STACK` of every shipped stack, median of five runs (target < 1.5 s);
- many stacks: 100 generated stacks of 20 capacity providers each in one `gpufleet preview` against
  a single cold preview of one of them (target: amortized <= 0.5x).

    python bench/scale.py [--quick]

--quick skips the 50,000-resource check and the 100 stacks.
"""

from __future__ import annotations

import io
import json
import os
import re
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
from bench.fleets import ECS_LARGEST, EKS_LARGEST, ecs_fleet, eks_fleet  # noqa: E402

GPUFLEET = str(Path(sys.executable).with_name("gpufleet"))
FLOOR_PROGRAM = """import json
import pulumi
config = pulumi.Config()
replay = config.get("replay")
if replay:  # the plan's custom resources, with their types and inputs, registered flat
    for i, (token, name, inputs) in enumerate(json.load(open(replay))):
        pulumi.CustomResource(token, f"{i}-{name}", inputs)
else:
    for i in range(int(config.require("count"))):
        pulumi.CustomResource("gpufleet:bench:Bare", f"r{i}", {})
"""
FLEETS = {
    "ecs": lambda scale: ecs_fleet(ECS_LARGEST["services"] // scale, ECS_LARGEST["providers"]),
    "eks": lambda scale: eks_fleet(EKS_LARGEST["node_groups"] // scale, EKS_LARGEST["workloads"] // scale),
}
STAGES = ("yaml", "spec", "program", "plan", "pack", "report")


def write_stack(folder: Path, stack: str, config: dict[str, str]) -> Path:
    """The config as a stack file, structured values as YAML (what a person writes)."""
    from ruamel.yaml import YAML

    doc = {"config": {k: (json.loads(v) if k != "gpufleet:region" else v) for k, v in config.items()}}
    path = folder / f"Pulumi.{stack}.yaml"
    with path.open("w") as fh:
        YAML(typ="safe").dump(doc, fh)
    return path


# -- in a fresh process ----------------------------------------------------------------------------

def child_preview(kind: str, scale: int, plan_out: str | None) -> dict:
    """`gpufleet preview`'s work on a generated stack file, stage by stage, with the pack (or
    without, writing the plan to `plan_out`)."""
    from rich.console import Console

    from gpufleet.stack import files as stackfile
    from gpufleet.analyzer.pack_dir import DEFAULT_PACK
    from gpufleet.cli.report import render_preview
    from gpufleet.engine.preview import preview_plan
    from gpufleet.stack.spec import decode_config, load_spec

    stages: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = write_stack(Path(folder), f"{kind}-{scale}", FLEETS[kind](scale))
        start = time.perf_counter()
        config = stackfile.load(path).pulumi_config()
        stages["yaml"] = time.perf_counter() - start
    start = time.perf_counter()
    load_spec(decode_config(config))
    stages["spec"] = time.perf_counter() - start
    plan = preview_plan(config, f"{kind}-{scale}", None if plan_out else DEFAULT_PACK, {}, stages=stages)
    start = time.perf_counter()
    render_preview(plan, Console(file=io.StringIO(), width=120))
    stages["report"] = time.perf_counter() - start
    if plan_out:
        Path(plan_out).write_text(json.dumps(plan))
    violations = plan.get("policy", {}).get("violations", [])
    return {
        "resources": plan["summary"]["resourceCount"],
        "stages": stages,
        "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "findings": sorted({(v["policy"], v["level"]) for v in violations}),
    }


def child_floor(count: int, replay: str | None) -> dict:
    """`count` bare resources registered under the same mocks: the SDK's own cost; or, with
    `replay` (a plan's file), its custom resources with their types and inputs, without gpufleet."""
    from gpufleet.engine.runtime import Program, run_program

    config = {"floor:count": str(count)}
    if replay:
        plan = json.loads(Path(replay).read_text())
        resources = [(r["type"], r["name"], r["inputs"]) for r in plan["resources"] if r.get("custom", True)]
        config["floor:replay"] = str(Path(replay).with_suffix(".replay.json"))
        Path(config["floor:replay"]).write_text(json.dumps(resources))
    with tempfile.TemporaryDirectory() as folder:
        main = Path(folder) / "__main__.py"
        main.write_text(FLOOR_PROGRAM)
        start = time.perf_counter()
        run = run_program(config, "floor", program=Program(main, "floor", Path(folder)))
        seconds = time.perf_counter() - start
    return {"resources": len(run.resources), "seconds": seconds, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def _in_child(*argv: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *argv], capture_output=True, text=True, check=True, env=as_installed())
    return json.loads(done.stdout.strip().splitlines()[-1])


# Fresh processes per measured size: the run of median time is reported, with the smallest peak of
# the three (a process's peak RSS moves by several MB from run to run with the collector's timing,
# which on EKS's 675 added resources alone was 9 KB a resource).
RUNS = 3


def _steadiest(*argv: str) -> dict:
    runs = [_in_child(*argv) for _ in range(RUNS)]
    runs.sort(key=lambda r: r["seconds"] if "seconds" in r else sum(r["stages"].values()))
    return {**runs[len(runs) // 2], "peak_kb": min(r["peak_kb"] for r in runs)}


def _timed(argv: list[str]) -> tuple[float, int, int]:
    """Seconds, exit code and the peak RSS (KB) of the largest process of a command (the pack's too).
    A command that fails (exit 2 or more) has its last stderr lines printed."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=as_installed())
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = code = os.waitstatus_to_exitcode(status)
        if code >= 2:
            err.seek(0)
            print(f"  ({' '.join(argv[1:3])}… exit {code}: {err.read().decode(errors='replace').strip()[-600:]})")
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, code, max(usage.ru_maxrss, children)


# -- the report --------------------------------------------------------------------------------------

def largest_stacks() -> None:
    print(f"largest stacks, previewed with the pack in a fresh process (full size and a tenth of it; of {RUNS} runs each, the median time and the smallest peak)")
    print(f"{'stack':<10} {'resources':>9} " + " ".join(f"{s:>8}" for s in STAGES) + f" {'total s':>8} {'ms/res':>7} {'peak MB':>8}  findings")
    for kind in ("ecs", "eks"):
        runs = {scale: _steadiest("preview", kind, str(scale)) for scale in (10, 1)}
        for scale, run in runs.items():
            total = sum(run["stages"].values())
            run["total"] = total
            label = f"{kind} 1/{scale}" if scale > 1 else f"{kind} full"
            print(
                f"{label:<10} {run['resources']:>9} " + " ".join(f"{run['stages'].get(s, 0):>8.2f}" for s in STAGES)
                + f" {total:>8.2f} {1000 * total / run['resources']:>7.2f} {run['peak_kb'] / 1024:>8.0f}  {run['findings'] or 'none'}"
            )
        full, tenth = runs[1], runs[10]
        per = (full["total"] / full["resources"]) / (tenth["total"] / tenth["resources"])
        kb = (full["peak_kb"] - tenth["peak_kb"]) / (full["resources"] - tenth["resources"])
        floor = _steadiest("floor", str(full["resources"]))
        floor_tenth = _steadiest("floor", str(tenth["resources"]))
        floor_kb = (floor["peak_kb"] - floor_tenth["peak_kb"]) / (floor["resources"] - floor_tenth["resources"])
        with tempfile.TemporaryDirectory() as folder:
            plan = str(Path(folder) / "plan.json")
            _in_child("preview", kind, "1", plan)
            typed = _steadiest("floor", "0", plan)
        print(f"  {kind}: per-resource cost full / a tenth: {per:.2f}x (target <= 1.2)")
        print(f"  {kind}: peak memory per added resource: {kb:.0f} KB (target <= 40); the SDK's own per added bare resource: {floor_kb:.0f} KB")
        for label, f in ((f"{floor['resources']} bare resources", floor), (f"the plan's {typed['resources']} custom resources, types and inputs, flat", typed)):
            print(
                f"  {kind}: SDK floor ({label}, same mocks): {f['seconds']:.2f} s, peak {f['peak_kb'] / 1024:.0f} MB;"
                f" whole preview with the pack / floor: {full['total'] / f['seconds']:.1f}x (target <= 1.5)"
            )


def fifty_thousand(folder: Path) -> None:
    """`gpufleet check` of a `pulumi preview --json` of 13 copies of the largest ECS stack, each
    renamed through (cluster, providers, URNs): 53,170 resources, and the verdict of one copy."""
    plan_path = folder / "ecs.json"
    _in_child("preview", "ecs", "1", str(plan_path))
    plan = json.loads(plan_path.read_text())
    text = json.dumps(plan["resources"])
    steps = []
    for k in range(13):
        copy = json.loads(re.sub(r"\bbench\b", f"bench{k}", text) if k else text)
        for r in copy:
            state = {key: r[key] for key in ("urn", "type", "custom", "inputs", "dependencies", "propertyDependencies") if key in r}
            state["parent"] = r.get("parent") or ""
            if r.get("provider"):
                state["provider"] = r["provider"] + "::04da6b54-80e4-46f7-96ec-b56ff0331ba9"
            steps.append({"op": "create", "urn": r["urn"], "newState": state})
    preview = folder / "preview-50k.json"
    preview.write_text(json.dumps({"steps": steps}))
    seconds, code, peak = _timed([GPUFLEET, "check", str(preview), "--json"])
    print(f"check of a pulumi preview --json of {len(steps)} resources: exit {code} (0: no violation, as one copy), {seconds:.1f} s, peak {peak / 1024:.0f} MB")


def cold_starts() -> None:
    from gpufleet.stack import files as stackfile

    print("cold `gpufleet preview STACK`, median of five runs (target < 1.5 s):")
    medians = {}
    for stack in stackfile.stack_names():
        medians[stack] = statistics.median(_timed([GPUFLEET, "preview", stack])[0] for _ in range(5))
    print("  " + ", ".join(f"{stack} {s:.2f} s" for stack, s in medians.items()))
    print(f"  slowest {max(medians.values()):.2f} s, median {statistics.median(medians.values()):.2f} s")


def many_stacks(folder: Path) -> None:
    stacks = folder / "stacks"
    stacks.mkdir()
    for i in range(100):
        write_stack(stacks, f"team-{i:03}", ecs_fleet(20, 20))
    single = statistics.median(_timed([GPUFLEET, "preview", "team-000", "--stacks-dir", str(stacks)])[0] for _ in range(3))
    together, code, _ = _timed([GPUFLEET, "preview", "--all", "--stacks-dir", str(stacks)])
    print(
        f"100 generated stacks (20 capacity providers each): one cold preview {single:.2f} s; --all {together:.1f} s (exit {code}),"
        f" {together / 100:.2f} s per stack: {together / 100 / single:.2f}x a cold preview (target <= 0.5)"
    )


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        what, *rest = sys.argv[2:]
        extra = rest[2] if what == "preview" and len(rest) > 2 else rest[1] if what == "floor" and len(rest) > 1 else None
        result = child_preview(rest[0], int(rest[1]), extra) if what == "preview" else child_floor(int(rest[0]), extra)
        print(json.dumps(result))
        return
    quick = "--quick" in sys.argv
    largest_stacks()
    with tempfile.TemporaryDirectory() as folder:
        if not quick:
            fifty_thousand(Path(folder))
        cold_starts()
        if not quick:
            many_stacks(Path(folder))


if __name__ == "__main__":
    main()
