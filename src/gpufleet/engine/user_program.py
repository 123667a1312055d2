"""A Pulumi Python program of one's own, as `gpufleet preview --program DIR` previews it: its project
file (`Pulumi.yaml`: name, runtime, main, stackConfigDir, the virtualenv) and one stack's config
file, read as the Pulumi CLI reads them (a key without a namespace belongs to the project)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError

from gpufleet.engine.recorded import Program
from gpufleet.errors import InputError
from gpufleet.stack import files as stackfile

# The Node.js language host as the Pulumi CLI runs it (pulumi/pulumi sdk/nodejs/cmd/pulumi-language-nodejs/
# main.go: parseOptions, locateModule, execRuntime): `node [nodeargs] <runner> ... <main>`, the runner
# resolved as Node resolves a module from the program's folder (its node_modules or any above it).
NODE_RUN = "@pulumi/pulumi/cmd/run"
_LOCATE = (
    "try { console.log(require.resolve(process.argv[1])); } catch (error) { "
    "console.error(error.code === 'MODULE_NOT_FOUND' ? 'not found' : error.message); process.exit(1); }"
)
PACKAGE_MANAGERS = ("auto", "npm", "yarn", "pnpm", "bun")
# Runtimes the CLI hosts and gpufleet does not: what to do instead.
_ELSEWHERE = (
    "offline, gpufleet runs Python and Node.js (JavaScript, TypeScript) programs; for this runtime run "
    "`pulumi preview --json > plan.json` where the CLI is, then `gpufleet check plan.json`"
)


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
        raise ProgramError(f"{project_file}: runtime = {runtime_name!r}: {_ELSEWHERE}")
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
    name = project["name"]
    # The CLI's rules: a key without a namespace is the project's; the stack's value wins over the
    # project file's `config` (its value, or its default).
    config = _project_config(project.get("config"), project_file)
    config.update(stackfile.load(path, stack).pulumi_config())
    config = {key if ":" in key else f"{name}:{key}": value for key, value in config.items()}
    options = given if isinstance(runtime, dict) and isinstance(given := runtime.get("options"), dict) else {}
    if runtime_name == "nodejs":
        if python is not None:
            raise ProgramError(f"--python {python}: {project_file} names the nodejs runtime, which runs with node")
        node, runner = _node(folder)
        typescript, tsconfig, node_args = _node_options(options, project_file)
        program = Program(main.resolve(), name, folder.resolve(), runtime_name, typescript, runner, node_args, tsconfig)
        return LoadedProgram(program, stack, path, config, node, "node on PATH")
    interpreter, named = _interpreter(folder, project_file, runtime, python)
    return LoadedProgram(Program(main.resolve(), name, folder.resolve(), runtime_name), stack, path, config, interpreter, named)


def _project_config(block: object, project_file: Path) -> dict[str, str]:
    """Pulumi.yaml's project-level `config` (https://www.pulumi.com/docs/iac/concepts/projects/project-file/):
    a key's value, or a declaration whose `value` or `default` it takes (one with neither sets nothing)."""
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise ProgramError(f"{project_file}: config = {block!r}: must be a mapping of config keys")
    config = {}
    for key, spec in block.items():
        value = spec.get("value", spec.get("default")) if isinstance(spec, dict) else spec
        if value is not None:
            config[str(key)] = value if isinstance(value, str) else json.dumps(value)
    return config


def _node(folder: Path) -> tuple[Path, Path]:
    """`node`, and the program runner of the @pulumi/pulumi its folder resolves (locateModule)."""
    node = shutil.which("node")
    if node is None:
        raise ProgramError(f"--program {folder}: a nodejs program runs with node, and there is no node on PATH")
    try:
        found = subprocess.run([node, "-e", _LOCATE, NODE_RUN], cwd=folder, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise ProgramError(f"--program {folder}: node did not resolve {NODE_RUN} within 60 s") from None
    if found.returncode != 0 or not found.stdout.strip():
        why = found.stderr.strip().splitlines()[-1] if found.stderr.strip() else f"node exited {found.returncode}"
        raise ProgramError(
            f"--program {folder}: {NODE_RUN} does not resolve from there or any folder above it ({why}): "
            "install the program's packages first (npm install, or its package manager's install)"
        )
    return Path(node), Path(found.stdout.strip())


def _node_options(options: dict, project_file: Path) -> tuple[bool, str | None, tuple[str, ...]]:
    """runtime.options as the Node.js language host reads them: typescript (default true), tsconfig,
    nodeargs and packagemanager (checked only: gpufleet installs nothing)."""
    typescript = options.get("typescript", True)
    if not isinstance(typescript, bool):
        raise ProgramError(f"{project_file}: runtime.options.typescript = {typescript!r}: must be a boolean")
    tsconfig = options.get("tsconfig")
    if tsconfig is not None and not isinstance(tsconfig, str):
        raise ProgramError(f"{project_file}: runtime.options.tsconfig = {tsconfig!r}: must be a string (a path)")
    nodeargs = options.get("nodeargs", "")
    if not isinstance(nodeargs, str):
        raise ProgramError(f"{project_file}: runtime.options.nodeargs = {nodeargs!r}: must be a string")
    try:
        node_args = tuple(shlex.split(nodeargs))
    except ValueError as err:
        raise ProgramError(f"{project_file}: runtime.options.nodeargs = {nodeargs!r}: not a command line ({err})") from None
    manager = options.get("packagemanager", "auto")
    if manager not in PACKAGE_MANAGERS:
        raise ProgramError(f"{project_file}: runtime.options.packagemanager = {manager!r}: must be one of {', '.join(PACKAGE_MANAGERS)}")
    return typescript, tsconfig, node_args


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
