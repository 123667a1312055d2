"""A fast reader for stack files that reads them exactly as ruamel's YAML 1.2 reader does, or not at
all. ruamel's pure-Python round-trip reader took 6 s of a 45 s preview of the largest ECS stack (a
360 KB file); libyaml's C parser reads it in about 0.4 s, but resolves plain scalars by YAML 1.1
(`on`, `no`, `0755`, `1:30` are not strings there). So libyaml only parses, and this module builds
the values itself from the node tree, each plain scalar resolved by ruamel's own YAML 1.2 resolver,
and gives up (None) on anything where the two readers could differ: a scalar ruamel resolves to
something other than a string, or to a number, boolean or null in other than its plainest
spelling; a tag, a merge key, a duplicate or non-string key; any parse error. The caller then reads the file with ruamel, which also gives the error messages and line
numbers. tests/cli/test_stack_yaml.py holds the two readers equal on every shipped stack and on a table
of scalars that YAML 1.1 and 1.2 read differently."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import yaml
from ruamel.yaml import nodes as ruamel_nodes
from ruamel.yaml.resolver import VersionedResolver

from gpufleet.errors import GpufleetError, InputError

_NULL = {"null", "Null", "NULL", "~", ""}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+")
# ruamel's own YAML 1.2 resolver says what a plain scalar is; only its plainest spellings are
# converted here, the rest (0755, 1_000, 1e3, .inf, dates) is left to ruamel.
_RESOLVER = VersionedResolver(version=(1, 2))
_CORE = "tag:yaml.org,2002:"

_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class _Doubtful(GpufleetError):
    """The readers might differ here: leave the file to ruamel."""


_DEFAULT_TAGS = {yaml.ScalarNode: _STR, yaml.SequenceNode: _SEQ, yaml.MappingNode: _MAP}


if TYPE_CHECKING:
    from yaml import SafeLoader as _Loader
else:
    _Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Parser(_Loader):
    """libyaml's parser; every plain scalar is left unresolved (tagged str) and judged here."""

    def resolve(self, kind, value, implicit):
        # With no implicit resolvers this is what PyYAML's resolver answers, without its lookups:
        # a node's tag unless the text gave one (a tagged file never reaches here, see read()).
        return _DEFAULT_TAGS[kind]


_Parser.yaml_implicit_resolvers = {}


# What a stack file may make its reader build. A stack file reaches CI from pull requests, so a small
# file must not expand into an unbounded value (nested aliases, the "billion laughs" shape, which the
# Pulumi CLI's own reader, go-yaml v3, refuses as "excessive aliasing"). The largest shipped stack is
# 360 KB, about 25,000 values, nested 12 deep; every bound is far past what a fleet needs.
MAX_BYTES = 4 * 1024 * 1024
MAX_VALUES = 1_000_000  # values the document holds once every alias is expanded
MAX_DEPTH = 64  # mappings and sequences nested in one another
MAX_NUMBER = 100  # characters of a plain number (2**63 has 19 digits)


class Unbounded(InputError):
    """The document is past one of the bounds above; `line` is where (1-based, when known)."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line


def compose(text: str) -> yaml.Node | None:
    """libyaml's node graph of the document, aliases shared (never expanded), or None where libyaml
    cannot parse it (ruamel reads it then, for its error message)."""
    if not hasattr(yaml, "CSafeLoader"):
        return None
    try:
        return yaml.compose(text, Loader=_Parser)
    except yaml.YAMLError:
        return None


def check_bounds(root: object) -> None:
    """Refuse a document past MAX_VALUES, MAX_DEPTH or MAX_NUMBER before anything expands it. `root`
    is libyaml's node graph or ruamel's values (whose aliases are shared objects too): each shared
    node is counted once per reference without being walked again, so the check costs what the file
    holds, not what it expands to."""
    sizes: dict[int, int] = {}
    heights: dict[int, int] = {}
    stack: list[tuple[object, int, bool]] = [(root, 1, False)]
    open_ids: set[int] = set()
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            open_ids.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            heights[key] = 1 + max((heights[id(c)] for c in children), default=0)
            if sizes[key] > MAX_VALUES:
                raise Unbounded(
                    _line(node), f"the document expands to more than {MAX_VALUES:,} values once its aliases are expanded, the bound"
                )
            continue
        if key in sizes:
            continue
        if key in open_ids:
            raise Unbounded(_line(node), "an alias refers to a value that contains it: the document never ends")
        if depth > MAX_DEPTH:
            raise Unbounded(_line(node), f"values nested more than {MAX_DEPTH} deep, the bound")
        _number_bound(node)
        open_ids.add(key)
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in children if id(c) not in sizes)


def compose_pure(text: str) -> ruamel_nodes.Node | None:
    """ruamel's node graph of the document (aliases shared), for check_bounds where libyaml is not
    there to compose it: ruamel's values read an alias to its own container as null, where the
    graph shows the loop. None where ruamel cannot parse it (its reader then gives the error)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError

    try:
        return YAML(typ="rt").compose(text)
    except RecursionError:
        raise Unbounded(None, f"values nested more than {MAX_DEPTH} deep, the bound") from None
    except MarkedYAMLError:
        return None


