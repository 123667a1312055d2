"""Version strings as numbers: the one reading every rule compares versions by."""

from __future__ import annotations

import re

_LEADING = re.compile(r"v?(\d+(?:\.\d+)*)")


def version_tuple(text: object) -> tuple[int, ...] | None:
    """The leading dotted numbers of a version: "1.34", "v1.34.2" and "1.34.2-eks.3" as (1, 34[, 2]);
    None when it does not start with one ("latest", "", not a string), which callers leave unjudged."""
    match = _LEADING.match(text) if isinstance(text, str) else None
    return tuple(int(n) for n in match[1].split(".")) if match else None
