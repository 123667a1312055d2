"""The rooms of the code: which package may import which (a cycle between component packages, or a
leaf that reaches back up, fails here with the import that does it)."""

from __future__ import annotations

import ast
import functools

import pytest

from tests.conftest import ROOT

# The rooms, lowest first, and what each may import besides itself. The shared kernel is layered
# catalog < apis < rules < simulate < plans; `platform` (the model base, the platform record, the
# summary rows), the leaves and the platforms use the kernel but never plans/ (reading a plan is the
# application's business); the pack imports only the five kernel rooms (never the generator's
# sub-room, which reaches live AWS); the application's rooms come last, the CLI on top.
KERNEL = ("catalog", "apis", "rules", "simulate", "plans")
_BELOW_PLANS = {"catalog", "apis", "rules", "simulate"}
_SHARED = _BELOW_PLANS | {"platform"}
_COMPONENT_ROOMS = set(KERNEL) | {"catalog.generate", "platform", "network", "nodes", "k8s", "karpenter", "ecs", "eks", "ack", "gke", "aks"}
ALLOWED = {
    "gpufleet": set(),  # the package's own __init__: a docstring
    "catalog": set(),
    "catalog.generate": {"catalog"},
    "apis": {"catalog"},
    "rules": {"catalog", "apis"},
    "simulate": {"catalog", "apis", "rules"},
    "plans": set(_BELOW_PLANS),
    "platform": set(_BELOW_PLANS),
    "network": _SHARED,
    "k8s": _SHARED,
    "nodes": _SHARED,
    "ecs": _SHARED | {"network", "nodes"},
    "karpenter": _SHARED | {"nodes", "k8s"},
    "eks": _SHARED | {"network", "nodes", "k8s", "karpenter"},
    "ack": _SHARED | {"k8s"},
    "gke": _SHARED | {"k8s"},
    "aks": _SHARED | {"k8s"},
    # The SDK patches (engine/patches/): below everything, for the engine and the pack's process.
    "engine.patches": set(),
    "policies": set(KERNEL) | {"engine.patches"},
    # The application: the stack-file program, the public component API, the pack client, the
    # offline engine, verify, the CLI.
    "stack": set(_COMPONENT_ROOMS),
    "library": _COMPONENT_ROOMS | {"stack"},
    "analyzer": _COMPONENT_ROOMS | {"stack", "library"},
    "engine": _COMPONENT_ROOMS | {"stack", "library", "analyzer", "engine.patches"},
    # `gpufleet verify`: reads a fleet and holds it against a plan the CLI hands it (no engine).
    "verify": _COMPONENT_ROOMS | {"stack", "library"},
    "cli": _COMPONENT_ROOMS | {"stack", "library", "analyzer", "engine", "engine.patches", "policies", "verify"},
}
# The exception tree (gpufleet.errors) sits below every room: any room may raise its errors; so do
# the process groups gpufleet starts (gpufleet.process_groups), which the engine, the pack client
# and the CLI share.
BELOW_ALL = {"errors": set(), "process_groups": {"errors"}}
ALLOWED = {**BELOW_ALL, **{room: {*allowed, *BELOW_ALL} for room, allowed in ALLOWED.items()}}
SRC = ROOT / "src"


def room_of(module: str) -> str | None:
    """The room a gpufleet module belongs to (None: not gpufleet's): its folder under src/gpufleet/."""
    parts = module.split(".")
    if parts[0] != "gpufleet":
        return None
    if len(parts) == 1:
        return "gpufleet"
    if parts[1:3] == ["catalog", "generate"]:
        return "catalog.generate"
    if parts[1:3] == ["engine", "patches"]:
        return "engine.patches"
    return parts[1]


