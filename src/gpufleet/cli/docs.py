"""Generate docs/stack-file.md from the spec models: `python -m gpufleet.cli.docs` (`--check` to verify)."""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from pathlib import Path

import pulumi
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from gpufleet.platform.model import CatalogChoice
from gpufleet.stack.spec import NAMESPACE, FleetSpec

DOC = Path(__file__).resolve().parents[3] / "docs" / "stack-file.md"
LIBRARY_DOC = DOC.with_name("library.md")


def _models(annotation) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _as_validated(annotation, metadata=()):
    """The annotation with each catalog choice as the Literal it validates as (its values are the
    catalog's, read now: a model's import reads none). pydantic keeps a field's own Annotated
    metadata apart (`metadata`); a nested one stays in the annotation."""
    choice = next((m for m in (*metadata, *getattr(annotation, "__metadata__", ())) if isinstance(m, CatalogChoice)), None)
    if choice is not None:
        return choice.literal()
    args = typing.get_args(annotation)
    shown = tuple(_as_validated(a) for a in args)
    if shown == args:
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return typing.Union.__getitem__(shown)
    return origin[shown]


def _type_name(annotation, metadata=()) -> str:
    text = repr(_as_validated(annotation, metadata)).replace("<class '", "").replace("'>", "").replace(" | ", " or ")
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
        "Generated from the spec models by `python -m gpufleet.cli.docs`; do not edit by hand.",
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
                f"| `{key}` | {_type_name(info.annotation, info.metadata)} | {_default(info)} | {_constraints(info)} | {info.description or ''} |"
            )
            queue += [(key, m) for m in _models(info.annotation)]
        lines.append("")
    return "\n".join(lines)


def _model_table(model: type[BaseModel]) -> list[str]:
    """A model's fields as Python sees them (snake_case keywords); the stack file's key beside."""
    lines = ["| argument | stack-file key | type | default | constraints | description |", "|---|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        lines.append(
            f"| `{name}` | `{info.alias or name}` | {_type_name(info.annotation, info.metadata)} | {_default(info)} | {_constraints(info)} | {info.description or ''} |"
        )
    return lines


def _signature(obj) -> str:
    target = obj.__init__ if inspect.isclass(obj) else obj
    parts: list[str] = []
    for name, p in inspect.signature(target).parameters.items():
        if name == "self":
            continue
        # Annotations are strings here (postponed evaluation): shown as written.
        text = name if p.annotation is inspect.Parameter.empty else f"{name}: {p.annotation}"
        if p.default is not inspect.Parameter.empty:
            text += f" = {p.default!r}"
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not any(x.startswith("*") for x in parts):
            parts.append("*")
        parts.append(text)
    return f"{obj.__name__}({', '.join(parts)})"


def render_library() -> str:
    """docs/library.md: every name gpufleet.library exports, in its order, with its docstrings."""
    from gpufleet import library

    lines = [
        "# gpufleet.library reference",
        "",
        "Generated from `gpufleet.library` by `python -m gpufleet.cli.docs`; do not edit by hand.",
        "",
        inspect.cleandoc(library.__doc__ or ""),
        "",
    ]
    for name in library.__all__:
        obj = getattr(library, name)
        doc = inspect.cleandoc(obj.__doc__ or "")
        if inspect.isclass(obj) and issubclass(obj, BaseModel):
            lines += [f"## `{name}` (args)", "", doc, "", *_model_table(obj), ""]
            continue
        kind = (
            "component"
            if inspect.isclass(obj) and issubclass(obj, pulumi.ComponentResource)
            else "class"
            if inspect.isclass(obj)
            else "function"
        )
        lines += [f"## `{name}` ({kind})", "", "```python", _signature(obj), "```", "", doc, ""]
        init_doc = inspect.cleandoc(obj.__init__.__doc__ or "") if inspect.isclass(obj) and "__init__" in vars(obj) else ""
        if init_doc:
            lines += [init_doc, ""]
    return "\n".join(lines)


# Each generated document, and what writes it.
DOCS = {DOC: render, LIBRARY_DOC: render_library}


def main() -> int:
    stale = []
    for path, make in DOCS.items():
        text = make()
        if "--check" in sys.argv:
            if not path.exists() or path.read_text() != text:
                stale.append(path)
        else:
            path.write_text(text)
    for path in stale:
        print(f"{path} is stale: run `python -m gpufleet.cli.docs`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
