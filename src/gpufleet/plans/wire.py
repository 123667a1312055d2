"""Values of the Pulumi wire as a JSON plan holds them. The engine decodes what a program registers
with this, and the analyzer client the properties a pack's remediation returns, so both read alike."""

from __future__ import annotations

from pulumi.output import Unknown

from gpufleet.catalog.tokens import UNKNOWN

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


# The other signatures a program's SDK may send (sdk/go/common/resource/sig/sig.go).
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"


def struct_value(struct) -> dict:
    """A protobuf Struct a program sent over the wire, as the JSON a plan holds: as json_value reads
    the SDK's own decoding, and a resource reference read as the engine passes it to a provider (the
    resource's id, or its URN for a component)."""
    from google.protobuf.json_format import MessageToDict

    return _unsigned(MessageToDict(struct))


def _unsigned(value):
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig == RESOURCE_SIG:
            if "id" in value:
                return value["id"] if value["id"] not in ("", None) else UNKNOWN
            return value.get("urn", UNKNOWN)
        if sig == OUTPUT_SIG:
            return _unsigned(value["value"]) if "value" in value else UNKNOWN
        if sig == SECRET_SIG:
            return _unsigned(value.get("value"))
        # A null member is no member, as the SDK's own decoding reads it.
        return {k: _unsigned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_unsigned(v) for v in value]
    return json_value(value)


def to_struct(value: dict):
    """JSON (UNKNOWN where a value is known only after apply) as a protobuf Struct for a program's SDK."""
    from google.protobuf import struct_pb2

    struct = struct_pb2.Struct()
    struct.update(value)
    return struct
