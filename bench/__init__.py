"""Benchmarks (run as scripts) and the generated fleets they and the scale tests share."""

import os


def as_installed() -> dict[str, str]:
    """The environment of a process a bench starts: gpufleet runs from its compiled bytecode, as
    installed (pip compiles it); a shell that forbids writing it (PYTHONDONTWRITEBYTECODE) would have
    every cold run compile the package's modules from source again, about 0.3 s of a 1.1 s preview."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
