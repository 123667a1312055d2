"""The value kinds the API models read."""

from __future__ import annotations

import pytest

from gpufleet.apis.values import decimal


@pytest.mark.parametrize("text, count", [("0", 0), ("12", 12), ("007", 7), ("²", None), ("٣", None), ("1.5", None), ("-1", None), ("", None), (3, None), (None, None)])
def test_a_count_is_ascii_decimal_digits(text, count):
    assert decimal(text) == count
