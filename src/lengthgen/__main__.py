"""``python -m lengthgen``: see :mod:`lengthgen.cli`."""

import sys

from lengthgen.cli import main

if __name__ == "__main__":  # guard: process and Dask workers re-import the main module
    sys.exit(main())
