"""The stack's config reaches the pack in ConfigureStack, as the analyzer protocol carries it, and a
pack that judges stack after stack judges each as the one it was told.

pulumi_policy reads the stack config only from the `PULUMI_CONFIG` environment variable and ignores
the `config` map of `AnalyzerStackConfigureRequest`. An environment variable is bounded (Linux: 128
KiB per string), so a large stack's config cannot travel that way: starting the pack failed with
"Argument list too long". `install()` makes ConfigureStack apply the request's config as the
environment's would be (`pulumi.Config` reads it), so a client may leave the variable out.

The request names its stack too. `gpufleet preview --all` keeps one pack process for many stacks
(src/gpufleet/analyzer/pack_process.py), so a ConfigureStack that names another stack than the one
before also sets the environment the CLI would have started the pack with for that stack
(project, stack, dry run: pulumi_policy 1.21.0 applies them before every request, policy.py
`_configure_runtime_settings` L1421-L1445; its own ConfigureStack, L1285, keeps only the tags),
keeps the request's config alone (no key of the stack before), and calls what the pack registered
with `per_stack` to forget that stack (memos, the stack judged last).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

import pulumi.runtime
import pulumi.runtime.config as _config
import pulumi_policy.policy as _policy

# What the pack remembers of one stack, forgotten when the next is configured.
_FORGET: list[Callable[[], object]] = []


def per_stack(forget: Callable[[], object]) -> None:
    """`forget()` at every ConfigureStack: the pack's state of the stack before ends there."""
    _FORGET.append(forget)


@contextlib.contextmanager
def stack_config():
    """Within: ConfigureStack applies the request's config (pulumi_policy's own afterwards)."""
    servicer = getattr(_policy, "_PolicyAnalyzerServicer", None)
    original = servicer.__dict__.get("ConfigureStack") if servicer else None
    install()
    try:
        yield original is not None
    finally:
        if original is not None:
            servicer.ConfigureStack = original


def _this_stack(request) -> None:
    """Another stack than the one before: the process as the CLI starts a pack for it, its
    environment and its config alone."""
    config = dict(request.config)
    # The stack the process was started for (always, under the Pulumi CLI) is configured as before.
    if request.stack and (request.project, request.stack) != (os.environ.get("PULUMI_PROJECT"), os.environ.get("PULUMI_STACK")):
        os.environ.update(
            PULUMI_PROJECT=request.project,
            PULUMI_STACK=request.stack,
            PULUMI_DRY_RUN="true" if request.dry_run else "false",
        )
        # The request's config is the stack's whole config: in the map alone, not the variable
        # (pulumi_policy would parse a large stack's again before every request, and a key the
        # variable held that this stack lacks would read as set).
        os.environ.pop("PULUMI_CONFIG", None)
        if request.organization:
            os.environ["PULUMI_ORGANIZATION"] = request.organization
        # The servicer's threads share one map: CONFIG's default, which set_config fills in place
        # where no context set its own (pulumi 3.272.0 runtime/config.py L26, L32-L36).
        _config.CONFIG.get().clear()
        for forget in _FORGET:
            forget()
    for key, value in config.items():
        pulumi.runtime.set_config(key, value)


def install() -> None:
    """Wrap the servicer's ConfigureStack (once; nothing when pulumi_policy has none to wrap)."""
    servicer = getattr(_policy, "_PolicyAnalyzerServicer", None)
    original = getattr(servicer, "ConfigureStack", None)
    if servicer is None or original is None or getattr(original, "__wrapped__", None) is not None:
        return

    def configure_stack(self, request, context):
        _this_stack(request)
        return original(self, request, context)

    configure_stack.__wrapped__ = original  # type: ignore[attr-defined]
    servicer.ConfigureStack = configure_stack
