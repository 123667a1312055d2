"""The simulators: kube-scheduler's filters over node groups, ECS placement over capacity providers,
and what one node or instance of a type offers. Plain functions over the catalog and the rules."""

import os


def enabled() -> bool:
    """GPUFLEET_PLACEMENT=off skips the simulation everywhere (spec, plan, pack): the bench's baseline."""
    return os.environ.get("GPUFLEET_PLACEMENT") != "off"
