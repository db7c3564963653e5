"""The command line: argparse, signal handling, pre-flight checks and the commands' mains.

* :mod:`.fit` — ``python -m kcca_desc.fit`` (and ``kcca-desc``): fit, evaluate, print a table;
* :mod:`.compare` — ``python -m kcca_desc.compare``: paired comparison of results files;
* :mod:`.report` — ``python -m kcca_desc.report``: the HTML report of results files;
* :mod:`.options` — the commands' parsers, and one option per setting the systems declare;
* :mod:`.runs` — the options ``compare`` and ``report`` share to pick runs from results files;
* :mod:`.preflight` — every setting, output path and data item checked before any work;
* :mod:`.interrupts` — Ctrl-C and SIGTERM stop a run at once, keeping what it finished;
* :mod:`.errors` — a problem the user can fix is one ``error:`` line and an exit code.

Nothing else of the toolkit imports this package, except the ``python -m`` shims
(``kcca_desc/fit.py``, ``kcca_desc/compare.py``, ``kcca_desc/report/__main__.py``; the last is
whitelisted under ``ignore_imports`` of the layers contract in ``pyproject.toml``).
"""
