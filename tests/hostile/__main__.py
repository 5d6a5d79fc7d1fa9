"""`python -m hostile` (from tests/): run the hostile corpus and print the summary."""
import sys

from hostile.supervisor import main

sys.exit(main())
