"""Values of the Pulumi wire as a JSON plan holds them. The engine decodes what a program registers
with this, and the analyzer client the properties a pack's remediation returns, so both read alike."""

from __future__ import annotations

from pulumi.output import Unknown

from gpufleet.components.catalog.tokens import UNKNOWN

# The protocol's signature key and the signature of a secret (pulumi sdk/go/common/resource/sig/sig.go,
# the same strings pulumi.runtime.rpc uses; tests/engine/test_wire.py holds the two equal).
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


def json_value(value):
    """A wire value as JSON: integral floats back to ints (the wire has only doubles), unknowns as the
    engine's marker, secrets unwrapped."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return json_value(value.get("value"))
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Unknown) or value == UNKNOWN:
        return UNKNOWN
    return value
