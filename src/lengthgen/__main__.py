"""``python -m lengthgen``: see :mod:`lengthgen.cli`."""
import sys

from .cli import main

sys.exit(main())
