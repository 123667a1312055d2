"""A platform as the stack file, the program, the summary and the library reach it: one record per
platform package (`src/gpufleet/<platform>/platform.py`), listed once (`gpufleet.stack.platforms`). Nobody
else names a platform in an `if`.

A platform package keeps one shape, which the record relies on: `args.py` holds its fleet's spec
model (`<Key>FleetArgs`), `checks.py` its rules (`check_fleet`), `placement.py` what stays Pending
(`check_placement`) where it places pods; all three take (fleet, region, catalog). The record is
cheap to import: each of those modules, and the platform's components and provider SDK, load when
called, so a stack loads only the clouds it uses."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpufleet.platform.model import Violation


@dataclass(frozen=True)
class Platform:
    """One platform: its config key (`gpufleet:<key>`, and the summary's `platform`), the key's
    documentation, `build(fleet, region, opts, catalog)` (its components; opts carry the stack's AWS
    provider where `aws`; returns the stack outputs it exports) and `summary(fleet, region, catalog)` (its
    part of the accelerator summary: `groups`, `workloads`, keys of its own); `aws` when its
    resources go through the stack's AWS provider and region; `placement` when it places pods."""

    key: str
    description: str
    build: Callable[[Any, str | None, Any, Any], dict[str, Any]]
    summary: Callable[[Any, str | None, Any], dict[str, Any]]
    aws: bool = False
    placement: bool = False

    def _module(self, name: str):
        return importlib.import_module(f"gpufleet.{self.key}.{name}")

    def model(self) -> type:
        return getattr(self._module("args"), f"{self.key.capitalize()}FleetArgs")

    def checks(self, fleet, region: str | None, cat) -> list[Violation]:
        return list(self._module("checks").check_fleet(fleet, region, cat))

    def pending(self, fleet, region: str | None, cat) -> list[Violation]:
        """What stays Pending: judged on a fleet whose every other rule holds."""
        return list(self._module("placement").check_placement(fleet, region, cat)) if self.placement else []
