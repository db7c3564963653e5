"""``python -m kcca_desc.fit``: the main command, :mod:`kcca_desc.cli.fit`."""

import sys

from .cli.fit import cli

if __name__ == "__main__":
    sys.exit(cli())
