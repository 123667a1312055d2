"""One exception tree (src/gpufleet/errors.py): every error gpufleet raises on purpose derives from
it, and the CLI tells bad input and a verdict it could not reach (exit 2) from a bug (exit 4) by the
two bases alone."""

from __future__ import annotations

import ast

import pytest

from gpufleet.cli import main as cli
from gpufleet.errors import GpufleetError, InputError, NotJudged
from tests.conftest import ROOT

BUILTIN = {"Exception", "ValueError", "RuntimeError", "LookupError", "KeyError", "TypeError", "BaseException"}


def test_every_exception_class_derives_from_the_tree():
    """A class based on a builtin exception alone would escape the CLI's two catches (exit 4)."""
    found = []
    for path in sorted((ROOT / "src" / "gpufleet").rglob("*.py")):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if bases and bases <= BUILTIN:
                    found.append(f"{path.relative_to(ROOT)}: class {node.name}({', '.join(sorted(bases))})")
    assert found == []


def test_the_bases_keep_the_builtin_kinds_callers_catch():
    assert issubclass(InputError, ValueError) and issubclass(NotJudged, RuntimeError)
    assert issubclass(InputError, GpufleetError) and issubclass(NotJudged, GpufleetError)


class _Odd(GpufleetError):
    pass


@pytest.mark.parametrize(("error", "code"), [(InputError("x = 1: the rule"), 2), (NotJudged("the pack did not answer"), 2), (_Odd("a lookup nobody answered"), 4)])
def test_the_cli_exits_by_the_base(monkeypatch, capsys, error, code):
    def handler(args):
        raise error

    monkeypatch.setattr(cli, "cmd_schema", handler)
    assert cli.main(["schema"]) == code
    err = capsys.readouterr().err
    assert str(error) in err and ("internal error" in err) == (code == 4)
