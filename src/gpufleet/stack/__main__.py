"""The stack-file program as the offline engine runs it (gpufleet.engine.runtime.PROGRAM); the
Pulumi CLI runs the repository's `__main__.py`, which calls the same `main`."""

from gpufleet.stack.program import main

main()
