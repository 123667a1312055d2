"""Entry point of the Pulumi program (Pulumi.yaml `main: infra/`; gpufleet must be installed in the
project's virtualenv, as the README's set-up does)."""

from gpufleet.program import main

main()
