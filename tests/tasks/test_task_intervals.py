"""Bootstrap intervals of the tasks' figures against slow reference bootstraps (same seed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kcca_desc.evaluate.statistics import bootstrap_ci, bootstrap_intervals
from kcca_desc.tasks import (average_precision, cosine_similarity_correlations, forced_choice_metrics,
                             leave_one_out_threshold_accuracy, off_topic_metrics, pearson_interval, pearson_r,
                             precision_at_k)
from kcca_desc.tasks.intervals import resampled_leave_one_out_accuracy


def percentile(draws, confidence=0.95):
    return tuple(np.quantile(draws, [(1 - confidence) / 2, (1 + confidence) / 2]))


def reference_draws(n, n_resamples, seed, strata=None):
    """The resampled item sets, drawn one stratum after the other in one batch (small cases)."""
    rng = np.random.default_rng(seed)
    groups = [np.arange(n)] if strata is None else [np.flatnonzero(strata == s) for s in np.unique(strata)]
    return np.concatenate([g[rng.integers(0, g.size, size=(n_resamples, g.size))] for g in groups], axis=1)


def test_forced_choice_intervals_equal_a_reference_bootstrap():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(40, 4))
    s[:, 0] += 0.8
    m = forced_choice_metrics(s, n_resamples=300, seed=5)
    draws = reference_draws(40, 300, 5)
    accuracy = [100 * np.mean([row[0] > max(row[1:]) for row in s[d]]) for d in draws]
    assert m["ci"]["accuracy"] == pytest.approx(percentile(accuracy))
    assert m["ci"]["mean_negative"] == pytest.approx(percentile([s[d, 1:].mean() for d in draws]))
    assert m["ci_settings"] == {"method": "percentile bootstrap", "n_resamples": 300, "confidence": 0.95,
                                "seed": 5, "resampled": "queries"}


def test_off_topic_intervals_equal_a_reference_stratified_bootstrap():
    rng = np.random.default_rng(1)
    labels = np.array([0] * 14 + [1] * 10)
    affinity = np.round(rng.normal(size=24) - 0.7 * labels, 1)  # rounded: ties across classes
    m = off_topic_metrics(affinity, labels, k=5, n_resamples=200, seed=3)
    draws = np.sort(reference_draws(24, 200, 3, strata=labels), axis=1)
    x = -affinity
    for name, metric in [("AP", average_precision), ("P@5", lambda a, b: precision_at_k(a, b, 5)),
                         ("accuracy", leave_one_out_threshold_accuracy)]:
        reference = percentile([100 * metric(x[d], labels[d]) for d in draws])
        assert m["ci"][name] == pytest.approx(reference), name
    assert m["ci_settings"]["resampled"].startswith("pairs")


def test_pearson_interval_equals_a_reference_bootstrap_and_skips_constant_draws():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, 8).astype(float)  # few values: some draws are constant
    y = x + rng.normal(size=8)
    draws = reference_draws(8, 400, 7)
    defined = [d for d in draws if np.ptp(x[d]) > 0]
    assert len(defined) < len(draws)
    reference = percentile([pearson_r(x[d], y[d]) for d in defined])
    assert pearson_interval(x, y, n_resamples=400, seed=7)["ci"] == pytest.approx(list(reference))


def test_undefined_figures_raise_one_clear_error():
    with pytest.raises(ValueError, match="constant"):
        pearson_interval([1.0, 1.0, 1.0], [0.0, 1.0, 2.0], n_resamples=50)
    with pytest.raises(ValueError, match="NaN"):
        pearson_interval([1.0, np.nan, 3.0], [0.0, 1.0, 2.0], n_resamples=50)
    with pytest.raises(ValueError, match="undefined on every resample"):
        bootstrap_intervals({"r": lambda idx: np.full(len(idx), np.nan)}, 3, n_resamples=10)
    with pytest.raises(ValueError, match="one label per item"):
        bootstrap_intervals({"r": lambda idx: idx.mean(axis=1)}, 3, strata=[0, 1], n_resamples=10)
    with pytest.raises(ValueError, match="n_queries >= 1"):
        forced_choice_metrics(np.empty((0, 3)))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1)), min_size=2, max_size=14), st.integers(0, 2**16))
def test_vectorised_leave_one_out_accuracy_matches_the_slow_one(pairs, seed):
    scores = np.array([p[0] for p in pairs], dtype=float)  # small integers: many ties
    labels = np.array([p[1] for p in pairs])
    idx = np.random.default_rng(seed).integers(0, len(pairs), size=(6, len(pairs)))
    fast = resampled_leave_one_out_accuracy(scores, labels, idx)
    slow = [leave_one_out_threshold_accuracy(scores[row], labels[row]) for row in idx]
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def off_topic_sample(n, rng):
    labels = np.repeat([0, 1], n)
    return rng.normal(size=2 * n) - labels, labels


def test_intervals_contain_the_figures_and_shrink_with_more_data():
    rng = np.random.default_rng(3)
    widths = []
    for n in (50, 800):
        affinity, labels = off_topic_sample(n, rng)
        off = off_topic_metrics(affinity, labels, k=20, n_resamples=300)
        s = rng.normal(size=(n, 6))
        s[:, 0] += 1.0
        choice = forced_choice_metrics(s, n_resamples=300)
        sim = rng.uniform(0, 5, n)
        noisy = sim + rng.normal(scale=2, size=n)
        cis = {**{("off", k): v for k, v in off["ci"].items()}, ("choice", "accuracy"): choice["ci"]["accuracy"],
               ("vsts", "r"): pearson_interval(noisy, sim, n_resamples=300)["ci"]}
        figures = {**{("off", k): off[k] for k in off["ci"]}, ("choice", "accuracy"): choice["accuracy"],
                   ("vsts", "r"): pearson_r(noisy, sim)}
        for key, (low, high) in cis.items():
            assert np.isfinite([low, high]).all() and low <= high, key
            assert low <= figures[key] <= high, key
        widths.append({key: high - low for key, (low, high) in cis.items() if key != ("off", "P@20")})
    for key in widths[0]:
        assert widths[1][key] < 0.6 * widths[0][key], key


def test_all_equal_scores_give_finite_intervals():
    off = off_topic_metrics(np.zeros(20), np.repeat([0, 1], 10), k=5, n_resamples=100)
    assert all(np.isfinite(v).all() and v[0] <= v[1] for v in off["ci"].values())
    assert off["ci"]["P@5"] == [0.0, 0.0]  # ties keep input order: on-topic pairs first, in every draw
    choice = forced_choice_metrics(np.ones((12, 3)), n_resamples=100)
    assert choice["ci"]["accuracy"] == [0.0, 0.0]  # a tie is not a win


def test_vsts_correlations_carry_intervals_of_one_bootstrap():
    rng = np.random.default_rng(4)
    tl, tr, il, ir = (rng.normal(size=(40, 3)) for _ in range(4))
    sim = rng.uniform(0, 5, 40)
    r = cosine_similarity_correlations(sim, (tl, tr), (il, ir), n_resamples=200, seed=1)
    cos = np.sum(tl * tr, 1) / np.linalg.norm(tl, axis=1) / np.linalg.norm(tr, axis=1)
    assert r["ci"]["text"] == pytest.approx(pearson_interval(cos, sim, n_resamples=200, seed=1)["ci"])
    assert set(r["ci"]) == {"text", "image", "concat"} and r["ci_settings"]["resampled"] == "sentence pairs"


def test_forced_choice_accuracy_interval_is_the_bootstrap_of_the_hits():
    # One draw scheme for every figure: the accuracy's interval is bootstrap_ci of the 0/1 hits.
    s = np.random.default_rng(5).normal(size=(90, 3))
    hits = 100.0 * (s[:, 0] > s[:, 1:].max(axis=1))
    assert forced_choice_metrics(s, n_resamples=250, seed=2)["ci"]["accuracy"] == pytest.approx(
        list(bootstrap_ci(hits, n_resamples=250, seed=2)))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=8), st.lists(st.integers(0, 4), min_size=1, max_size=8),
       st.integers(0, 2**16))
def test_off_topic_intervals_match_the_reference_on_tied_scores(on_topic, off_topic, seed):
    # Small integer affinities tie within and across the classes, where the order of a draw matters most.
    affinity = np.array(on_topic + off_topic, dtype=float)
    labels = np.array([0] * len(on_topic) + [1] * len(off_topic))
    k = min(3, labels.size)
    m = off_topic_metrics(affinity, labels, k=k, n_resamples=20, seed=seed)
    draws = np.sort(reference_draws(labels.size, 20, seed, strata=labels), axis=1)
    x = -affinity
    reference = {"AP": [average_precision(x[d], labels[d]) for d in draws],
                 f"P@{k}": [precision_at_k(x[d], labels[d], k) for d in draws],
                 "accuracy": [leave_one_out_threshold_accuracy(x[d], labels[d]) for d in draws]}
    for name, values in reference.items():
        assert m["ci"][name] == pytest.approx(list(percentile(100 * np.array(values))), abs=1e-9), name
