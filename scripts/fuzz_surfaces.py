"""A seeded fuzz of the surfaces issue 58 names: recorded fleets (`verify --from`: Kubernetes objects,
DRA ResourceSlices and ResourceClaims, ECS output, NCCL logs), quantities (in a plan `check` judges, and in recorded allocatable) and
price files (the price generator's recorded sources). Each run writes one mutated case and runs the real CLI
on it in its own process, with a time limit and an address-space limit; a run passes when it ends
in an exit of the contract (0, 1, 2; verify's 5) with no traceback and at most one error line.

    python scripts/fuzz_surfaces.py                       # every surface, seed 58, 25 runs each
    python scripts/fuzz_surfaces.py --seed 7 --runs 100 --surface nccl

Every failing run is kept under --keep (default /tmp/gpufleet-fuzz/<seed>) with the command that
reproduces it; the summary prints the seeds. Not part of the test suite: it takes minutes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.verify import dra_fleets, fleets  # noqa: E402  (the recorded material the verify tests build from)

GOLDEN = ROOT / "tests" / "golden"
ALLOWED = {"verify": {0, 1, 2, 5}, "check": {0, 1, 2}, sys.executable: {0, 2}}
MEMORY = 3 * 1024**3  # the address space a run may take: past it, a MemoryError is a finding
TIMEOUT = 120  # seconds: past it, a hang

# Quantities as a fuzzer writes them: Kubernetes' grammar, its edges, and what broke before.
QUANTITIES = (
    "1",
    "0",
    "-1",
    "100m",
    "1.5",
    "1Ki",
    "1Mi",
    "1Gi",
    "1Ti",
    "1Pi",
    "1Ei",
    "1k",
    "1M",
    "1G",
    "1E",
    "1e3",
    "1E3",
    "1e400",
    "9" * 400,
    "1e999999999",
    "1e-999999999",
    "1.2.3",
    "",
    " 1",
    "1 Gi",
    "1gi",
    "NaN",
    "Infinity",
    "-0",
    "0.000000001",
    "1n",
    "1u",
    "9223372036854775807",
    "9223372036854775808",
    "1e18Ei",
    "+1",
    "٣",
    "1_000",
    "0x10",
)


def _paths(value, here=()):
    yield here
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*here, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*here, i))


_DEEP = "__fuzz_nested__"


def _dump(document) -> str:
    """The document's JSON, each deep-nesting marker written as the nested arrays it stands for."""
    return re.sub(f'"{_DEEP}([0-9]+)"', lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), json.dumps(document))


def _junk(rng: random.Random):
    """A value of some other type or size than the one it replaces."""
    depth = rng.choice((3, 200, 5000, 100_000))
    kinds = [
        lambda: rng.randint(-(2**70), 2**70),
        lambda: 10 ** rng.choice((20, 400)),
        lambda: rng.choice((0.5, 1e308, -1e-308)),
        lambda: rng.choice((True, False, None)),
        lambda: rng.choice(QUANTITIES),
        lambda: "x" * rng.choice((1, 70_000, 1_000_000)),
        lambda: [rng.choice(QUANTITIES)],
        lambda: {"k": rng.choice(QUANTITIES)},
        lambda: [[]] * rng.choice((1, 1000)),
        lambda: f"{_DEEP}{depth}",  # written as that many nested arrays (Python cannot build them)
        lambda: "arn:aws:ecs:us-west-2:123456789012:container-instance/x",
    ]
    return rng.choice(kinds)()


def _mutate(document, rng: random.Random) -> str:
    """Replace (or delete) the value at a random path of `document`; says what it did."""
    paths = [p for p in _paths(document) if p]
    path = rng.choice(paths)
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if isinstance(parent, dict) and rng.random() < 0.15:
        del parent[path[-1]]
        return f"deleted {list(path)}"
    parent[path[-1]] = new = _junk(rng)
    shown = repr(new)
    return f"{list(path)} = {shown[:60] + '...' if len(shown) > 60 else shown}"


