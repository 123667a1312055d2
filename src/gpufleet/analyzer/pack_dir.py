"""A policy pack directory as the Pulumi CLI reads it: PulumiPolicy.yaml (a Python runtime, its
virtualenv) and the interpreter that runs the pack; the pack gpufleet ships."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from gpufleet.errors import InputError

# The pack's shell ships inside the package as gpufleet/policies/pack: a link to the repository's
# policies/ folder, copied into an installed gpufleet as package data.
DEFAULT_PACK = (Path(__file__).resolve().parent.parent / "policies" / "pack").resolve()


class PolicyPackInvalid(InputError):
    """The pack directory is not a Python policy pack (a bad --policy-pack)."""


def read_pack_manifest(pack_dir: Path) -> dict:
    if not pack_dir.is_dir():
        raise PolicyPackInvalid(f"--policy-pack {pack_dir}: no such directory")
    manifest = pack_dir / "PulumiPolicy.yaml"
    if not manifest.is_file():
        raise PolicyPackInvalid(f"--policy-pack {pack_dir}: no PulumiPolicy.yaml there (not a policy pack)")
    try:
        document = YAML(typ="safe", pure=True).load(manifest.read_bytes().decode("utf-8")) or {}
    except (MarkedYAMLError, UnicodeDecodeError) as err:
        raise PolicyPackInvalid(f"{manifest}: not a valid PulumiPolicy.yaml ({str(err).splitlines()[0]})") from None
    if not isinstance(document, dict):
        raise PolicyPackInvalid(f"{manifest}: PulumiPolicy.yaml must be a mapping (runtime: python, ...), not {type(document).__name__}")
    runtime = document.get("runtime")
    if isinstance(runtime, dict) and not isinstance(runtime.get("options") or {}, dict):
        raise PolicyPackInvalid(f"{manifest}: runtime.options = {runtime.get('options')!r}: must be a mapping (virtualenv: ...)")
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        raise PolicyPackInvalid(
            f"--policy-pack {pack_dir}: runtime {name!r} in PulumiPolicy.yaml; offline, gpufleet runs Python packs only"
        )
    return document


def interpreter(pack_dir: Path, manifest: dict) -> str:
    """The pack's virtualenv as PulumiPolicy.yaml names it, as the CLI would use; else this Python."""
    runtime = manifest.get("runtime")
    venv = (runtime.get("options") or {}).get("virtualenv") if isinstance(runtime, dict) else None
    if venv:
        # Not resolved: the venv's python is a symlink to the base interpreter, which lacks the venv.
        python = Path(os.path.abspath(pack_dir / venv / "bin" / "python"))
        if python.is_file():
            return str(python)
    return sys.executable