def _children(node: object) -> list:
    if isinstance(node, (yaml.MappingNode, ruamel_nodes.MappingNode)):
        return [x for pair in node.value for x in pair]
    if isinstance(node, (yaml.SequenceNode, ruamel_nodes.SequenceNode)):
        return list(node.value)
    if isinstance(node, dict):
        return [x for pair in node.items() for x in pair]
    if isinstance(node, list):
        return list(node)
    return []


def _line(node: object) -> int | None:
    mark = getattr(node, "start_mark", None)
    if mark is not None:
        return mark.line + 1
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else None


def _number_bound(node: object) -> None:
    if (
        isinstance(node, yaml.ScalarNode)
        and not node.style
        and len(node.value) > MAX_NUMBER
        and _resolved(node.value) in (_CORE + "int", _CORE + "float")
    ):
        raise Unbounded(_line(node), f"a number of {len(node.value):,} characters; the bound is {MAX_NUMBER}")
    if isinstance(node, int) and not isinstance(node, bool) and _digits_past_bound(node):
        raise Unbounded(None, f"a number of more than {MAX_NUMBER} digits, the bound")


def _digits_past_bound(number: int) -> bool:
    """More than MAX_NUMBER decimal digits. Bits alone cannot say (a 101-digit number may have the
    bits of a 100-digit one), so the digits are counted, but only of a number near the bound: one
    with four bits a digit or more is past it whatever its digits."""
    bits = abs(number).bit_length()
    return bits > MAX_NUMBER * 4 or (bits > MAX_NUMBER * 3 and len(str(abs(number))) > MAX_NUMBER)


def read(text: str, node: yaml.Node | None = None) -> object | None:
    """The document's plain values as ruamel would read them, from libyaml's nodes of `text` (composed
    here unless given; the loader gives them after check_bounds), or None (read it with ruamel)."""
    if "!" in text:
        return None  # a tag (`!!str 5`) leaves no trace in the node it makes: any `!` goes to ruamel
    node = node if node is not None else compose(text)
    if node is None:
        return None
    try:
        return _value(node, set())
    except (_Doubtful, RecursionError):
        return None


def _value(node: yaml.Node, path: set[int]) -> object:
    if id(node) in path:
        raise _Doubtful  # a recursive alias
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    path = path | {id(node)}
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            raise _Doubtful
        return [_value(item, path) for item in node.value]
    if isinstance(node, yaml.MappingNode):
        if node.tag != _MAP:
            raise _Doubtful
        found: dict = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR or key_node.value == "<<":
                raise _Doubtful  # a merge key, a tagged or complex key
            key = _scalar(key_node)
            if not isinstance(key, str) or key in found:
                raise _Doubtful  # a number as key, or a duplicate (ruamel refuses it, with its message)
            found[key] = _value(value_node, path)
        return found
    raise _Doubtful


@functools.lru_cache(maxsize=4096)
def _resolved(text: str) -> str:
    """ruamel's YAML 1.2 tag for a plain scalar: a large stack file repeats its keys and values
    thousands of times, and the resolver's lookup is most of the reading."""
    return _RESOLVER.resolve(ruamel_nodes.ScalarNode, text, (True, False))


def _scalar(node: yaml.ScalarNode) -> object:
    if node.tag != _STR:
        raise _Doubtful  # an explicit tag
    text = node.value
    if node.style:  # quoted or block: a string in every reader
        return text
    tag = _resolved(text)
    if tag == _STR:
        return text
    if tag == _CORE + "null" and text in _NULL:
        return None
    if tag == _CORE + "bool" and text in _BOOL:
        return _BOOL[text]
    if tag == _CORE + "int" and _INT.fullmatch(text):
        return int(text)
    if tag == _CORE + "float" and _FLOAT.fullmatch(text):
        return float(text)
    raise _Doubtful
