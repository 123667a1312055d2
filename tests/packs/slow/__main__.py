"""A pack that never answers Analyze in time."""

import time

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def _hang(args, report):
    time.sleep(60)


PolicyPack("slow", [ResourceValidationPolicy("hang", "Sleeps through every call.", _hang, EnforcementLevel.MANDATORY)])
