"""The secure defaults of a launch template, written once: IMDSv2 only (the hop limit the args
chose) and encrypted gp3 volumes that go with their instance."""

from __future__ import annotations


def metadata_options(hop_limit: int) -> dict:
    return {"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": hop_limit}


def ebs(size_gib: int | None) -> dict:
    """An encrypted gp3 volume deleted with its instance; without a size, its snapshot's."""
    return {"volume_type": "gp3", "encrypted": "true", "delete_on_termination": "true", **({"volume_size": size_gib} if size_gib else {})}
