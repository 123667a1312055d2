"""The stack's config reaches the pack in ConfigureStack, as the analyzer protocol carries it.

pulumi_policy reads the stack config only from the `PULUMI_CONFIG` environment variable and ignores
the `config` map of `AnalyzerStackConfigureRequest`. An environment variable is bounded (Linux: 128
KiB per string), so a large stack's config cannot travel that way: starting the pack failed with
"Argument list too long". `install()` makes ConfigureStack apply the request's config as the
environment's would be (`pulumi.Config` reads it), so a client may leave the variable out.
"""

from __future__ import annotations

import contextlib

import pulumi.runtime
import pulumi_policy.policy as _policy


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


def install() -> None:
    """Wrap the servicer's ConfigureStack (once; nothing when pulumi_policy has none to wrap)."""
    servicer = getattr(_policy, "_PolicyAnalyzerServicer", None)
    original = getattr(servicer, "ConfigureStack", None)
    if servicer is None or original is None or getattr(original, "__wrapped__", None) is not None:
        return

    def configure_stack(self, request, context):
        for key, value in request.config.items():
            pulumi.runtime.set_config(key, value)
        return original(self, request, context)

    configure_stack.__wrapped__ = original  # type: ignore[attr-defined]
    servicer.ConfigureStack = configure_stack
