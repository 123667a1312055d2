"""Pulumi stack config files: find them, read them with line numbers, hand their config over as the
Pulumi CLI would (plain values as strings, structured values as JSON text)."""

from __future__ import annotations

import codecs
import functools
import json
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError

from gpufleet.errors import InputError
from gpufleet.stack import yaml_reader as stack_yaml

# The shipped stacks: the repository's stacks/ folder, or its copy in an installed gpufleet.
# The shipped stack files: the repository's stacks/ folder (src/gpufleet/stacks links to it), copied
# into an installed gpufleet as package data.
STACKS = (Path(__file__).resolve().parent.parent / "stacks").resolve()


class StackFileError(InputError):
    """The stack file is missing, unreadable or not a Pulumi stack config file."""


@dataclass(frozen=True)
class StackFile:
    path: Path
    stack: str
    config: dict  # the `config:` mapping's plain values
    text: str  # the file's text, read again with ruamel for line numbers (errors only)

    def pulumi_config(self) -> dict[str, str]:
        """Config as the Pulumi CLI hands it to the program."""
        return {str(k): v if isinstance(v, str) else json.dumps(_plain(v)) for k, v in self.config.items()}

    @functools.cached_property
    def _round_trip(self) -> CommentedMap:
        return _read_round_trip(self.path, self.text).get("config") or CommentedMap()

    def line_of(self, field: tuple[str | int, ...]) -> int | None:
        """1-based line of a spec field (path without the namespace), or of its nearest present parent."""
        from gpufleet.stack.spec import NAMESPACE  # only on an error: the spec imports every cloud's models

        node: object = self._round_trip
        key: str | int = f"{NAMESPACE}:{field[0]}" if field else ""
        line = _line(node, key)
        for part in field[1:]:
            child = _child(node, key)
            if child is None:
                break
            node, key = child, part
            line = _line(node, key) or line
        return line


def _child(node, key):
    try:
        return node[key]
    except (KeyError, IndexError, TypeError):
        return None


def _line(node, key) -> int | None:
    try:
        if isinstance(node, CommentedMap) and key in node:
            return node.lc.key(key)[0] + 1
        if isinstance(node, CommentedSeq) and isinstance(key, int) and key < len(node):
            return node.lc.item(key)[0] + 1
    except (AttributeError, KeyError, TypeError):
        return None
    return None


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def stack_names(folder: Path = STACKS) -> list[str]:
    """The stacks whose config files (Pulumi.<stack>.yaml) are in the folder."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in folder.glob("Pulumi.*.yaml"))


def stack_path(stack: str, folder: Path = STACKS) -> Path:
    path = folder / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = stack_names(folder)
        raise StackFileError(f"unknown stack {stack!r}: no {path} (stacks: {', '.join(known) or 'none'})")
    return path


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(path: Path, data: bytes) -> str:
    """A file's text: UTF-8 (with or without a BOM), or UTF-16/32 with a BOM; anything else is refused
    with the first byte that is not UTF-8 (Latin-1 cannot be told from other 8-bit encodings)."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as err:
                raise StackFileError(
                    f"{path}: not valid {codec.upper()} after its byte order mark: {err.reason} at byte {err.start}"
                ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise StackFileError(
            f"{path}:{line}: not UTF-8: byte 0x{data[err.start]:02x} at offset {err.start} ({err.reason}); save the file as "
            "UTF-8 (UTF-16 and UTF-32 are read when they start with a byte order mark)"
        ) from None


def load(path: Path, stack: str | None = None) -> StackFile:
    try:
        data = path.read_bytes()
    except OSError as err:
        raise StackFileError(f"{path}: cannot read the stack file: {err.strerror}") from None
    if len(data) > stack_yaml.MAX_BYTES:
        raise StackFileError(f"{path}: {len(data):,} bytes; a stack file is read up to {stack_yaml.MAX_BYTES:,} bytes")
    text = decode(path, data)
    node = stack_yaml.compose(text)
    try:
        if node is not None:
            stack_yaml.check_bounds(node)
        else:  # no libyaml, or it cannot parse the file: the same bounds over ruamel's graph
            stack_yaml.check_bounds(stack_yaml.compose_pure(text))
        document = stack_yaml.read(text, node) if node is not None else None  # libyaml, when it reads the file as ruamel would
        if document is None:
            document = _read_round_trip(path, text)
            stack_yaml.check_bounds(document)
    except stack_yaml.Unbounded as err:
        raise StackFileError(f"{path}{f':{err.line}' if err.line else ''}: {err}") from None
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise StackFileError(f"{path}: a Pulumi stack config file needs a top-level `config:` mapping")
    if stack is None:
        name = path.name
        stack = name[len("Pulumi.") : -len(".yaml")] if name.startswith("Pulumi.") and name.endswith(".yaml") else path.stem
    return StackFile(path, stack, document["config"], text)


def _read_round_trip(path: Path, text: str) -> CommentedMap:
    try:
        return YAML(typ="rt").load(text)
    except RecursionError:
        raise stack_yaml.Unbounded(None, f"values nested more than {stack_yaml.MAX_DEPTH} deep, the bound") from None
    except ValueError as err:
        if "integer string conversion" not in str(err):
            raise
        raise stack_yaml.Unbounded(None, f"a number of more than {stack_yaml.MAX_NUMBER} digits, the bound") from None
    except MarkedYAMLError as err:
        # Point at the line where the construct that failed starts (an unclosed bracket's line), and
        # say where the parser gave up.
        start, stop = err.context_mark or err.problem_mark, err.problem_mark
        where = f"{path}:{start.line + 1}" if start else str(path)
        what = "; ".join(x for x in (err.context, err.problem) if x)
        found = (
            f" (the parser stopped at line {stop.line + 1}, column {stop.column + 1})" if stop and start and stop.line != start.line else ""
        )
        raise StackFileError(f"{where}: not valid YAML: {what}{found}") from None