def _verify_kube(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    items = fleets.p5_cluster(fleets.p5_fleet_nodes())
    document = {"apiVersion": "v1", "kind": "List", "items": items}
    what = "; ".join(_mutate(document, rng) for _ in range(rng.randint(1, 3)))
    (folder / "cluster.json").write_text(_dump(document))
    return ["verify", str(GOLDEN / "eks-p5-efa.plan.json"), "--from", str(folder)], what


def _verify_dra(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    """The DRA recording (real ResourceSlices, built nodes, pod and claim), mutated, against its
    plan; the plan is written once where a kept case's command still finds it."""
    plan = Path(tempfile.gettempdir()) / "gpufleet-fuzz" / "dra.plan.json"
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps(dra_fleets.plan()))
    listed = dra_fleets.slices()
    built = {"apiVersion": "v1", "kind": "List", "items": [*dra_fleets.nodes(), dra_fleets.pod(), dra_fleets.claim()]}
    target, name = rng.choice(((listed, "resourceslices"), (built, "cluster")))
    what = "; ".join(_mutate(target, rng) for _ in range(rng.randint(1, 3)))
    (folder / "resourceslices.json").write_text(_dump(listed))
    (folder / "cluster.json").write_text(_dump(built))
    return ["verify", str(plan), "--from", str(folder)], f"{name}.json: {what}"


def _verify_ecs(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    instances = [fleets.container_instance(i, "ml-gpu-inference", "g5.12xlarge", 4) for i in range(1, 3)]
    tasks = [fleets.service_task(i, "llm-serve", "ml-gpu-inference") for i in range(1, 3)]
    documents = {"container-instances": {"containerInstances": instances, "failures": []}, "tasks": {"tasks": tasks, "failures": []}}
    name = rng.choice(sorted(documents))
    what = f"{name}: " + _mutate(documents[name], rng)
    for file, document in documents.items():
        (folder / f"{file}.json").write_text(_dump(document))
    return ["verify", str(GOLDEN / "ecs-gpu.plan.json"), "--from", str(folder)], what


def _nccl(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    lines = fleets.p5_run_log().splitlines()
    i = rng.randrange(len(lines))
    edits: list[tuple[str, Callable[[str], str]]] = [
        ("spaces", lambda line: line + " " * rng.choice((100, 20_000, 200_000))),
        ("digits", lambda line: line + "9" * rng.choice((400, 5000))),
        (
            "number",
            lambda line: line.replace(
                next((w for w in line.split() if w[:1].isdigit()), "0"), rng.choice(("nan", "inf", "-inf", "1.2.3", "1e999", "")), 1
            ),
        ),
        ("bandwidth", lambda line: f"# Avg bus bandwidth    : {rng.choice(('nan', 'inf', '1.2.3', '1e400', '', '-5'))}"),
        ("network", lambda line: "NCCL INFO Using network" + " " * rng.choice((10, 50_000)) + rng.choice(("AWS Libfabric", "Socket", ""))),
        ("truncate", lambda line: line[: rng.randrange(len(line) + 1)]),
        ("binary", lambda line: "".join(chr(rng.randrange(0, 0x2FF)) for _ in range(200))),
    ]
    kind, edit = rng.choice(edits)
    lines[i] = edit(lines[i])
    fleets.write_case(folder, fleets.p5_cluster(fleets.p5_fleet_nodes()), "\n".join(lines))
    return ["verify", str(GOLDEN / "eks-p5-efa.plan.json"), "--from", str(folder)], f"line {i}: {kind}"


def _quantity_in_plan(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    plan = json.loads((GOLDEN / "eks-karpenter-gpu.plan.json").read_text())
    pools = [r for r in plan["resources"] if r["type"] == "kubernetes:karpenter.sh/v1:NodePool"]
    pods = [r for r in plan["resources"] if r["type"] == "kubernetes:apps/v1:Deployment"]
    value = rng.choice(QUANTITIES)
    if pools and (rng.random() < 0.5 or not pods):
        pool = rng.choice(pools)
        resource_name = rng.choice(("cpu", "memory", "nvidia.com/gpu"))
        pool["inputs"].setdefault("spec", {}).setdefault("limits", {})[resource_name] = value
        what = f"NodePool {pool['name']} spec.limits.{resource_name} = {value[:40]!r}"
    else:
        pod = rng.choice(pods)
        container = pod["inputs"]["spec"]["template"]["spec"]["containers"][0]
        resource_name = rng.choice(("cpu", "memory", "nvidia.com/gpu"))
        container.setdefault("resources", {}).setdefault("requests", {})[resource_name] = value
        what = f"Deployment {pod['name']} requests.{resource_name} = {value[:40]!r}"
    (folder / "plan.json").write_text(json.dumps(plan))
    return ["check", str(folder / "plan.json")], what


def _quantity_recorded(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    nodes = fleets.p5_fleet_nodes()
    node = rng.choice(nodes)
    resource_name = rng.choice(sorted(node["status"]["allocatable"]))
    node["status"]["allocatable"][resource_name] = value = rng.choice(QUANTITIES)
    fleets.write_case(folder, fleets.p5_cluster(nodes))
    return ["verify", str(GOLDEN / "eks-p5-efa.plan.json"), "--from", str(folder)], f"allocatable {resource_name} = {value[:40]!r}"


def _text_edit(text: str, rng: random.Random) -> tuple[str, str]:
    """One line of a text source file broken: cut, doubled past the csv cell bound, a date or number
    in another form, binary, or the line repeated deep."""
    lines = text.splitlines()
    i = rng.randrange(len(lines))
    edits: list[tuple[str, Callable[[str], str]]] = [
        ("cut", lambda line: line[: rng.randrange(len(line) + 1)]),
        ("wide", lambda line: line + "x" * 140_000),
        ("date", lambda line: re.sub(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", rng.choice(("20261101", "2026-13-01", "2026-02-30", "")), line)),
        ("number", lambda line: re.sub(r"[0-9]+\.[0-9]+", rng.choice(("nan", "inf", "-1", "1e400", "9" * 400, "")), line, count=1)),
        ("binary", lambda line: line + "".join(chr(rng.randrange(0x80, 0x2FF)) for _ in range(50))),
        ("quote", lambda line: line.replace(",", '","', 1)),
    ]
    kind, edit = rng.choice(edits)
    lines[i] = edit(lines[i])
    return "\n".join(lines) + "\n", f"line {i + 1}: {kind}"


def _price_files(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    source = ROOT / "tests" / "fixtures" / "prices"
    shutil.copytree(source, folder, dirs_exist_ok=True)
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix in (".csv", ".json", ".go", ".gz")]
    target = rng.choice(sorted(files))
    if target.suffix == ".json":
        document = json.loads(target.read_text())
        what = _mutate(document, rng)
        target.write_text(_dump(document))
    elif target.suffix == ".gz":
        text, what = _text_edit(gzip.decompress(target.read_bytes()).decode(), rng)
        target.write_bytes(gzip.compress(text.encode("utf-8", "surrogatepass")))
    else:
        text, what = _text_edit(target.read_text(), rng)
        target.write_bytes(text.encode("latin-1", "replace") if "binary" in what else text.encode())
    out = folder.parent / "prices.json"
    return [
        sys.executable,
        "-m",
        "gpufleet.catalog.generate.prices",
        "--from",
        str(folder),
        "--out",
        str(out),
    ], f"{target.relative_to(folder)}: {what}"


SURFACES: dict[str, Callable[[random.Random, Path], tuple[list[str], str]]] = {
    "verify-kube": _verify_kube,
    "verify-dra": _verify_dra,
    "verify-ecs": _verify_ecs,
    "nccl": _nccl,
    "quantity-plan": _quantity_in_plan,
    "quantity-recorded": _quantity_recorded,
    "price-files": _price_files,
}


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _run(argv: list[str]) -> tuple[int | None, str]:
    command = argv if argv[0] == sys.executable else [str(Path(sys.executable).parent / "gpufleet"), *argv]
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=_limits, cwd=ROOT)
    try:
        _, err = run.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        # SIGTERM first: gpufleet then ends the process groups it started (the pack, a program),
        # which a SIGKILL of gpufleet alone would leave running; SIGKILL only if it does not go.
        run.terminate()
        try:
            run.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
            run.communicate()
        return None, f"no answer in {TIMEOUT} s"
    return run.returncode, err


def _verdict(command: str, code: int | None, err: str) -> str | None:
    if code is None:
        return err
    if code not in ALLOWED[command]:
        return f"exit {code}"
    if "Traceback" in err:
        return "a traceback"
    if code == 2 and sum(1 for line in err.splitlines() if line.startswith("error:")) != 1:
        return "exit 2 without exactly one error line"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=58)
    parser.add_argument("--runs", type=int, default=25, help="runs per surface")
    parser.add_argument("--surface", action="append", choices=sorted(SURFACES), help="default: every surface")
    parser.add_argument("--keep", type=Path, help="where failing cases are kept (default /tmp/gpufleet-fuzz/SEED)")
    args = parser.parse_args(argv)
    keep = args.keep or Path(tempfile.gettempdir()) / "gpufleet-fuzz" / str(args.seed)
    failed = 0
    for name in args.surface or sorted(SURFACES):
        rng = random.Random(f"{args.seed}:{name}")
        bad = 0
        for i in range(args.runs):
            with tempfile.TemporaryDirectory() as scratch:
                folder = Path(scratch) / "case"
                folder.mkdir()
                command, what = SURFACES[name](rng, folder)
                code, err = _run(command)
                problem = _verdict(command[0], code, err)
                if problem:
                    bad += 1
                    kept = keep / f"{name}-{i}"
                    shutil.rmtree(kept, ignore_errors=True)
                    shutil.copytree(folder, kept)
                    shown = command if command[0] == sys.executable else ["gpufleet", *command]
                    reproduce = " ".join(c.replace(str(folder), str(kept)) for c in shown)
                    (kept / "REPRODUCE.txt").write_text(f"{what}\n{reproduce}\n{problem}\n{err[-4000:]}")
                    print(f"  {name} #{i}: {problem}: {what}\n    {reproduce}")
        print(f"{name}: {args.runs - bad} of {args.runs} runs kept the contract (seed {args.seed})")
        failed += bad
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
