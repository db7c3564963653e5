"""``python -m kcca_desc.compare``: :mod:`kcca_desc.cli.compare`."""

import sys

from .cli.compare import main

if __name__ == "__main__":
    sys.exit(main())
