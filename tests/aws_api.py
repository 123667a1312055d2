"""The AWS request walk the tests use is the product's (components/apis/aws.py)."""

from gpufleet.components.apis.aws import CHECKED_TYPES, Request, to_request  # noqa: F401
