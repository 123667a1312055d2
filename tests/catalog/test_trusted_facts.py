"""The curated facts built without validation (the policy pack's start) are the validated ones."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from gpufleet.catalog import catalog, facts


def test_the_trusted_facts_are_the_checked_facts_value_for_value():
    document = catalog.curated_facts()
    checked = facts.checked(document, "curated.yaml")
    trusted = facts.trusted(document)
    assert trusted == checked
    # repr names each nested model and tells 4 from 4.0, which == does not.
    assert repr(trusted) == repr(checked)
    assert trusted.model_fields_set == checked.model_fields_set
    assert trusted.karpenter.allocatable.model_fields_set == checked.karpenter.allocatable.model_fields_set


def test_a_process_that_trusts_the_shipped_file_loads_the_same_catalog_without_the_check(monkeypatch):
    validated = catalog.load.__wrapped__()

    def refused(*_):
        raise AssertionError("the shipped facts were validated again")

    monkeypatch.setattr(catalog, "checked", refused)
    monkeypatch.setitem(catalog._TRUSTED, "shipped", True)
    assert catalog.load.__wrapped__() == validated


@pytest.mark.parametrize(
    ("annotation", "value"),
    [(list[float], [4, 2.5]), (dict[str, float] | None, {"a": 1}), (float, 0), (list[int], [1, 2]), (bool, True), (str | None, None)],
)
def test_each_value_is_what_strict_validation_makes_of_it(annotation, value):
    # The shipped file holds no whole number in a float field today; a fact written `margin: 1` would be.
    assert repr(facts._value(annotation, value)) == repr(TypeAdapter(annotation).validate_python(value, strict=True))
