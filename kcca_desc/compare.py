"""``python -m kcca_desc.compare``: :mod:`kcca_desc.cli.compare`."""

import sys

from .cli.compare import cli

if __name__ == "__main__":
    sys.exit(cli())
