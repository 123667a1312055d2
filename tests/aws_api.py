"""The AWS request walk the tests use is the product's (src/gpufleet/apis/aws.py)."""

from gpufleet.apis.aws import CHECKED_TYPES, Request, to_request  # noqa: F401
from gpufleet.plans.index import from_plan


def plan_request(entry: dict, strict: bool = True) -> Request:
    """The request of a plan's resource, read through the plan view as the product reads it."""
    [resource] = from_plan({"resources": [entry]})
    return to_request(resource.type, resource.props, strict)
