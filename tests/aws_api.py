"""The AWS request walk the tests use is the product's (src/gpufleet/apis/aws.py)."""

from gpufleet.apis.aws import CHECKED_TYPES, Request, to_request  # noqa: F401
