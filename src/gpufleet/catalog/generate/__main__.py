"""`python -m gpufleet.catalog.generate`: the generator's command line."""

import sys

from gpufleet.catalog.generate import main

sys.exit(main())
