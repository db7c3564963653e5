"""Statistics against SciPy reference values and explicit enumerations."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from kcca_desc.evaluate.results import Result
from kcca_desc.evaluate.statistics import (
    add_confidence_intervals,
    add_significance,
    bootstrap_ci,
    cohens_kappa,
    kendall_tau,
    mcnemar_test,
    metric_cis,
    paired_randomization_test,
    spearman_rho,
)


def outcomes(n_a_only, n_b_only, n_both, n_neither):
    a = [1] * n_a_only + [0] * n_b_only + [1] * n_both + [0] * n_neither
    b = [0] * n_a_only + [1] * n_b_only + [1] * n_both + [0] * n_neither
    return np.array(a, bool), np.array(b, bool)


def test_mcnemar_exact_matches_binomtest():
    a, b = outcomes(9, 3, 40, 50)
    res = mcnemar_test(a, b)
    assert res.method == "exact" and (res.n_a_only, res.n_b_only) == (9, 3)
    assert res.pvalue == pytest.approx(stats.binomtest(3, 12, 0.5).pvalue, rel=1e-12)
    # Hand value: 2 * P[Bin(12, 1/2) <= 3] = 2 * 299 / 4096.
    assert res.pvalue == pytest.approx(2 * 299 / 4096)


def test_mcnemar_chi2_with_continuity_correction():
    a, b = outcomes(30, 15, 100, 100)
    res = mcnemar_test(a, b)
    assert res.method == "chi2"
    assert res.statistic == pytest.approx((15 - 1) ** 2 / 45)
    assert res.pvalue == pytest.approx(stats.chi2.sf(196 / 45, 1))


def test_mcnemar_no_discordance_and_bad_input():
    a, b = outcomes(0, 0, 5, 5)
    assert mcnemar_test(a, b).pvalue == 1.0
    assert mcnemar_test(*outcomes(1, 1, 0, 0)).pvalue == 1.0
    with pytest.raises(ValueError, match="binary"):
        mcnemar_test([0, 2], [0, 1])
    with pytest.raises(ValueError, match="one length"):
        mcnemar_test([0, 1], [0])


def enumerated_p(a, b, stat):
    observed = stat(a) - stat(b)
    extreme = total = 0
    for swaps in itertools.product([False, True], repeat=len(a)):
        s = np.array(swaps)
        a2, b2 = np.where(s, b, a), np.where(s, a, b)
        extreme += abs(stat(a2) - stat(b2)) >= abs(observed) - 1e-12
        total += 1
    return extreme / total


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6)), min_size=1, max_size=9),
       st.sampled_from(["mean", "median"]))
def test_randomization_exact_matches_full_enumeration(pairs, statistic):
    a = np.array([p[0] for p in pairs], float)
    b = np.array([p[1] for p in pairs], float)
    res = paired_randomization_test(a, b, statistic=statistic)
    assert res.exact
    assert res.pvalue == pytest.approx(enumerated_p(a, b, getattr(np, statistic)))


def test_randomization_monte_carlo_is_seeded_and_close_to_exact():
    rng = np.random.default_rng(0)
    a = rng.normal(0.3, 1, 18)
    b = rng.normal(0.0, 1, 18)
    exact = paired_randomization_test(a, b, exact_max=18)
    mc1 = paired_randomization_test(a, b, exact_max=0, n_permutations=20000, seed=7)
    mc2 = paired_randomization_test(a, b, exact_max=0, n_permutations=20000, seed=7)
    assert exact.exact and not mc1.exact
    assert mc1 == mc2
    # Monte Carlo standard error is at most 0.5 / sqrt(20000) = 0.0035.
    assert abs(mc1.pvalue - exact.pvalue) < 0.02
    assert paired_randomization_test(a, a).pvalue == 1.0


def test_randomization_detects_a_clear_difference():
    rng = np.random.default_rng(1)
    base = rng.integers(1, 500, 400).astype(float)
    res = paired_randomization_test(base * 0.5, base, statistic="median", n_permutations=2000)
    assert res.pvalue == pytest.approx(1 / 2001)


def test_bootstrap_ci_is_seeded_and_covers_the_mean():
    rng = np.random.default_rng(2)
    values = rng.normal(10, 2, 400)
    lo, hi = bootstrap_ci(values, seed=3)
    assert (lo, hi) == bootstrap_ci(values, seed=3)
    assert lo < values.mean() < hi
    # Width close to the normal interval 2 * 1.96 * sd / sqrt(n).
    assert hi - lo == pytest.approx(2 * 1.96 * values.std() / 20, rel=0.15)
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_ci([1.0, np.nan])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0, 2.0], confidence=1.5)


def test_metric_cis_agree_with_bootstrap_ci_on_same_seed():
    rng = np.random.default_rng(4)
    ranks = rng.integers(1, 200, 300)
    cis = metric_cis(ranks, n_resamples=500, seed=9)
    r10 = bootstrap_ci(ranks, statistic=lambda r, axis: 100 * np.mean(r <= 10, axis=axis), n_resamples=500, seed=9)
    assert cis["R@10"] == pytest.approx(r10)
    assert cis["median_rank"] == pytest.approx(bootstrap_ci(ranks, statistic="median", n_resamples=500, seed=9))
    assert cis["mean_rank"][0] < ranks.mean() < cis["mean_rank"][1]


def test_metric_cis_with_singleton_clusters_is_the_query_bootstrap():
    ranks = np.random.default_rng(6).integers(1, 60, 250)
    plain = metric_cis(ranks, n_resamples=300, seed=4)
    clustered = metric_cis(ranks, n_resamples=300, seed=4, groups=np.arange(ranks.size))
    assert clustered.keys() == plain.keys()
    for name in plain:
        assert clustered[name] == pytest.approx(plain[name], abs=1e-9), name


def test_metric_cis_resamples_duplicated_queries_as_one_cluster():
    # Five identical copies of each query carry no more information than one:
    # the cluster bootstrap gives the intervals of the deduplicated queries,
    # the query bootstrap narrower ones.
    ranks = np.random.default_rng(7).integers(1, 40, 200)
    copies = np.repeat(ranks, 5)
    labels = np.repeat(np.arange(ranks.size), 5)
    single = metric_cis(ranks, n_resamples=400, seed=2)
    clustered = metric_cis(copies, n_resamples=400, seed=2, groups=labels)
    for name in single:
        assert clustered[name] == pytest.approx(single[name], abs=1e-9), name
    naive = metric_cis(copies, n_resamples=400, seed=2)
    width = lambda ci: ci["R@10"][1] - ci["R@10"][0]  # noqa: E731
    assert width(naive) < 0.7 * width(single)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(0, 6)), min_size=1, max_size=40),
       st.integers(0, 2**16))
def test_metric_cis_clusters_match_explicit_resampling(queries, seed):
    ranks = np.array([q[0] for q in queries], float)
    groups = np.array([q[1] for q in queries])
    n_resamples = 50
    got = metric_cis(ranks, ks=(1, 5), n_resamples=n_resamples, seed=seed, groups=groups)
    # Reference: the same cluster draws, each sample built by concatenation.
    labels = np.unique(groups)
    picks = np.random.default_rng(seed).integers(0, labels.size, size=(n_resamples, labels.size))
    samples = [np.concatenate([ranks[groups == labels[p]] for p in row]) for row in picks]
    q = [0.025, 0.975]
    expected = {"R@1": [100 * np.mean(x <= 1) for x in samples], "R@5": [100 * np.mean(x <= 5) for x in samples],
                "median_rank": [np.median(x) for x in samples], "mean_rank": [np.mean(x) for x in samples]}
    for name, values in expected.items():
        assert got[name] == pytest.approx(tuple(np.quantile(values, q)), abs=1e-9), name


def test_metric_cis_and_add_confidence_intervals_reject_bad_groups():
    with pytest.raises(ValueError, match="one label per query"):
        metric_cis([1, 2, 3], groups=[0, 1])
    result = make_result(np.array([1, 2, 3]), np.array([1, 4, 2]), "toy")
    with pytest.raises(ValueError, match="unknown task"):
        add_confidence_intervals(result, groups={"searches": [0, 0, 1]})
    add_confidence_intervals(result, n_resamples=50, groups={"search": [0, 0, 1]})
    assert result.extras["ci_settings"]["resampled"] == {"annotation": "queries", "search": "clusters"}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=12))
def test_rank_correlations_match_their_definitions(pairs):
    x = np.array([p[0] for p in pairs], float)
    y = np.array([p[1] for p in pairs], float)
    if np.all(x == x[0]) or np.all(y == y[0]):
        for correlation in (spearman_rho, kendall_tau):
            with pytest.raises(ValueError, match="same value"):
                correlation(x, y)
        return
    assert spearman_rho(x, y) == pytest.approx(spearman_reference(x, y), abs=1e-12)
    assert kendall_tau(x, y) == pytest.approx(kendall_tau_b_reference(x, y), abs=1e-12)


def mean_ranks(v):
    """1-based ranks, tied values sharing the mean of the positions they span (by counting)."""
    return np.array([np.sum(v < a) + (np.sum(v == a) + 1) / 2 for a in v])


def spearman_reference(x, y):
    """Pearson correlation of the mean ranks, from its formula."""
    rx, ry = mean_ranks(x) - mean_ranks(x).mean(), mean_ranks(y) - mean_ranks(y).mean()
    return np.sum(rx * ry) / np.sqrt(np.sum(rx ** 2) * np.sum(ry ** 2))


def kendall_tau_b_reference(x, y):
    """(P - Q) / sqrt((P + Q + T_x)(P + Q + T_y)) by counting every pair (Kendall 1945)."""
    concordant = discordant = tied_x_only = tied_y_only = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx and dy:
            concordant += dx == dy
            discordant += dx != dy
        elif dx:
            tied_y_only += 1
        elif dy:
            tied_x_only += 1
    return (concordant - discordant) / np.sqrt((concordant + discordant + tied_x_only)
                                               * (concordant + discordant + tied_y_only))


def test_rank_correlations_hand_computed():
    # x ranks 1..4; y swaps the last two: one discordant pair of six.
    x, y = [1, 2, 3, 4], [10, 20, 40, 30]
    assert spearman_rho(x, y) == pytest.approx(1 - 6 * 2 / (4 * (16 - 1)))  # 1 - 6 Σd² / n(n² - 1)
    assert kendall_tau(x, y) == pytest.approx((5 - 1) / 6)
    with pytest.raises(ValueError, match="at least 2 systems"):
        kendall_tau([1.0], [2.0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        spearman_rho([1.0, np.nan, 2.0], [1.0, 2.0, 3.0])


def test_cohens_kappa_hand_computed():
    # 2x2 table: both yes 20, a yes b no 5, a no b yes 10, both no 15 (n = 50).
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    po = 35 / 50
    pe = (25 / 50) * (30 / 50) + (25 / 50) * (20 / 50)
    assert cohens_kappa(a, b) == pytest.approx((po - pe) / (1 - pe))
    assert cohens_kappa(["x", "y", "z"], ["x", "y", "z"]) == 1.0
    with pytest.raises(ValueError, match="undefined"):
        cohens_kappa([1, 1], [1, 1])


def make_result(ranks_ann, ranks_search, system):
    def metrics(r):
        r = np.asarray(r)
        return {"R@1": 100 * np.mean(r <= 1), "R@5": 100 * np.mean(r <= 5), "R@10": 100 * np.mean(r <= 10),
                "median_rank": float(np.median(r)), "mean_rank": float(r.mean()), "n_queries": r.size}
    return Result(system, "toy", "hodosh", "test", metrics(ranks_ann), metrics(ranks_search),
                  ranks={"annotation": ranks_ann, "search": ranks_search})


def test_add_confidence_intervals_and_significance_write_extras():
    rng = np.random.default_rng(5)
    good = make_result(rng.integers(1, 8, 200), rng.integers(1, 8, 200), "good")
    bad = make_result(rng.integers(1, 400, 200), rng.integers(1, 400, 200), "bad")
    add_confidence_intervals(good, n_resamples=200, seed=1)
    lo, hi = good.extras["ci"]["annotation"]["R@5"]
    assert lo <= good.annotation["R@5"] <= hi
    add_significance(good, bad, n_permutations=500)
    assert good.extras["significance"]["search"]["R@1"] < 0.05
    assert good.extras["significance"]["annotation"]["median_rank"] < 0.05
    assert '"significance_baseline": "bad"' in good.to_json()
    with pytest.raises(ValueError, match="one view"):
        add_significance(good, make_result([1, 2], [1, 2], "tiny"))


def test_cohens_kappa_three_labels_and_bad_input():
    # Agreement on 4 of 6 items; chance agreement (2·2 + 2·3 + 2·1) / 36 = 1/3: κ = (2/3 - 1/3) / (2/3).
    a = ["x", "x", "y", "z", "z", "y"]
    b = ["x", "y", "y", "z", "x", "y"]
    assert cohens_kappa(a, b) == pytest.approx(0.5)
    assert cohens_kappa([1, 2], [2, 1]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="one length"):
        cohens_kappa([1, 2], [1, 2, 3])


def test_add_confidence_intervals_clusters_karpathy_search_by_image_by_default():
    # As documented (user_guide/evaluation.md) and as compare does: under karpathy the five
    # captions of an image are resampled together; under hodosh every query on its own.
    from kcca_desc.data.registry import load_dataset
    from kcca_desc.evaluate import bootstrap_groups, result_from_scores
    from kcca_desc.report.compare import cluster_groups
    view = load_dataset("synthetic", n_images=60, seed=0).view("test", "karpathy")
    scores = np.random.default_rng(0).normal(size=(view.n_images, view.n_captions))
    default = add_confidence_intervals(result_from_scores(scores, view, "random"), n_resamples=300)
    clustered = add_confidence_intervals(result_from_scores(scores, view, "random"), n_resamples=300,
                                         groups={"search": view.caption_image})
    plain = add_confidence_intervals(result_from_scores(scores, view, "random"), n_resamples=300, groups={})
    assert default.extras["ci_settings"]["resampled"] == {"annotation": "queries", "search": "clusters"}
    assert default.extras["ci"] == clustered.extras["ci"]
    assert plain.extras["ci_settings"]["resampled"] == {"annotation": "queries", "search": "queries"}
    assert plain.extras["ci"]["search"] != default.extras["ci"]["search"]
    assert np.array_equal(cluster_groups(default)["search"], bootstrap_groups(default)["search"])
    hodosh = load_dataset("synthetic", n_images=60, seed=0).view("test", "hodosh")
    h = add_confidence_intervals(result_from_scores(scores[:, :hodosh.n_captions][:hodosh.n_images], hodosh, "h"),
                                 n_resamples=300)
    assert h.extras["ci_settings"]["resampled"] == {"annotation": "queries", "search": "queries"}
    bare = result_from_scores(scores, view, "bare")
    bare.queries.pop("caption_image")
    with pytest.raises(ValueError, match="caption_image"):
        add_confidence_intervals(bare, n_resamples=50)
    add_confidence_intervals(bare, n_resamples=50, groups={})  # the query bootstrap, asked for


def _bad_call_cases():
    from kcca_desc.evaluate import statistics as S
    r = make_result([1, 2], [2, 1], "toy")
    hint = "Result.from_dict"
    return [
        (lambda: S.add_confidence_intervals(None), r"add_confidence_intervals: result must be a Result, got NoneType"),
        (lambda: S.add_confidence_intervals(r.to_dict(True)), rf"result must be a Result, got dict; .*{hint}"),
        (lambda: S.add_confidence_intervals([r]), r"add_confidence_intervals: result must be a Result, got list"),
        (lambda: S.add_significance(r, r.to_dict(True)), rf"add_significance: baseline must be a Result, got dict; .*{hint}"),
        (lambda: S.add_significance(None, r), r"add_significance: result must be a Result, got NoneType"),
        (lambda: S.paired_tests(r, {}), r"paired_tests: baseline must be a Result, got dict"),
        (lambda: S.bootstrap_groups({"protocol": "karpathy"}), r"bootstrap_groups: result must be a Result, got dict"),
        (lambda: S.caption_images(None), r"caption_images: result must be a Result, got NoneType"),
        (lambda: S.add_confidence_intervals(r, groups=[0, 1]), r"'groups' parameter of add_confidence_intervals"),
        (lambda: S.add_confidence_intervals(r, n_resamples=None), r"'n_resamples' parameter of add_confidence_intervals"),
        (lambda: S.add_confidence_intervals(r, confidence="0.9"), r"'confidence' parameter of add_confidence_intervals"),
        (lambda: S.add_confidence_intervals(r, seed="x"), r"'seed' parameter of add_confidence_intervals"),
        (lambda: S.add_significance(r, r, seed=1.5), r"'seed' parameter of add_significance"),
        (lambda: S.mcnemar_test([1, 0], [0, 1], exact_threshold=None), r"'exact_threshold' parameter of mcnemar_test"),
        (lambda: S.paired_randomization_test([1.0], [2.0], statistic=None), r"'statistic' parameter"),
        (lambda: S.paired_randomization_test([1.0], [2.0], n_permutations=None), r"'n_permutations' parameter"),
        (lambda: S.paired_randomization_test([1.0], [2.0], exact_max="3"), r"'exact_max' parameter"),
        (lambda: S.bootstrap_ci([1.0, 2.0], n_resamples=None), r"'n_resamples' parameter of bootstrap_ci"),
        (lambda: S.bootstrap_ci([1.0, 2.0], statistic=3), r"'statistic' parameter of bootstrap_ci"),
        (lambda: S.metric_cis([1, 2], ks=5), r"'ks' parameter of metric_cis"),
        (lambda: S.metric_cis([1, 2], ks=["a"]), r"'ks' parameter of metric_cis"),
        (lambda: S.bootstrap_intervals([np.mean], 3), r"'statistics' parameter of bootstrap_intervals"),
        (lambda: S.bootstrap_intervals({"m": np.mean}, None), r"'n_items' parameter of bootstrap_intervals"),
        (lambda: S.interval_settings("queries", confidence=None), r"'confidence' parameter of interval_settings"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_call_cases())))
def test_statistics_refuse_arguments_of_the_wrong_type_naming_function_and_argument(case):
    # A wrong type was Python's AttributeError ('NoneType' object has no attribute 'ranks') or
    # TypeError from NumPy or a comparison, naming neither the function nor the argument.
    from kcca_desc._core.errors import ParameterError
    call, message = _bad_call_cases()[case]
    with pytest.raises(ParameterError, match=message):
        call()


@pytest.mark.parametrize("call", [
    lambda: paired_randomization_test(["a"], ["b"]),
    lambda: spearman_rho(["a", "b"], ["b", "a"]),
    lambda: bootstrap_ci(["a"]),
    lambda: cohens_kappa([{}], [{}]),
    lambda: mcnemar_test([[0], [1, 0]], [0, 1]),
])
def test_statistics_refuse_outcomes_that_are_no_numbers_as_data_errors(call):
    from kcca_desc._core.errors import DataError
    with pytest.raises(DataError, match="must be numbers|must be two non-empty"):
        call()
