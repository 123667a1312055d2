"""Entry point of the Pulumi program (Pulumi.yaml `main: infra/`)."""

from infra.program import main

main()
