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

import yaml
from ruamel.yaml import nodes as ruamel_nodes
from ruamel.yaml.resolver import VersionedResolver

_NULL = {"null", "Null", "NULL", "~", ""}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+")
# ruamel's own YAML 1.2 resolver says what a plain scalar is; only its plainest spellings are
# converted here, the rest (0755, 1_000, 1e3, .inf, dates) is left to ruamel.
_RESOLVER = VersionedResolver(version=(1, 2))
_CORE = "tag:yaml.org,2002:"

_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class _Doubtful(Exception):
    """The readers might differ here: leave the file to ruamel."""


_DEFAULT_TAGS = {yaml.ScalarNode: _STR, yaml.SequenceNode: _SEQ, yaml.MappingNode: _MAP}


class _Parser(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's parser; every plain scalar is left unresolved (tagged str) and judged here."""

    def resolve(self, kind, value, implicit):
        # With no implicit resolvers this is what PyYAML's resolver answers, without its lookups:
        # a node's tag unless the text gave one (a tagged file never reaches here, see read()).
        return _DEFAULT_TAGS[kind]


_Parser.yaml_implicit_resolvers = {}


def read(text: str) -> object | None:
    """The document's plain values as ruamel would read them, or None (read it with ruamel)."""
    if not hasattr(yaml, "CSafeLoader") or "!" in text:
        return None  # a tag (`!!str 5`) leaves no trace in the node it makes: any `!` goes to ruamel
    try:
        node = yaml.compose(text, Loader=_Parser)
        return _value(node, set())
    except (_Doubtful, yaml.YAMLError, RecursionError):
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
