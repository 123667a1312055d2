"""Every change gpufleet makes to the internals of the Pulumi SDK, the provider SDKs, asyncio and
pulumi_policy, and the one gate they pass through.

The offline engine runs programs under the SDK's mocks, where some of the SDK's work is wasted or
wrong: each patch here removes one such cost, or mends one gap, for the run of a preview only (and
the policy pack's process). A patch names the versions of the packages it was written and tested
for. `applied()` enters the patches whose packages are all within their range, and runs the SDK as
it is for the others, saying so on stderr once per process: slower, never a different plan
(tests/engine/test_patches.py previews every shipped stack both ways). `GPUFLEET_SDK_PATCHES=off`
turns off every speed patch; a mend (the stack's config read as the protocol sends it) stays. Nothing is patched at import time: `pulumi up` under the Pulumi CLI runs the
SDKs as they are, and so does any program that imports gpufleet's components.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata

# The versions the patches were tested at: the floors pyproject.toml allows (tests/floors/) up to
# the pinned set (constraints.txt). A minor release outside these is not assumed to be the same.
PULUMI = ("3.260", "3.272")
PULUMI_POLICY = ("1.21", "1.21")
PROVIDER_SDKS = {
    "pulumi-aws": ("7.16", "7.51"),
    "pulumi-kubernetes": ("4.34", "4.34"),
    "pulumi-gcp": ("10.0", "10.2"),
    "pulumi-azure": ("6.30", "6.40"),
    "pulumi-alicloud": ("4.0", "4.0"),
}


@dataclass(frozen=True)
class Patch:
    """One patch: what it changes and why, the package versions it was written for (distribution ->
    lowest and highest minor release tested), `module.function`, a context manager that applies it
    and undoes it on exit (it may yield a value the engine uses, or False when it finds the
    internals it expects missing), the keywords that function takes, and the upstream report it
    works around where one exists."""

    name: str
    why: str
    written_for: dict[str, tuple[str, str]]
    apply: str
    takes: tuple[str, ...] = ()
    upstream: str = ""
    # Distributions the patch changes only where they are installed (a provider SDK that a program's
    # own interpreter lacks is never imported, so never patched); the others it needs.
    if_installed: frozenset[str] = frozenset()
    # It changes only the SDK's own work, not how gpufleet's in-process monitor runs it: a program
    # of one's own gets it too, in its own interpreter (HOSTED).
    hosted: bool = False
    # A speed patch changes what a preview costs, never what it finds: the off switch and the version
    # range apply to it. A mend makes the SDK do what its protocol says it does; it applies wherever
    # its own check finds the internals it mends (and says so where it does not).
    speed: bool = True

    def outside(self) -> str | None:
        """Why this patch does not apply to the installed packages (None: it does)."""
        for dist, (low, high) in self.written_for.items():
            found = installed(dist)
            if found is None and dist in self.if_installed:
                continue
            if found is None or not _minor(low) <= _minor(found) <= _minor(high):
                return f"{dist} {found or 'missing'} (written for {low} to {high})"
        return None

    def context(self, **kwargs) -> contextlib.AbstractContextManager:
        module, _, function = self.apply.rpartition(".")
        return getattr(importlib.import_module(f"{__name__}.{module}"), function)(**kwargs)


ENGINE = (
    Patch(
        "lean-imports",
        "a provider SDK's service package imports every module it has; a program uses a dozen (cold start)",
        {"pulumi": PULUMI, **PROVIDER_SDKS},
        "lean_imports.lean_imports",
        upstream="https://github.com/pulumi/pulumi/pull/6827 (subpackages only; a service package's own modules stay eager)",
        if_installed=frozenset(PROVIDER_SDKS),
        hosted=True,
    ),
    Patch(
        "lazy-outputs",
        "an Output with four futures for every output property of every resource, read or not (memory)",
        {"pulumi": PULUMI},
        "lazy_outputs.lazy_outputs",
        upstream="https://github.com/pulumi/pulumi/issues/16055",
        hosted=True,
    ),
    Patch(
        "stack-traces",
        "a walk of the Python stack per registration, for a source position gpufleet's monitors never read (time)",
        {"pulumi": PULUMI},
        "stack_traces.no_stack_traces",
        hosted=True,
    ),
    Patch(
        "debug-logs",
        "a blocking round trip to the engine for every debug message, which gpufleet's monitors drop as the CLI does without --debug (time)",
        {"pulumi": PULUMI},
        "debug_logs.no_debug_logs",
        hosted=True,
    ),
    Patch(
        "paced-registration",
        "registrations wait for the program's body to yield; alias and URN Outputs nobody reads (memory, time)",
        {"pulumi": PULUMI},
        "paced_registration.paced_registration",
        takes=("monitor_features",),
        upstream="https://github.com/pulumi/pulumi/issues/11064 (the aliases)",
    ),
)
# What a program of one's own gets in its own interpreter, whose SDK may be another version than
# gpufleet's: engine/program_exec.py loads this room there by path, under a name of its own, and each
# patch passes the same gate against the packages that interpreter has.
HOSTED = tuple(patch for patch in ENGINE if patch.hosted)
PACK = (
    Patch(
        "servicer-memo",
        "pulumi_policy converts a resource's properties again for every policy of every request (time)",
        {"pulumi-policy": PULUMI_POLICY, "pulumi": PULUMI},
        "servicer_memo.servicer_memo",
        upstream="https://github.com/pulumi/pulumi/issues/6500 (policy packs' cost, in general)",
    ),
    Patch(
        "stack-once",
        "pulumi_policy builds every resource of the stack again for every stack policy (time, memory)",
        {"pulumi-policy": PULUMI_POLICY, "pulumi": PULUMI},
        "stack_once.stack_once",
    ),
    Patch(
        "analyze-once",
        "pulumi_policy calls every resource policy on every resource, most only to hear it is of another type (time)",
        {"pulumi-policy": PULUMI_POLICY, "pulumi": PULUMI},
        "analyze_once.analyze_once",
    ),
    Patch(
        "stack-config",
        "pulumi_policy reads the stack config only from PULUMI_CONFIG, which a large stack's config overflows",
        {"pulumi-policy": PULUMI_POLICY, "pulumi": PULUMI},
        "stack_config.stack_config",
        upstream="https://github.com/pulumi/pulumi/issues/20402",
        speed=False,
    ),
)


def enabled() -> bool:
    return os.environ.get("GPUFLEET_SDK_PATCHES", "on") != "off"


@functools.cache
def installed(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2])


_SAID: set[str] = set()


def _say_once(patch: Patch, reason: str, write: Callable[[str], object]) -> None:
    if patch.name not in _SAID:
        _SAID.add(patch.name)
        write(f"gpufleet: the SDK runs as it is for {patch.name} ({patch.why}): {reason}\n")


@contextlib.contextmanager
def applied(patches: tuple[Patch, ...], write: Callable[[str], object] | None = None, **kwargs) -> Iterator[dict[str, object]]:
    """Within: every patch that fits the installed packages, applied (each gets the keywords its
    context manager takes). Yields {patch name: what it yielded} for the patches applied."""
    active: dict[str, object] = {}
    with contextlib.ExitStack() as stack:
        for patch in patches:
            if patch.speed and not enabled():
                continue
            reason = patch.outside() if patch.speed else None
            if reason is None:
                value = stack.enter_context(patch.context(**{k: kwargs[k] for k in patch.takes}))
                if value is not False:
                    active[patch.name] = value
                    continue
                reason = "its internals are not the ones it was written for"
            _say_once(patch, reason, write or sys.stderr.write)
        yield active
