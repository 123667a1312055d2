"""Docs live at the declaration: every spec field is described, and the generated docs are current."""

from __future__ import annotations

import re

from pydantic import BaseModel

from gpufleet.cli import docs
from gpufleet.stack.spec import FleetSpec


def _fields(model: type[BaseModel], seen=None):
    seen = seen if seen is not None else set()
    if model in seen:
        return
    seen.add(model)
    for name, info in model.model_fields.items():
        yield model, name, info
        for sub in docs._models(info.annotation):
            yield from _fields(sub, seen)


def test_every_field_has_a_description_that_does_not_restate_its_default():
    fields = list(_fields(FleetSpec))
    assert len(fields) > 20
    for model, name, info in fields:
        assert info.description, f"{model.__name__}.{name} has no description"
        assert not re.search(r"\bdefaults?\b", info.description, re.I), f"{model.__name__}.{name} states a default"


def test_stack_file_reference_is_generated_from_the_models():
    assert docs.DOC.read_text() == docs.render(), "run `python -m gpufleet.cli.docs`"


def test_schema_accepts_config_keys_of_the_models():
    from gpufleet.stack.schema import stack_file_schema

    schema = stack_file_schema()
    props = schema["properties"]["config"]["properties"]
    assert set(props) == {"gpufleet:region", "gpufleet:ecs", "gpufleet:eks", "gpufleet:ack", "gpufleet:gke", "gpufleet:aks"}
    assert "rootVolumeGiB" in schema["$defs"]["CapacityProviderArgs"]["properties"]


def test_library_reference_is_generated_and_every_export_is_documented():
    from gpufleet import library

    assert docs.LIBRARY_DOC.read_text() == docs.render_library(), "run `python -m gpufleet.cli.docs`"
    for name in library.__all__:
        assert (getattr(library, name).__doc__ or "").strip(), f"gpufleet.library.{name} has no docstring"
        assert f"## `{name}` (" in docs.LIBRARY_DOC.read_text()
