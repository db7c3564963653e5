"""The typed metric entries: one description of each reported metric, read by every table."""

import pytest

from kcca_desc.evaluate.metrics import METRICS, Metric, format_bound
from kcca_desc.evaluate.ranks import METRIC_KEYS, retrieval_metrics


def test_every_reported_metric_is_a_key_of_retrieval_metrics():
    assert list(METRICS) == ["R@1", "R@5", "R@10", "median_rank", "mean_rank"]
    assert set(METRICS) <= set(METRIC_KEYS) and set(METRICS) <= set(retrieval_metrics([1, 2, 3]))
    assert all(isinstance(m, Metric) and m.name == name for name, m in METRICS.items())


def test_direction_recalls_higher_ranks_lower():
    assert [METRICS[name].higher_is_better for name in METRICS] == [True, True, True, False, False]


@pytest.mark.parametrize("name, value, text", [("median_rank", 3.0, "3"), ("median_rank", 3.5, "3.5"),
                                               ("mean_rank", 3.0, "3.0"), ("R@1", 20.0, "20.0"),
                                               ("R@10", 12.345, "12.3")])
def test_format_prints_whole_median_ranks_without_decimals(name, value, text):
    assert METRICS[name].format(value) == text


def test_bounds_keep_one_decimal_whatever_the_metric():
    assert format_bound(3.0) == "3.0"


def test_entries_are_frozen():
    with pytest.raises(AttributeError):
        METRICS["R@1"].label = "recall"
