"""JSON Schema of a stack file, generated from the pydantic models (field docs as descriptions)."""

from __future__ import annotations

from gpufleet.stack.spec import NAMESPACE, FleetSpec


def stack_file_schema() -> dict:
    spec = FleetSpec.model_json_schema(by_alias=True)
    defs = spec.pop("$defs", {})
    config_props = {f"{NAMESPACE}:{k}": v for k, v in spec["properties"].items()}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gpufleet stack file (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "required": ["config"],
        "properties": {
            "config": {
                "type": "object",
                "description": spec.get("description", ""),
                "properties": config_props,
                "required": [f"{NAMESPACE}:{k}" for k in spec.get("required", [])],
                # Other namespaces (aws:, pulumi:) belong to their providers; only gpufleet: is checked here.
                "patternProperties": {f"^(?!{NAMESPACE}:)": {}},
                "additionalProperties": False,
            }
        },
        "$defs": defs,
    }
