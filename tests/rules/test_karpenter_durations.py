"""src/gpufleet/rules/karpenter.py: Go's time.ParseDuration, which Karpenter parses every NodePool
duration with (pkg/apis/v1/duration.go @v1.14.1 L49-L65), translated with its int64 bound. The rows
are Go's own tests (golang/go src/time/time_test.go, parseDurationTests and parseDurationErrorTests:
the overflow rows and the long fractions)."""

from __future__ import annotations

import pytest

from gpufleet.rules import karpenter as karpenter_rules

NS, US, MS, S, M, H = 1, 10**3, 10**6, 10**9, 60 * 10**9, 3600 * 10**9


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("0", 0), ("5s", 5 * S), ("30s", 30 * S), ("1478s", 1478 * S), ("-5s", -5 * S), ("+5s", 5 * S), ("-0", 0),
        ("5.6s", 5 * S + 600 * MS), ("5.s", 5 * S), (".5s", 500 * MS), ("1.004s", 1 * S + 4 * MS),
        ("10ns", 10), ("11us", 11 * US), ("12µs", 12 * US), ("12μs", 12 * US), ("13ms", 13 * MS), ("14s", 14 * S),
        ("15m", 15 * M), ("16h", 16 * H), ("3h30m", 3 * H + 30 * M), ("10.5s4m", 4 * M + 10 * S + 500 * MS),
        ("1h2m3s4ms5us6ns", H + 2 * M + 3 * S + 4 * MS + 5 * US + 6),
        ("9223372036854775807ns", 2**63 - 1), ("9223372036854775.807us", 2**63 - 1), ("9223372036s854ms775us807ns", 2**63 - 1),
        ("-9223372036854775808ns", -(2**63)), ("-9223372036854775807ns", -(2**63) + 1),
        ("0.100000000000000000000h", 6 * M), ("0.830103483285477580700h", 49 * M + 48 * S + 372539827),
        ("2562047h47m16.854775807s", 2**63 - 1),  # the largest: what the finding names
    ],
)
def test_what_go_reads(text, nanoseconds):
    assert karpenter_rules.go_duration(text) == nanoseconds


@pytest.mark.parametrize(
    "text",
    [
        "", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\ufffd",
        "9223372036854775810ns", "9223372036854775808ns", "-9223372036854775809ns", "9223372036854776us", "3000000h",
        "9223372036854775.808us", "9223372036854ms775us808ns",
        "2562048h", "99999999999999999999s", "1" * 100_000 + "s",  # the issue's, and a digit run far past 2^63
    ],
)
def test_what_go_refuses(text):
    assert karpenter_rules.go_duration(text) is None


def test_the_rule_words_the_bound_and_passes_never():
    assert karpenter_rules.duration_problem("Never") is None
    assert karpenter_rules.duration_problem("720h") is None
    assert karpenter_rules.duration_problem("2562048h") == (
        "'2562048h' is no duration Go's time.ParseDuration reads (at most 2562047h47m16.854775807s, an int64 of nanoseconds): "
        "Karpenter cannot read the NodePool"
    )
