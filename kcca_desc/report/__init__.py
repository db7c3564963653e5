"""An HTML report of retrieval results: tables, figures, a retrieval gallery and error analysis.

:func:`build_report` reads one or more results (``python -m kcca_desc.fit --out``, or a
benchmark's records) and writes into one directory:

- ``report.html``: one self-contained page (figures and thumbnails embedded as ``data:`` URIs,
  no script, no network at view time) rendered from the Jinja2 template shipped with the
  package (``templates/report.html.j2``);
- ``figures/*.png`` and ``figures/*.pdf``: every figure of the page, for a paper;
- ``comparison.json``/``.md``/``.csv``/``.tex``: the table of :mod:`kcca_desc.report.compare`.

The page holds the results table with bootstrap intervals, the comparison against the reference run
when several are given, recall@K curves (K = 1..100, or up to the pool's size when that is
smaller), the distribution of the gold ranks, a forest plot of the intervals, training curves of
runs that record them, a gallery of what one run retrieves for a seeded sample of queries (the gold
item marked), its worst queries, and the queries on which it and its protocol's reference run (or,
when it is the reference, the next run) disagree most. The gallery's run is chosen by ``gallery=``
(``--gallery``) and the reference by ``reference=`` (``--reference``); both default to the first
run, so by default the gallery shows the first run and its disagreements with the second.

Command line::

    python -m kcca_desc.report RESULTS.json [MORE.json ...] --out report/
"""

from __future__ import annotations

from .build import build_report

__all__ = ["build_report"]
