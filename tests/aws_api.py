"""The AWS request walk the tests use is the product's (components/catalog/aws_api.py)."""

from gpufleet.components.catalog.aws_api import CHECKED_TYPES, Request, to_request  # noqa: F401
