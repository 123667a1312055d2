"""src/gpufleet/apis/quantity.py: Kubernetes' quantity grammar with its int64 bound, in linear time.

The valid cases are rows of TestQuantityParse's table (kubernetes/apimachinery @v0.35.0
pkg/api/resource/quantity_test.go L272-L380), kept as upstream writes them, decQuantity(mantissa,
exponent): the expected count is ceil(mantissa * 10^exponent), as Value() and MilliValue() read it."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import pytest

from gpufleet.apis.quantity import INT64_MAX, OutOfRange, QuantityError, quantity, scaled_value

# (input, mantissa, exponent) from the upstream table; the binary rows as decQuantity(n, 0, BinarySI).
UPSTREAM = [
    ("0", 0, 0), ("0n", 0, 0), ("0u", 0, 0), ("0m", 0, 0), ("0Ki", 0, 0), ("0k", 0, 0), ("0Mi", 0, 0), ("0M", 0, 0),
    ("0Gi", 0, 0), ("0G", 0, 0), ("0Ti", 0, 0), ("0T", 0, 0),
    ("1", 1, 0),
    ("1Ki", 1024, 0), ("8Ki", 8 * 1024, 0), ("7Mi", 7 * 1024**2, 0), ("6Gi", 6 * 1024**3, 0), ("5Ti", 5 * 1024**4, 0),
    ("4Pi", 4 * 1024**5, 0), ("3Ei", 3 * 1024**6, 0), ("10Ti", 10 * 1024**4, 0), ("100Ti", 100 * 1024**4, 0),
    ("5n", 5, -9), ("4u", 4, -6), ("3m", 3, -3), ("9", 9, 0), ("8k", 8, 3), ("50k", 5, 4), ("7M", 7, 6), ("6G", 6, 9),
    ("5T", 5, 12), ("40T", 4, 13), ("300T", 3, 14), ("2P", 2, 15), ("1E", 1, 18),
    ("1E-3", 1, -3), ("1e3", 1, 3), ("1E6", 1, 6), ("1e9", 1, 9), ("1E12", 1, 12), ("1e15", 1, 15), ("1E18", 1, 18),
    ("1e14", 1, 14), ("1e13", 1, 13), ("100.035k", 100035, 0),
    ("0.001", 1, -3), ("0.0005k", 5, -1), ("0.005", 5, -3), ("0.05", 5, -2), ("0.5", 5, -1), ("0.00050k", 5, -1),
    ("0.00500", 5, -3), ("0.05000", 5, -2), ("0.50000", 5, -1), ("0.5e0", 5, -1), ("0.5e-1", 5, -2), ("0.5e-2", 5, -3),
    ("10.035M", 10035, 3),
    ("1.2e3", 12, 2), ("1.3E+6", 13, 5), ("1.40e9", 14, 8), ("1.53E12", 153, 10), ("1.6e15", 16, 14), ("1.7E18", 17, 17),
    ("9.01", 901, -2), ("8.1k", 81, 2), ("7.123456M", 7123456, 0), ("6.987654321G", 6987654321, 0), ("5.444T", 5444, 9),
    ("40.1T", 401, 11), ("300.2T", 3002, 11), ("2.5P", 25, 14), ("1.01E", 101, 16),
    ("3.001n", 4, -9), ("1.1E-9", 2, -9), ("0.0000000001", 1, -9), ("0.0000000005", 1, -9), ("0.00000000050", 1, -9),
    ("0.5e-9", 1, -9), ("0.9n", 1, -9), ("0.00000012345", 124, -9), ("0.00000012354", 124, -9),
    ("100.035Ki", 10243584, -2), ("0.5Mi", 524288, 0), ("0.05Gi", 536870912, -1), ("0.025Ti", 274877906944, -1),
    ("0.000000000001Ki", 2, -9), (".001", 1, -3), (".0001k", 100, -3), ("1.", 1, 0), ("1.G", 1, 9),
]


def _ceil(mantissa: int, exponent: int, scale: int = 0) -> int:
    return math.ceil(Fraction(mantissa) * Fraction(10) ** (exponent + scale))


@pytest.mark.parametrize(("text", "mantissa", "exponent"), UPSTREAM)
def test_the_upstream_table_in_base_units_and_thousandths(text, mantissa, exponent):
    assert scaled_value(text) == _ceil(mantissa, exponent)
    if _ceil(mantissa, exponent, 3) <= INT64_MAX:
        assert scaled_value(text, 3) == _ceil(mantissa, exponent, 3)
    # The table's negative and explicit-plus runs (quantity_test.go L460-L505): away from zero.
    assert scaled_value("-" + text) == -_ceil(mantissa, exponent)
    assert scaled_value("+" + text) == _ceil(mantissa, exponent)


def test_what_kubernetes_caps_or_lets_wrap_is_refused_by_name():
    """The table's two capped rows ("9Ei", "9223372036854775807Ki": quantity.go L377-L381 caps them
    at 2^63-1) and the decimal amounts that Value() lets overflow (L826; the table's "12E") are
    refused, naming the value."""
    for text in ("12E", "9Ei", "9223372036854775807Ki", "9223372036854775808", "1e400", "9" * 400, "1e999999999", 2**64, 1e300):
        with pytest.raises(OutOfRange, match="out of range"):
            quantity("memory", text)
    assert quantity("memory", "9223372036854775807") == INT64_MAX
    with pytest.raises(OutOfRange, match="thousandths"):
        quantity("cpu", "9223372036854775807")  # MilliValue's int64 is a thousandth of it
    with pytest.raises(OutOfRange, match="an integer of 16610 bits"):
        quantity("memory", 10**5000)  # past what Python prints: named by its size


def test_the_bound_is_judged_before_any_power_is_formed():
    """1e999999999 once computed 10**999999999; a million digits, a huge negative exponent and
    an exponent past an int64 each answer at once. Bounded by work, not by a clock: each is one
    pass over its text, which a generous ceiling on a shared machine still tells from a hang."""
    cases = ["1e999999999", "1e-999999999", "9" * 1_000_000, "0." + "0" * 1_000_000 + "1", "1e" + "9" * 10_000, "1.5e2147483647Ki"]
    started = time.process_time()
    answers = []
    for text in cases:
        try:
            answers.append(scaled_value(text))
        except QuantityError as err:
            answers.append(type(err).__name__)
    assert answers == ["OutOfRange", 1, "OutOfRange", 1, "QuantityError", "QuantityError"]
    assert time.process_time() - started < 5


@pytest.mark.parametrize("bad", ["", ".", "+", "-", "1e", "1 Gi", "1Kb", "Gi", "--1", "1e1.5", "١", "1ki", "1EB", True, None, [], float("nan")])
def test_what_is_no_quantity(bad):
    with pytest.raises(QuantityError, match="is not a quantity"):
        scaled_value(bad)


def test_an_exponent_go_would_wrap_is_refused():
    """suffix.go L189-L195 reads the exponent as an int64 and keeps an int32 of it: 1e4294967296 wraps to 1e0 there."""
    with pytest.raises(OutOfRange, match="beyond an int32"):
        scaled_value("1e4294967296")
