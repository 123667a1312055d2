"""The rooms of the code: which package may import which (a cycle between component packages, or a
leaf that reaches back up, fails here with the import that does it)."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

# What each component package may import of its siblings: k8s and network are leaves (with the
# catalog and the shared model base); ECS, EKS and ACK use them, never each other.
ALLOWED = {
    "catalog": set(),
    "network": {"catalog"},
    "k8s": {"catalog"},
    "ecs": {"catalog", "network"},
    "eks": {"catalog", "network", "k8s"},
    "ack": {"catalog", "k8s"},
    "gke": {"catalog", "k8s"},
    "aks": {"catalog", "k8s"},
}


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def test_component_packages_import_only_the_rooms_below_them():
    for package, allowed in ALLOWED.items():
        for path in sorted((ROOT / "components" / package).glob("*.py")):
            for name in _imports(path):
                parts = name.split(".")
                if parts[:2] != ["gpufleet", "components"] or len(parts) < 3 or parts[2] in ("spec_model", "capacity_checks"):
                    continue
                assert parts[2] == package or parts[2] in allowed, f"{path.relative_to(ROOT)} imports {name}"


def test_the_engine_and_the_analyzer_do_not_import_the_cli():
    for room in ("engine", "analyzer"):
        for path in sorted((ROOT / "infra" / room).glob("*.py")):
            assert not [n for n in _imports(path) if n.startswith("gpufleet.cli")], path


def test_type_tokens_are_declared_once():
    """Resource and function type tokens are spelled in components/catalog/tokens.py only; the rules,
    the plan's shapes, the diff and the engine refer to its names."""
    import re

    token = re.compile(r"[\"'](?:aws|kubernetes|alicloud|gcp|azure|pulumi):[\w/.-]+:\w+[\"']")
    for folder in ("components", "infra", "policies"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "tokens.py" and path.parent.name == "catalog":
                continue
            found = token.findall(path.read_text())
            # A component's own type token (gpufleet:...) is its declaration, in its one file.
            assert not found, f"{path.relative_to(ROOT)} spells {found[0]}: use gpufleet.components.catalog.tokens"
