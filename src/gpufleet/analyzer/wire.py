"""Resources in the analyzer protocol's messages (Analyze and AnalyzeStack carry the same fields),
from the plan's typed resources (plans.index.from_plan)."""

from __future__ import annotations

from collections.abc import Mapping

from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2

from gpufleet.plans.index import Resource


def schema(policy) -> dict:
    schema = policy.configSchema
    if not schema.properties and not schema.required:
        return {}
    out: dict = {"properties": json_format.MessageToDict(schema.properties)}
    if schema.required:
        out["required"] = list(schema.required)
    return out


def struct(value: Mapping) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(value)
    return s


def options(resource: Resource) -> analyzer_pb2.AnalyzerResourceOptions:
    return analyzer_pb2.AnalyzerResourceOptions(parent=resource.parent or "")


def provider_resource(resource: Resource) -> analyzer_pb2.AnalyzerProviderResource:
    """A provider resource as the resources it serves carry it."""
    return analyzer_pb2.AnalyzerProviderResource(
        type=resource.type, urn=resource.urn, name=resource.name, properties=struct(resource.props)
    )


def fields(resource: Resource, provider: analyzer_pb2.AnalyzerProviderResource | None) -> dict:
    """What Analyze and AnalyzeStack both carry of a resource."""
    return {
        "type": resource.type,
        "urn": resource.urn,
        "name": resource.name,
        "properties": struct(resource.props),
        "options": options(resource),
        "provider": provider,
    }


def links(resource: Resource) -> analyzer_pb2.AnalyzerResource:
    """What AnalyzeStack carries of a resource beyond Analyze's fields: its parent and dependencies."""
    message = analyzer_pb2.AnalyzerResource(parent=resource.parent or "", dependencies=resource.dependencies)
    for key, urns in resource.deps.items():
        message.propertyDependencies[key].urns.extend(urns)
    return message
