"""`python -m gpufleet.components.catalog.generate`: the generator's command line."""

import sys

from gpufleet.components.catalog.generate import main

sys.exit(main())
