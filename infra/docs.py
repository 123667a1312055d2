"""Generate docs/stack-file.md from the spec models: `python -m gpufleet.docs` (`--check` to verify)."""

from __future__ import annotations

import re
import sys
import typing
from pathlib import Path

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from gpufleet.spec import NAMESPACE, FleetSpec

DOC = Path(__file__).resolve().parent.parent / "docs" / "stack-file.md"


def _models(annotation) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _type_name(annotation) -> str:
    text = repr(annotation).replace("<class '", "").replace("'>", "").replace(" | ", " or ")
    return re.sub(r"\b(?:[a-z_]\w*\.)+(?=[A-Za-z_]\w*)", "", text)  # a model's name, not its module


def _constraints(info) -> str:
    parts = []
    for meta in info.metadata:
        for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"), ("min_length", "min items"), ("pattern", "pattern")):
            value = getattr(meta, attr, None)
            if value is not None:
                parts.append(f"{sym} `{value}`" if attr == "pattern" else f"{sym} {value}")
    return ", ".join(parts)


def _default(info) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        return f"`{info.default_factory()!r}`"
    return "absent" if info.default is None else f"`{info.default!r}`" if info.default is not PydanticUndefined else ""


def render() -> str:
    lines = [
        "# Stack file reference",
        "",
        "Generated from the spec models by `python -m gpufleet.docs`; do not edit by hand.",
        "",
        f"A stack file is a Pulumi stack config file (`stacks/Pulumi.<stack>.yaml`). gpufleet reads the "
        f"`{NAMESPACE}:*` keys under `config:`; structured values are YAML mappings.",
        "",
    ]
    seen: set[type] = set()
    queue: list[tuple[str, type[BaseModel]]] = [("config", FleetSpec)]
    while queue:
        title, model = queue.pop(0)
        if model in seen:
            continue
        seen.add(model)
        lines += [f"## {title}: `{model.__name__}`", "", (model.__doc__ or "").strip(), ""]
        lines += ["| key | type | default | constraints | description |", "|---|---|---|---|---|"]
        for name, info in model.model_fields.items():
            key = info.alias or name
            if model is FleetSpec:
                key = f"{NAMESPACE}:{key}"
            lines.append(
                f"| `{key}` | {_type_name(info.annotation)} | {_default(info)} | {_constraints(info)} | {info.description or ''} |"
            )
            queue += [(key, m) for m in _models(info.annotation)]
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not DOC.exists() or DOC.read_text() != text:
            print(f"{DOC} is stale: run `python -m gpufleet.docs`", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
