"""`python -m gpufleet.cli`: the `gpufleet` command."""

import sys

from gpufleet.cli.main import main

sys.exit(main())
