"""The output types of a provider's resources, read from its Python SDK as the program has it
installed, so that a create in preview does not echo an input whose output is typed otherwise.

A provider's outputs need not have its inputs' shape: azure-native's `identity.userAssignedIdentities`
is a list of ids going in and a map coming out. Echoed, the program's SDK reads a list where its
output type says a map and stops (pulumi runtime/rpc.py translate_output_properties: "Unexpected
type"), where `pulumi preview` shows the value unknown. No provider schema ships offline (the Python
SDKs carry only `pulumi-plugin.json`; the schema is in the provider's plugin binary, not run
offline), so the types are those the SDK itself resolves outputs with (pulumi _types.py
output_type_types / resource_types): the return annotation of each `@pulumi.getter` of the resource
class and of its `@pulumi.output_type` classes, keyed by the getter's name. The SDK's source is read,
not imported: a provider SDK's import takes seconds, and it is the program's, not gpufleet's.

Only what the annotations say plainly is judged (an object type, a list, a map, a scalar); a union,
an unresolved name or a file not found leaves the value as it was."""

from __future__ import annotations

import ast
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpufleet.catalog.tokens import UNKNOWN
from gpufleet.engine import parsing

MAX_SOURCE = 64 << 20  # one generated SDK file (azure-native's largest outputs.py are a few MB)


@dataclass(frozen=True)
class Kind:
    """A type as the SDK's output translation tells them apart: `object` (an output type class in
    `file`), `list` and `map` of `element`, `scalar`, or `any` (not judged)."""

    kind: str
    element: Kind | None = None
    file: Path | None = None
    name: str = ""


ANY, SCALAR = Kind("any"), Kind("scalar")
_SCALARS = {"str", "int", "float", "bool", "Literal", "bytes"}
_LISTS = {"Sequence", "List", "list"}
_MAPS = {"Mapping", "Dict", "dict"}
_GETTER = re.compile(r'@pulumi\.getter(?:\(name="([^"]+)"\))?\s*\n\s*def (\w+)\(self\)\s*->\s*(.+?):\s*\n')
_CLASS = re.compile(r"^class (\w+)\b", re.M)
_REGISTERED = re.compile(r'resource_modules="""(.*?)"""', re.S)


