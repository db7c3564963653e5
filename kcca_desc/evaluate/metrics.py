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

from dataclasses import dataclass
from typing import Literal

from .._core.registry import Registry

__all__ = ["Metric", "METRICS", "format_bound"]


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


#: The metrics reported, in table order.
METRICS: Registry[Metric] = Registry("metric")
for _k in (1, 5, 10):
    METRICS.register(f"R@{_k}", Metric(f"R@{_k}", f"R@{_k}", f"R@{_k} (%)", "higher", "McNemar"),
                     help=f"percent of queries whose gold item is ranked in the top {_k}")
METRICS.register("median_rank", Metric("median_rank", "med r", "median rank", "lower", "randomisation (median)",
                                       whole_as_integer=True), help="median rank of the gold item")
METRICS.register("mean_rank", Metric("mean_rank", "mean r", "mean rank", "lower", "randomisation (mean)"),
                 help="mean rank of the gold item")
del _k
