"""`python -m blocksim`: the same command line as `blocksim`."""
import sys

from blocksim.cli.main import main

sys.exit(main())
