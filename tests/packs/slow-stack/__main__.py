"""A pack whose stack policy takes three seconds over any stack."""

import time

from pulumi_policy import EnforcementLevel, PolicyPack, StackValidationPolicy


def _slow(args, report):
    time.sleep(3)


PolicyPack("slow-stack", [StackValidationPolicy("slow", "Sleeps three seconds over the stack.", _slow, EnforcementLevel.MANDATORY)])
