"""What two previews show that is no change: an auto-name's new random suffix (the providers' forms,
curated `autonaming`), read by `gpufleet diff` and the pack's update policies alike."""

from __future__ import annotations

import pytest

from gpufleet.plans.replacement import noise as is_noise


@pytest.mark.parametrize(
    ("before", "after", "noise"),
    [
        ("svc-32c8f2c", "svc-4936161", True),  # a bridged provider's auto-name, new on each create
        ("web-1a2b3c4d", "web-9f8e7d6c", True),  # a Kubernetes object's
        ("web-1a2b3c4", "web-9f8e7d6c", False),  # not the same provider's form
        ("svc-32c8f2c", "api-4936161", False),  # another logical name: a rename
        ("svc-32c8f2c", "svc-prod", False),
    ],
)
def test_an_auto_name_s_new_suffix_is_no_change(before, after, noise):
    assert is_noise(before, after) is noise
