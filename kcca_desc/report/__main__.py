"""``python -m kcca_desc.report``: :mod:`kcca_desc.cli.report`."""

import sys

from ..cli.report import cli

if __name__ == "__main__":
    sys.exit(cli())
