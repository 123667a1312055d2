"""Resources in the analyzer protocol's messages (Analyze and AnalyzeStack carry the same fields)."""

from __future__ import annotations

from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2


def schema(policy) -> dict:
    schema = policy.configSchema
    if not schema.properties and not schema.required:
        return {}
    out: dict = {"properties": json_format.MessageToDict(schema.properties)}
    if schema.required:
        out["required"] = list(schema.required)
    return out


def struct(value: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(value)
    return s


def options(resource: dict) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(parent=resource.get("parent") or "")


def fields(resource: dict, provider: analyzer_pb2.AnalyzerProviderResource | None) -> dict:
    """What Analyze and AnalyzeStack both carry of a resource."""
    return {
        "type": resource["type"],
        "urn": resource["urn"],
        "name": resource["name"],
        "properties": struct(resource.get("inputs") or {}),
        "options": options(resource),
        "provider": provider,
    }
