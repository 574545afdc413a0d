"""``python -m lengthgen``: see :mod:`lengthgen.cli`."""
import sys

from lengthgen.cli import main

sys.exit(main())
