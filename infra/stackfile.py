"""Pulumi stack config files: find them, read them with line numbers, hand their config over as the
Pulumi CLI would (plain values as strings, structured values as JSON text)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError

from infra.spec import NAMESPACE

REPO_ROOT = Path(__file__).resolve().parent.parent


class StackFileError(ValueError):
    """The stack file is missing, unreadable or not a Pulumi stack config file."""


@dataclass(frozen=True)
class StackFile:
    path: Path
    stack: str
    document: CommentedMap  # the round-trip document: keeps line numbers for error messages

    @property
    def config(self) -> CommentedMap:
        return self.document.get("config") or CommentedMap()

    def pulumi_config(self) -> dict[str, str]:
        """Config as the Pulumi CLI hands it to the program."""
        return {str(k): v if isinstance(v, str) else json.dumps(_plain(v)) for k, v in self.config.items()}

    def line_of(self, field: tuple[str | int, ...]) -> int | None:
        """1-based line of a spec field (path without the namespace), or of its nearest present parent."""
        node: object = self.config
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


def stack_path(stack: str, root: Path = REPO_ROOT) -> Path:
    path = root / "stacks" / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (root / "stacks").glob("Pulumi.*.yaml"))
        raise StackFileError(f"unknown stack {stack!r}: no {path} (stacks: {', '.join(known) or 'none'})")
    return path


def load(path: Path, stack: str | None = None) -> StackFile:
    try:
        text = path.read_text()
    except OSError as err:
        raise StackFileError(f"{path}: cannot read the stack file: {err.strerror}") from None
    try:
        document = YAML(typ="rt").load(text)
    except MarkedYAMLError as err:
        mark = err.problem_mark
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        raise StackFileError(f"{where}: not valid YAML: {err.problem}") from None
    if not isinstance(document, CommentedMap) or not isinstance(document.get("config"), CommentedMap):
        raise StackFileError(f"{path}: a Pulumi stack config file needs a top-level `config:` mapping")
    if stack is None:
        name = path.name
        stack = name[len("Pulumi.") : -len(".yaml")] if name.startswith("Pulumi.") and name.endswith(".yaml") else path.stem
    return StackFile(path, stack, document)