def module_name(path) -> str:
    """A file's module: its path under src/ (the folder is the import path)."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@functools.cache  # each planted-import test parses one changed module, not all of them again
def imported(source: str) -> tuple[str, ...]:
    """Every module a file imports, at the top or inside a function (a lazy import is still one)."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            # `from gpufleet import simulate` imports the room simulate.
            names.extend(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
    return tuple(names)


def layering_violations(files: dict) -> list[str]:
    """{module name: source} -> each import that reaches a room its room may not use."""
    found = []
    for module, source in files.items():
        room = room_of(module)
        for name in imported(source):
            target = room_of(name)
            if target is not None and target != room and target not in ALLOWED[room]:
                found.append(f"{module} ({room}) imports {name} ({target})")
    return found


def module_cycles(files: dict) -> list[list[str]]:
    """Import cycles between gpufleet's modules (any import, lazy ones included)."""
    graph = {}
    for module, source in files.items():
        deps = set()
        for name in imported(source):
            while name and name not in files:
                name = name.rpartition(".")[0]
            if name and name != module:
                deps.add(name)
        graph[module] = deps
    cycles, state = [], {}

    def visit(module, path):
        state[module] = "open"
        for dep in sorted(graph[module]):
            if state.get(dep) == "open":
                cycles.append(path[path.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def tree() -> dict:
    """Every module of the package (rglob does not follow the links to stacks/ and the pack's shell)."""
    return {module_name(p): p.read_text() for p in sorted((SRC / "gpufleet").rglob("*.py"))}


def test_every_folder_is_a_room():
    assert {room_of(m) for m in tree()} == set(ALLOWED)


def test_a_folder_is_its_import_path():
    """Nothing maps a package onto another folder: every module imports from where it lies."""
    import importlib.util

    for module in ("gpufleet.plans.wire", "gpufleet.stack.program", "gpufleet.platform.record", "gpufleet.policies.serve"):
        assert importlib.util.find_spec(module).origin == str(SRC / (module.replace(".", "/") + ".py"))
    assert "package-dir" not in (ROOT / "pyproject.toml").read_text()


def test_each_room_imports_only_the_rooms_below_it():
    assert layering_violations(tree()) == []


def test_the_rooms_are_ordered():
    """ALLOWED itself is a partial order: no two rooms may use each other, however indirectly."""
    seen = {}

    def below(room):
        if room not in seen:
            seen[room] = set()
            seen[room] = set(ALLOWED[room]).union(*(below(r) for r in ALLOWED[room]))
        return seen[room]

    assert not [room for room in ALLOWED if room in below(room)]


def test_no_module_imports_itself_around_a_cycle():
    assert module_cycles(tree()) == []


@pytest.mark.parametrize("room", sorted(set(ALLOWED) - {"gpufleet"}))
def test_an_upward_import_planted_in_a_room_is_caught(room):
    files = tree()
    upward = sorted(r for r in ALLOWED if r != room and r not in ALLOWED[room] and r != "gpufleet")
    if not upward:
        pytest.skip(f"{room} may import every other room")
    target = {"stack": "gpufleet.stack.program", "platform": "gpufleet.platform.model",
              "catalog.generate": "gpufleet.catalog.generate.sources",
              "engine": "gpufleet.engine.runtime", "engine.patches": "gpufleet.engine.patches.lean_imports"}.get(upward[-1])
    target = target or next(m for m in files if room_of(m) == upward[-1])
    module = next(m for m in files if room_of(m) == room)
    files[module] += f"\nfrom {target} import something\n"
    assert layering_violations(files) == [f"{module} ({room}) imports {target}.something ({upward[-1]})"]


def test_a_cycle_planted_between_two_modules_is_caught():
    files = tree()
    files["gpufleet.cli.many"] += "\nfrom gpufleet.cli.main import main\n"
    assert ["gpufleet.cli.main", "gpufleet.cli.many", "gpufleet.cli.main"] in module_cycles(files)


def test_the_engine_and_the_analyzer_do_not_import_the_cli():
    for room in ("engine", "analyzer"):
        for path in sorted((SRC / "gpufleet" / room).glob("*.py")):
            assert not [n for n in imported(path.read_text()) if n.startswith("gpufleet.cli")], path


def test_type_tokens_are_declared_once():
    """Resource and function type tokens are spelled in src/gpufleet/catalog/tokens.py only; the rules,
    the plan's shapes, the diff and the engine refer to its names."""
    import re

    token = re.compile(r"[\"'](?:aws|kubernetes|alicloud|gcp|azure|pulumi):[\w/.-]+:\w+[\"']")
    for folder in ("src/gpufleet", "policies"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "tokens.py" and path.parent.name == "catalog":
                continue
            found = token.findall(path.read_text())
            # A component's own type token (gpufleet:...) is its declaration, in its one file.
            assert not found, f"{path.relative_to(ROOT)} spells {found[0]}: use gpufleet.catalog.tokens"
