"""A pack that dies in the middle of a run: the first task definition it sees kills its process."""

import os
import sys

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def _die(args, report):
    if args.resource_type == "aws:ecs/taskDefinition:TaskDefinition":
        print("crashing on purpose at " + args.urn, file=sys.stderr, flush=True)
        os._exit(7)


PolicyPack("crashing", [ResourceValidationPolicy("die-on-task-definition", "Exits mid-run.", _die, EnforcementLevel.MANDATORY)])
