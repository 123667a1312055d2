"""A platform as the stack file, the program, the summary and the library reach it: one record per
platform package (`components/<platform>/platform.py`), listed once (`gpufleet.platforms`). Nobody
else names a platform in an `if`.

A record is cheap to import: each of its functions imports its platform's components, checks and
provider SDK when called, so a stack loads only the clouds it uses."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gpufleet.components.spec_model import Violation


@dataclass(frozen=True)
class Platform:
    """One platform.

    - `key`: the stack file's config key (`gpufleet:<key>`), and the summary's `platform`;
    - `args`: the spec model of its fleet, as `module:Class` (imported only by a stack that uses it);
    - `description`: the key's documentation (the JSON schema and docs/stack-file.md);
    - `aws`: whether its resources go through the stack's AWS provider and region;
    - `checks(fleet, region, catalog)`: every violation of its rules, with field paths below its key;
    - `placement(fleet, region, catalog)`: what stays Pending, judged once the checks pass;
    - `build(fleet, region, opts)`: its components (opts carry the AWS provider where `aws`);
      returns the stack outputs it exports;
    - `summary(fleet, region, catalog)`: its part of the accelerator summary (`groups`, `workloads`,
      and keys of its own)."""

    key: str
    args: str
    description: str
    checks: Callable[[Any, str | None, Any], list[Violation]]
    build: Callable[[Any, str | None, Any], dict[str, Any]]
    summary: Callable[[Any, str | None, Any], dict[str, Any]]
    placement: Callable[[Any, str | None, Any], Iterable[Violation]] | None = None
    aws: bool = False
    library: tuple[str, ...] = field(default=())

    def model(self) -> type:
        import importlib

        module, _, name = self.args.partition(":")
        return getattr(importlib.import_module(module), name)
