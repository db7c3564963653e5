"""The harness on toy methods: fit/score calls, timings, ranks, names and errors."""

import json

import numpy as np
import pytest

from kcca_desc._core.errors import DataError, ParameterError
from kcca_desc.data.dataset import Dataset
from kcca_desc.data.images import ArrayImages
from kcca_desc.evaluate.harness import evaluate_fitted, evaluate_method, result_from_scores
from kcca_desc.evaluate.results import Result, format_table, to_csv, to_latex
from kcca_desc.evaluate.statistics import add_confidence_intervals, add_significance
from kcca_desc.methods.base import RetrievalMethod
from kcca_desc.evaluate.scores import DirectionalScores


def toy_dataset(n=12):
    # Image i is a constant array of value i; its captions name the number i.
    images = ArrayImages([np.full((2, 2, 3), i, dtype=np.uint8) for i in range(n)],
                         ids=[f"im{i}.jpg" for i in range(n)])
    captions = [[f"number {i} version {k}" for k in range(5)] for i in range(n)]
    splits = {"train": np.arange(0, n // 2), "test": np.arange(n // 2, n)}
    return Dataset("toy", images, captions, splits)


class NumberMatcher(RetrievalMethod):
    """Scores -|image value - number in the caption| (+ an offset learned in fit)."""

    name = "matcher"

    def __init__(self, shift=0, directional=False):
        self.shift = shift
        self.directional = directional

    def get_params(self, deep=True):
        return {"shift": self.shift, "directional": self.directional}

    def fit(self, train):
        self.n_fit_calls_ = getattr(self, "n_fit_calls_", 0) + 1
        self.train_size_ = len(train)
        self.timings_s_ = {"kernels": 0.25}
        return self

    def score(self, images, captions):
        values = np.array([images.load(i)[0, 0, 0] for i in range(len(images))], dtype=float)
        numbers = np.array([float(c.split()[1]) for c in captions]) + self.shift
        scores = -np.abs(values[:, None] - numbers[None, :])
        return DirectionalScores(scores, -scores) if self.directional else scores


def test_evaluate_method_fits_once_and_measures_both_protocols():
    data = toy_dataset()
    method = NumberMatcher()
    result = evaluate_method(method, data.subset("train"), data.view("test", "karpathy"))
    assert method.n_fit_calls_ == 1 and method.train_size_ == 6
    assert result.system == "matcher" and result.protocol == "karpathy" and result.split == "test"
    assert result.annotation["R@1"] == 100.0 and result.search["R@1"] == 100.0
    assert result.search["n_queries"] == 30 and result.annotation["n_queries"] == 6
    assert result.ranks["search"].shape == (30,)
    assert set(result.timings_s) == {"kernels", "fit", "score", "evaluate"}
    assert result.params == {"shift": 0, "directional": False}
    assert json.loads(result.to_json())["dataset"] == "toy"


def test_evaluate_fitted_records_given_names_params_and_timings():
    data = toy_dataset()
    method = NumberMatcher(shift=1).fit(data.subset("train"))
    result = evaluate_fitted(method, data.view("test", "hodosh"), name="shifted",
                             params={"note": "x"}, timings={"fit": 3.0})
    # Caption n scores -|v - (n + 1)| for image v (pool 6..11): the own caption scores -1,
    # caption v - 1 scores 0 (above) and caption v - 2 scores -1 (a tie, counted above).
    # Image 6 has neither in the pool -> 1; image 7 only caption 6 -> 2; the others -> 3.
    assert result.ranks["annotation"].tolist() == [1, 2, 3, 3, 3, 3]
    assert result.system == "shifted" and result.params == {"note": "x"}
    assert result.timings_s["fit"] == {"wall_s": 3.0}
    assert set(result.timings_s["score"]) == set(result.timings_s["evaluate"]) == {"wall_s", "cpu_s"}


def test_directional_scores_are_evaluated_per_task():
    data = toy_dataset()
    method = NumberMatcher(directional=True).fit(data.subset("train"))
    result = evaluate_fitted(method, data.view("test", "hodosh"))
    assert result.annotation["R@1"] == 100.0
    # Negated search scores put the gold image (distance 0) last of 6.
    assert result.search["R@1"] == 0.0 and result.search["median_rank"] == 6.0


def test_result_from_scores_and_errors_name_the_method():
    view = toy_dataset().view("test", "hodosh")
    good = result_from_scores(np.eye(6), view, "oracle")
    assert good.annotation["median_rank"] == 1.0
    with pytest.raises(ValueError, match="method 'broken'.*NaN"):
        result_from_scores(np.full((6, 6), np.nan), view, "broken")

    class WrongShape(NumberMatcher):
        def score(self, images, captions):
            return np.zeros((len(images), len(captions) + 1))

    with pytest.raises(ValueError, match="method 'matcher': annotation scores have shape \\(6, 7\\)"):
        evaluate_fitted(WrongShape(), view)


def test_judgments_are_added_on_hodosh_views_only():
    from kcca_desc.data.judgments import Flickr8kJudgments

    data = toy_dataset()
    method = NumberMatcher().fit(data.subset("train"))
    judgments = Flickr8kJudgments(
        expert={("im6.jpg", "im6.jpg#2"): (4, 4, 3)},
        crowdflower={("im6.jpg", "im7.jpg#2"): (1.0, 3, 0)},
    )
    refs = [[["number", str(i)]] for i in range(6, 12)]
    result = evaluate_fitted(method, data.view("test", "hodosh"), judgments=judgments, references=refs)
    summary = result.extras["judgments"]
    assert summary["annotation"]["S@1"] == 100.0 and summary["search"]["S@1"] == 100.0
    assert summary["annotation"]["n_unscored"] == 5
    assert summary["annotation"]["mean_expert_score"] == pytest.approx(11 / 3)
    # Top caption "number i version 2" against reference "number i": 2 of 4 tokens, all reference tokens.
    assert summary["annotation"]["bleu1"] == 50.0 and summary["annotation"]["rouge1_recall"] == 100.0
    assert result.per_query["annotation"]["r_precision"].shape == (6,)
    assert "per_query" not in result.to_json() and "r_precision" not in result.to_json()
    karpathy = evaluate_fitted(method, data.view("test", "karpathy"), judgments=judgments)
    assert "judgments" not in karpathy.extras


class DevSelector(NumberMatcher):
    """A matcher that, like the rankers with a grid, needs a dev view to choose its shift."""

    def fit(self, train, dev=None):
        super().fit(train)
        if dev is None:
            raise ValueError("a grid of 2 settings needs a dev view; pass dev=...")
        self.dev_split_ = dev.split
        return self


def test_evaluate_method_fits_with_a_dev_view_and_passes_evaluate_fitted_settings():
    data = toy_dataset()
    method = DevSelector()
    result = evaluate_method(method, data.subset("train"), data.view("test", "hodosh"),
                             dev=data.view("train", "hodosh"), top_k=2, timings={"load": 1.5})
    assert method.dev_split_ == "train"
    assert result.queries["top"]["annotation"].shape == (6, 2)
    assert result.timings_s["load"]["wall_s"] == 1.5 and {"fit", "score", "evaluate"} <= set(result.timings_s)


def test_evaluate_method_refuses_a_dev_view_for_a_method_fitted_on_train_alone():
    data = toy_dataset()
    method = NumberMatcher()
    with pytest.raises(ParameterError, match="dev: 'matcher' fits on train alone"):
        evaluate_method(method, data.subset("train"), data.view("test", "hodosh"), dev=data.view("train", "hodosh"))
    assert not hasattr(method, "n_fit_calls_")


def test_further_cut_offs_are_kept_in_the_result_its_tables_and_intervals():
    data = toy_dataset()
    method = NumberMatcher(shift=0.6).fit(data.subset("train"))
    result = evaluate_fitted(method, data.view("test", "karpathy"), ks=(1, 5, 10, 3))
    plain = evaluate_fitted(method, data.view("test", "karpathy"))
    assert list(result.annotation) == ["R@1", "R@3", "R@5", "R@10", "median_rank", "mean_rank", "n_queries"]
    assert {k: result.search[k] for k in plain.search} == plain.search
    assert Result.from_json(result.to_json()).search == result.search
    add_confidence_intervals(result)
    assert "R@3" in result.extras["ci"]["search"]
    assert list(add_significance(result, plain).extras["significance"]["search"]) == [
        "R@1", "R@3", "R@5", "R@10", "median_rank", "mean_rank"]
    assert format_table([result, plain]).splitlines()[0].split()[:8] == [
        "System", "Ann.", "R@1", "Ann.", "R@3", "Ann.", "R@5", "Ann."]
    with pytest.warns(UserWarning, match="no confidence intervals"):
        header, with_k, without_k = to_csv([result, plain], ci=True).splitlines()
    column = header.split(",").index("search_R@3")
    assert with_k.split(",")[column] == "100.0" and without_k.split(",")[column:column + 3] == ["", "", ""]
    assert r"\multicolumn{5}{c}{Annotation}" in to_latex([result, plain])


@pytest.mark.parametrize("ks, message", [
    ((1, 3), "ks must include 5, 10"),
    ((1, 5, 10, 0), "positive integers"),
    ((1, 5, 10, 2.5), "positive integers"),
])
def test_cut_offs_without_those_of_every_result_are_refused_before_fitting(ks, message):
    data = toy_dataset()
    method = NumberMatcher()
    with pytest.raises(ParameterError, match=f"ks: .*{message}"):
        evaluate_method(method, data.subset("train"), data.view("test", "hodosh"), ks=ks)
    assert not hasattr(method, "n_fit_calls_")


@pytest.mark.parametrize("change, error, message", [
    (lambda data: dict(view=data), ParameterError,
     r"^evaluate_method: view must be a RetrievalView \(Dataset\.view\), got Dataset; take the view of a split "
     r"with view=data\.view\('test', 'hodosh'\)$"),
    (lambda data: dict(dev=data), ParameterError, r"^evaluate_method: dev must be a RetrievalView .*got Dataset"),
    (lambda data: dict(top_k=-1), ParameterError, r"^evaluate_method: top_k must be a non-negative integer .*got -1$"),
    (lambda data: dict(top_k=2.5), ParameterError, r"^evaluate_method: top_k must be .*got 2\.5$"),
    (lambda data: dict(name=3), ParameterError, r"^evaluate_method: name must be a str .*or None, got int$"),
    (lambda data: dict(view=Dataset("toy", data.images, data.captions, {"test": []}).view("test")), DataError,
     r"^evaluate_method: view has no queries: the split 'test' of toy holds no image$"),
])
def test_evaluate_method_checks_its_arguments_before_fitting(change, error, message):
    data = toy_dataset()
    method = NumberMatcher()
    arguments = {"view": data.view("test", "hodosh"), **change(data)}
    with pytest.raises(error, match=message):
        evaluate_method(method, data.subset("train"), **arguments)
    assert not hasattr(method, "n_fit_calls_")


def test_a_method_without_fit_or_score_is_refused_naming_what_it_lacks():
    data = toy_dataset()
    with pytest.raises(ParameterError, match=r"^evaluate_method: method must be a retrieval system with fit and "
                                             r"score methods .*got object, which has no fit or score$"):
        evaluate_method(object(), data.subset("train"), data.view("test", "hodosh"))
    with pytest.raises(ParameterError, match=r"^evaluate_fitted: method must be a retrieval system with a score "
                                             r"method .*got function, which has no score$"):
        evaluate_fitted(lambda images, captions: None, data.view("test", "hodosh"))
    with pytest.raises(ParameterError, match=r"^evaluate_fitted: view must be a RetrievalView .*got tuple$"):
        evaluate_fitted(NumberMatcher(), ("images", "captions"))
    with pytest.raises(ParameterError, match=r"^evaluate_fitted: top_k must be .*got True$"):
        evaluate_fitted(NumberMatcher(), data.view("test", "hodosh"), top_k=True)
    assert evaluate_fitted(NumberMatcher(), data.view("test", "hodosh"), top_k=None).queries["top"] == {}
