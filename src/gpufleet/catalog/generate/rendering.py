"""The generated data files' one layout: `generated` first, then each section one entry a line,
keys sorted, so a regeneration's diff shows the entries that changed and nothing else."""

from __future__ import annotations

import json


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
