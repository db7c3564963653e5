"""The retrieval metrics reported, as typed entries: name, labels, direction, format and paired test.

Hodosh, Young & Hockenmaier (2013, Section 4.2) report R@K, the share of queries whose gold item
is ranked within the top K (percent, higher is better), and the median rank of the gold item
(lower is better); the mean rank is reported beside them.  Every table, figure and comparison
reads its labels and number format from :data:`METRICS`, so that a metric is described once.

Examples
--------
>>> METRICS["median_rank"].label
'med r'
>>> METRICS["median_rank"].format(3.0), METRICS["R@1"].format(3.0)
('3', '3.0')
>>> METRICS["mean_rank"].higher_is_better
False
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .._core.registry import Registry

__all__ = ["Metric", "METRICS", "format_bound", "metric_entry"]


@dataclass(frozen=True)
class Metric:
    """One reported retrieval metric.

    Parameters
    ----------
    name : str
        The key of the metric in :func:`~kcca_desc.evaluate.ranks.retrieval_metrics` and in
        results files (``"R@1"``, ``"median_rank"``).
    label : str
        Its short column header in tables (``"med r"``).
    axis_label : str
        Its longer label on figure axes, unit included (``"R@1 (%)"``).
    direction : {"higher", "lower"}
        Which values are better.
    paired_test : str
        The test of a paired comparison of two systems on it (Hodosh et al. 2013,
        Section 4.2.1): McNemar's test of the hits for R@K, a paired randomisation test of the
        statistic for ranks.
    whole_as_integer : bool, default=False
        Print a whole value without decimals (a median of integer ranks is usually whole).
    """

    name: str
    label: str
    axis_label: str
    direction: Literal["higher", "lower"]
    paired_test: str
    whole_as_integer: bool = False

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger value is better."""
        return self.direction == "higher"

    def format(self, value: float) -> str:
        """``value`` as tables print it: one decimal, or none for a whole value if :attr:`whole_as_integer`."""
        if self.whole_as_integer and value == int(value):
            return f"{value:.0f}"
        return format_bound(value)


def format_bound(value: float) -> str:
    """A confidence bound or other derived figure of any metric: one decimal."""
    return f"{value:.1f}"


def _recall(k: int) -> Metric:
    return Metric(f"R@{k}", f"R@{k}", f"R@{k} (%)", "higher", "McNemar")


#: The metrics reported, in table order.
METRICS: Registry[Metric] = Registry("metric")
for _k in (1, 5, 10):
    METRICS.register(f"R@{_k}", _recall(_k),
                     help=f"percent of queries whose gold item is ranked in the top {_k}")
METRICS.register("median_rank", Metric("median_rank", "med r", "median rank", "lower", "randomisation (median)",
                                       whole_as_integer=True), help="median rank of the gold item")
METRICS.register("mean_rank", Metric("mean_rank", "mean r", "mean rank", "lower", "randomisation (mean)"),
                 help="mean rank of the gold item")
del _k


def metric_entry(name: str) -> Metric:
    """The :class:`Metric` of ``name``: one of :data:`METRICS`, or ``R@K`` for any other cut-off K.

    A result evaluated with further cut-offs (``ks=(1, 5, 10, 20)``) has figures such as
    ``R@20``, which the tables print as they print the registered recalls.

    >>> metric_entry("R@20").axis_label, metric_entry("median_rank").label
    ('R@20 (%)', 'med r')
    """
    if name not in METRICS and re.fullmatch(r"R@[1-9][0-9]*", name):
        return _recall(int(name[2:]))
    return METRICS[name]
