"""The Pulumi program (Pulumi.yaml): the stack-file program of the installed gpufleet."""

from gpufleet.stack.program import main

main()
