"""The files a fact passes through on its way from a stack file to the plan's cost block: every
gpufleet module with a function that is handed the fact (as an argument, or inside a mapping, list,
dataclass or pydantic model within two levels of one) while `gpufleet preview STACK --no-policy` runs.

    python bench/fact_path.py [STACK] [FACT]      # default: eks-p5-efa p5.48xlarge

Prints the files by room, and the counts. Run it on two checkouts to compare a walk before and after
a change (it reads the package it imports: the layout of either checkout)."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _holds(value: object, fact: str, depth: int = 2) -> bool:
    if isinstance(value, str):
        return value == fact
    if depth == 0:
        return False
    if isinstance(value, dict):
        return any(_holds(v, fact, depth - 1) for v in list(value.values())[:200])
    if isinstance(value, (list, tuple)):
        return any(_holds(v, fact, depth - 1) for v in value[:200])
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict):
        return any(_holds(v, fact, depth - 1) for v in list(fields.values())[:50])
    return False


def main() -> None:
    stack = sys.argv[1] if len(sys.argv) > 1 else "eks-p5-efa"
    fact = sys.argv[2] if len(sys.argv) > 2 else "p5.48xlarge"
    from gpufleet.cli.main import main as cli  # the checkout's own layout, whichever it is

    package = Path(sys.modules["gpufleet"].__file__ or "").resolve().parent
    top = package.parent if package.parent.name == "src" else package.parent
    seen: set[str] = set()

    def profile(frame, event, _arg):
        if event != "call":
            return
        name = frame.f_code.co_filename
        if name in seen or not name.startswith(str(top)) or "/.venv/" in name or "/tests/" in name:
            return
        code = frame.f_code
        arguments = [frame.f_locals.get(a) for a in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]]
        if any(_holds(v, fact) for v in arguments):
            seen.add(name)

    sys.setprofile(profile)
    try:
        with redirect_stdout(io.StringIO()):
            code = cli(["preview", stack, "--no-policy", "--json"])
    finally:
        sys.setprofile(None)
    files = sorted(str(Path(f).relative_to(top)) for f in seen)
    rooms: dict[str, list[str]] = {}
    for f in files:
        rooms.setdefault(str(Path(f).parent), []).append(f)  # a room is a folder
    for room, members in sorted(rooms.items()):
        print(f"{room}: {', '.join(Path(m).name for m in members)}")
    print(f"{fact} from stacks/Pulumi.{stack}.yaml to the cost block (exit {code}): {len(files)} files in {len(rooms)} rooms")


if __name__ == "__main__":
    main()
