"""A Pulumi Python program of one's own, as `gpufleet preview --program DIR` previews it: its project
file (`Pulumi.yaml`: name, runtime, main, stackConfigDir, the virtualenv) and one stack's config
file, read as the Pulumi CLI reads them (a key without a namespace belongs to the project)."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from gpufleet.engine.runtime import Program
from gpufleet.errors import InputError
from gpufleet.stack import files as stackfile

NODE_RUN = Path("node_modules/@pulumi/pulumi/cmd/run")  # the Node.js SDK's program runner, in the program's own packages


class ProgramError(InputError):
    """The folder is not a Pulumi Python program gpufleet can run; the message names the field."""


@dataclass(frozen=True)
class LoadedProgram:
    program: Program
    stack: str
    config_file: Path
    config: dict[str, str]
    interpreter: Path  # the interpreter the program runs in (python, or node)
    interpreter_from: str  # where that interpreter was named


def load(folder: Path, stack: str | None, python: Path | None = None) -> LoadedProgram:
    project_file = folder / "Pulumi.yaml"
    if not project_file.is_file():
        raise ProgramError(f"--program {folder}: no Pulumi.yaml there (not a Pulumi project)")
    try:
        project = YAML(typ="safe", pure=True).load(stackfile.decode(project_file, project_file.read_bytes()))
    except MarkedYAMLError as err:
        raise ProgramError(f"{project_file}: not valid YAML ({str(err).splitlines()[0]})") from None
    if not isinstance(project, dict) or not isinstance(project.get("name"), str) or not project["name"]:
        raise ProgramError(
            f"{project_file}: name = {project.get('name') if isinstance(project, dict) else None!r}: a project name is required"
        )
    runtime = project.get("runtime")
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name not in ("python", "nodejs"):
        raise ProgramError(f"{project_file}: runtime = {runtime_name!r}: offline, gpufleet runs Python and Node.js programs")
    main = folder / str(project.get("main") or ".")
    if runtime_name == "python" and not (main.is_dir() and (main / "__main__.py").is_file()):
        raise ProgramError(
            f"{project_file}: main = {project.get('main') or '.'!r}: must be a folder with a __main__.py (the Python runtime's entry)"
        )
    if runtime_name == "nodejs" and not main.exists():
        raise ProgramError(f"{project_file}: main = {project.get('main') or '.'!r}: no such file or folder (the Node.js runtime's entry)")
    config_dir = folder / str(project.get("stackConfigDir") or ".")
    found = stackfile.stack_names(config_dir)
    if stack is None:
        if len(found) != 1:
            raise ProgramError(
                f"--program {folder}: {len(found)} stack config files in {config_dir} ({', '.join(found) or 'none'}): name one with --stack"
            )
        stack = found[0]
    path = config_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        raise ProgramError(f"--stack {stack}: no {path} (stacks: {', '.join(found) or 'none'})")
    config = stackfile.load(path, stack).pulumi_config()
    name = project["name"]
    # The CLI's rule: a key without a namespace is the project's.
    config = {key if ":" in key else f"{name}:{key}": value for key, value in config.items()}
    if runtime_name == "nodejs":
        if python is not None:
            raise ProgramError(f"--python {python}: {project_file} names the nodejs runtime, which runs with node")
        interpreter, named = _node(folder)
    else:
        interpreter, named = _interpreter(folder, project_file, runtime, python)
    options = given if isinstance(runtime, dict) and isinstance(given := runtime.get("options"), dict) else {}
    program = Program(main.resolve(), name, folder.resolve(), runtime_name, options.get("typescript") is not False)
    return LoadedProgram(program, stack, path, config, interpreter, named)


def _node(folder: Path) -> tuple[Path, str]:
    """The Node.js language host's way: `node` runs the program's own @pulumi/pulumi from its node_modules."""
    node = shutil.which("node")
    if node is None:
        raise ProgramError(f"--program {folder}: a nodejs program runs with node, and there is no node on PATH")
    if not (folder / NODE_RUN).is_dir():
        raise ProgramError(f"--program {folder}: no {NODE_RUN} (install the program's packages first: npm install)")
    return Path(node), "node on PATH"


def _interpreter(folder: Path, project_file: Path, runtime, python: Path | None) -> tuple[Path, str]:
    """The interpreter the CLI would run the program with: `--python`, else the virtualenv the
    project names (runtime.options.virtualenv, relative to the project), else this one."""
    if python is not None:
        if not python.is_file() or not os.access(python, os.X_OK):
            raise ProgramError(f"--python {python}: no executable interpreter there")
        return Path(os.path.abspath(python)), "--python"
    options = runtime.get("options") if isinstance(runtime, dict) else None
    venv = options.get("virtualenv") if isinstance(options, dict) else None
    if venv is None:
        return Path(sys.executable), "gpufleet's own interpreter (Pulumi.yaml names no virtualenv)"
    if not isinstance(venv, str) or not venv:
        raise ProgramError(f"{project_file}: runtime.options.virtualenv = {venv!r}: a folder name is required")
    root = (folder / venv).resolve() if not Path(venv).is_absolute() else Path(venv)
    interpreter = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not interpreter.is_file():
        raise ProgramError(
            f"{project_file}: runtime.options.virtualenv = {venv!r}: no virtualenv at {root} (create it and install the "
            f"program's requirements: python3 -m venv {root} && {root}/bin/pip install -r requirements.txt), or give --python PATH"
        )
    return interpreter, f"the virtualenv {venv!r} of Pulumi.yaml"
