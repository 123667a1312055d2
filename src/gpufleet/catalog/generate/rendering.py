"""The generated data files' one layout: `generated` first, then each section one entry a line,
keys sorted, so a regeneration's diff shows the entries that changed and nothing else."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _line(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def one_entry_a_line(document: dict, sections: tuple[str, ...]) -> str:
    out = ["{", f'"generated":{_line(document["generated"])},']
    for s, section in enumerate(sections):
        rows = list(document[section].items())
        out.append(f"{json.dumps(section)}:{{")
        out += [f"{json.dumps(name)}:{_line(value)}{',' if i < len(rows) - 1 else ''}" for i, (name, value) in enumerate(rows)]
        out.append("}," if s < len(sections) - 1 else "}")
    out.append("}")
    return "\n".join(out) + "\n"


def check_asked(prog: str, doc: str, argv: list[str] | None) -> bool:
    """A generator's command line: `--check` compares instead of writing."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the committed file differs")
    return parser.parse_args(argv).check


def written(path: Path, text: str, check: bool, source: str, regenerate: str) -> int:
    """Write a generated file; with `check`, 1 when the committed one is stale against `source`."""
    if check:
        if (path.read_text(encoding="utf-8") if path.exists() else "") != text:
            print(f"{path} is stale against {source}: run `{regenerate}`", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path} from {source}", file=sys.stderr)
    return 0