class OutputTypes:
    """The output types of the providers' Python SDKs found on `search_path` (the program's sys.path,
    given when first needed); each file read once."""

    def __init__(self, search_path: Callable[[], list[str]]):
        self._search_path = search_path
        self._path: list[Path] | None = None
        self._packages: dict[str, dict[str, tuple[Path, str]] | None] = {}
        self._resources: dict[str, dict[str, Kind] | None] = {}
        self._classes: dict[tuple[Path, str], dict[str, Kind] | None] = {}
        self._sources: dict[Path, tuple[str, dict[str, tuple[int, int]]] | None] = {}
        self._imports: dict[Path, dict[str, Path]] = {}
        self._lock = threading.RLock()

    def typed(self, type_: str, outputs: dict) -> tuple[dict, list[str]]:
        """`outputs` with each value the output types say cannot be what the SDK reads (a list where
        a map is declared, an object where a string is) unknown, and the paths of those values."""
        with self._lock:
            properties = self._resource(type_)
            if not properties:
                return outputs, []
            mismatched: list[str] = []
            typed = {key: self._fit(value, properties.get(key, ANY), key, mismatched) for key, value in outputs.items()}
        return typed, mismatched

    def _fit(self, value, kind: Kind, path: str, mismatched: list[str]):
        if value == UNKNOWN or value is None or kind.kind == "any":
            return value
        if kind.kind == "scalar":
            fits = not isinstance(value, (dict, list))
        elif kind.kind == "list":
            fits = isinstance(value, list)
            if fits:
                return [self._fit(v, kind.element or ANY, f"{path}[{i}]", mismatched) for i, v in enumerate(value)]
        else:
            fits = isinstance(value, dict)
            if fits and kind.kind == "map":
                return {k: self._fit(v, kind.element or ANY, f"{path}.{k}", mismatched) for k, v in value.items()}
            if fits:
                fields = self._class(kind.file, kind.name) if kind.file else None
                if fields is None:
                    return value
                return {k: self._fit(v, fields.get(k, ANY), f"{path}.{k}", mismatched) for k, v in value.items()}
        if fits:
            return value
        mismatched.append(path)
        return UNKNOWN

    # --- the SDK's files -----------------------------------------------------------------------

    def _resource(self, type_: str) -> dict[str, Kind] | None:
        if type_ not in self._resources:
            package = type_.split(":", 1)[0]
            registered = (self._package(package) or {}).get(type_)
            file = self._defining(*registered) if registered else None
            self._resources[type_] = self._class(file, registered[1]) if file and registered else None
        return self._resources[type_]

    def _package(self, package: str) -> dict[str, tuple[Path, str]] | None:
        """The package's resource classes by type token, with the folder of the module of each: the
        SDK registers them with `_utilities.register(resource_modules=...)` in its `__init__.py`."""
        if package in self._packages:
            return self._packages[package]
        found: dict[str, tuple[Path, str]] | None = None
        root = self._sdk_root(package)
        if root is not None:
            match = _REGISTERED.search(_read(root / "__init__.py") or "")
            try:
                modules = json.loads(match.group(1)) if match else []
            except ValueError:
                modules = []
            found = {}
            for module in modules if isinstance(modules, list) else []:
                if not isinstance(module, dict) or not isinstance(module.get("classes"), dict):
                    continue
                folder = root.parent.joinpath(*str(module.get("fqn", "")).split("."))
                for token, name in module["classes"].items():
                    if isinstance(name, str):
                        found[token] = (folder, name)
        self._packages[package] = found
        return found

    def _sdk_root(self, package: str) -> Path | None:
        """The folder of the package's Python SDK (`pulumi_<name>`, its `pulumi-plugin.json` naming
        the package) on the program's path."""
        if self._path is None:
            self._path = [Path(p) for p in self._search_path() if p]
        module = "pulumi_" + package.replace("-", "_")
        for entry in self._path:
            root = entry / module
            if not (root / "__init__.py").is_file():
                continue
            try:
                named = json.loads((root / "pulumi-plugin.json").read_text(encoding="utf-8")).get("name")
            except (OSError, ValueError, AttributeError):
                named = None
            if named in (None, package):
                return root
        return None

    def _defining(self, folder: Path, name: str) -> Path | None:
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
        for candidate in (folder / f"{snake}.py", folder / f"{name}.py"):
            if self._has_class(candidate, name):
                return candidate
        return None

    def _has_class(self, file: Path, name: str) -> bool:
        indexed = self._source(file)
        return indexed is not None and name in indexed[1]

    def _source(self, file: Path) -> tuple[str, dict[str, tuple[int, int]]] | None:
        """The file's text and where each top-level class of it begins and ends."""
        if file not in self._sources:
            text = _read(file)
            if text is None:
                self._sources[file] = None
            else:
                starts = [(m.group(1), m.start()) for m in _CLASS.finditer(text)]
                spans = {name: (start, starts[i + 1][1] if i + 1 < len(starts) else len(text)) for i, (name, start) in enumerate(starts)}
                self._sources[file] = (text, spans)
        return self._sources[file]

    def _class(self, file: Path, name: str) -> dict[str, Kind] | None:
        """A resource or output type class's getters: the wire name of each, and its type."""
        key = (file, name)
        if key not in self._classes:
            indexed = self._source(file)
            if indexed is None or name not in indexed[1]:
                self._classes[key] = None
            else:
                text, spans = indexed
                start, end = spans[name]
                self._classes[key] = {
                    wire or python: self._kind(annotation, file) for wire, python, annotation in _GETTER.findall(text, start, end)
                }
        return self._classes[key]

    def _kind(self, annotation: str, file: Path) -> Kind:
        try:
            node = parsing.expression(annotation.strip()).body
        except SyntaxError:
            return ANY
        return self._of(node, file)

    def _of(self, node: ast.expr, file: Path) -> Kind:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return self._kind(node.value, file)
        if isinstance(node, ast.Constant) and node.value is None:
            return ANY
        if isinstance(node, ast.Subscript):
            outer = _last_name(node.value)
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if outer in ("Optional", "Output", "Input") and len(args) == 1:
                return self._of(args[0], file)
            if outer in _LISTS and len(args) == 1:
                return Kind("list", self._of(args[0], file))
            if outer in _MAPS and len(args) == 2:
                return Kind("map", self._of(args[1], file))
            return SCALAR if outer == "Literal" else ANY
        name = _last_name(node)
        if name in _SCALARS:
            return SCALAR
        if name in _LISTS:
            return Kind("list", ANY)
        if name in _MAPS:
            return Kind("map", ANY)
        chain = _chain(node)
        if not chain:
            return ANY
        if len(chain) == 1:
            # An output type of the same file, or an enum (a string or number going out as coming in).
            if self._has_class(file, chain[0]):
                return Kind("object", file=file, name=chain[0])
            return SCALAR if self._has_class(file.parent / "_enums.py", chain[0]) else ANY
        defining = self._module(file, chain[:-1])
        if defining is None or not self._has_class(defining, chain[-1]):
            return SCALAR if defining is not None and defining.name == "_enums.py" else ANY
        return Kind("object", file=defining, name=chain[-1])

    def _module(self, file: Path, chain: list[str]) -> Path | None:
        """The file `outputs.X` or `_meta.v1.outputs.X` names, through the file's own relative imports."""
        imports = self._imports.get(file)
        if imports is None:
            imports = self._imports[file] = _relative_imports(file, (self._source(file) or ("", {}))[0])
        place = imports.get(chain[0])
        for part in chain[1:]:
            if place is None or not place.is_dir():
                return None
            place = place / part if (place / part).is_dir() else place / f"{part}.py"
        if place is not None and place.is_dir():
            place = place / "__init__.py"
        return place if place is not None and place.is_file() else None


def _relative_imports(file: Path, text: str) -> dict[str, Path]:
    """`from . import outputs`, `from ... import meta as _meta`: each name bound to the file or folder."""
    bound: dict[str, Path] = {}
    header = text[: text.find("\nclass ")] if "\nclass " in text else text
    for match in re.finditer(r"^from (\.+)([\w.]*) import (\w+)(?: as (\w+))?\s*$", header, re.M):
        base = file.parent
        for _ in range(len(match.group(1)) - 1):
            base = base.parent
        if match.group(2):
            base = base.joinpath(*match.group(2).split("."))
        target = base / match.group(3)
        bound[match.group(4) or match.group(3)] = target if target.is_dir() else target.with_suffix(".py")
    return bound


def _chain(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        inner = _chain(node.value)
        return [*inner, node.attr] if inner else []
    return []


def _last_name(node: ast.expr) -> str:
    chain = _chain(node)
    return chain[-1] if chain else ""


def _read(file: Path) -> str | None:
    try:
        with file.open("rb") as f:
            raw = f.read(MAX_SOURCE + 1)
    except OSError:
        return None
    return raw.decode("utf-8", errors="replace") if len(raw) <= MAX_SOURCE else None
