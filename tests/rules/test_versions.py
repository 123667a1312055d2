"""rules/versions.py: the one reading of a version string."""

from __future__ import annotations

import pytest

from gpufleet.rules.versions import version_tuple


@pytest.mark.parametrize(
    "text, numbers",
    [
        ("1.34", (1, 34)),
        ("v1.34.2", (1, 34, 2)),
        ("1.34.2-eks.3", (1, 34, 2)),
        ("1.24.6-aliyun.1", (1, 24, 6)),
        ("1.35-eks-abc", (1, 35)),
        ("1.95.0", (1, 95, 0)),
        ("latest", None),
        ("", None),
        (None, None),
        (1.34, None),
    ],
)
def test_leading_numbers_or_none(text, numbers):
    assert version_tuple(text) == numbers


def test_numbers_compare_as_numbers():
    assert (version_tuple("1.9") or ()) < (version_tuple("1.10") or ())
