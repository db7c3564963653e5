"""Multiple-kernel KCCA (MultipleKernelRanker, system ``mkl``) end to end on small synthetic data:
the single-kernel case is the classical ranker, weights never read the test split, the low-rank
solver, unknown names refused before any work, and the command line's round trip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kcca_desc import ImageSentenceRanker, load_dataset
from kcca_desc._core.errors import ParameterError
from kcca_desc.cli.fit import main
from kcca_desc.data import Dataset, make_synthetic
from kcca_desc.evaluate.ranks import evaluate_scores
from kcca_desc.methods import SYSTEMS, MultipleKernelRanker
from kcca_desc.methods.base_kernels import FeatureKernel

from sklearn.utils.estimator_checks import parametrize_with_checks

from toys import TinyEncoder, poisoned_copy

IMAGE_PARAMS = {"progress": False, "n_words": {"colour": 16, "texture": 16, "sift": 16}, "levels": 1}
GRID = dict(n_components=(4, 8), regs=(0.1, 1.0), n_select=2, image_kernel_params=IMAGE_PARAMS)


@pytest.fixture(scope="module")
def data():
    # The data of tests/methods/test_ranker.py: systems here use other text kernels than bow5_idf,
    # whose Grams a test there expects to compute.
    return load_dataset("synthetic", n_images=100, image_size=48, seed=3)


def tiny_kernel(side: str) -> FeatureKernel:
    return FeatureKernel(f"tiny_{side}_rbf", side, lambda owner: TinyEncoder(cache=False))


@pytest.fixture(scope="module")
def aligned(data):
    ranker = MultipleKernelRanker(text_kernel=["bow5", tiny_kernel("text")],
                                  image_kernel=["pyramid", tiny_kernel("image")], kernel_weights="alignf", **GRID)
    return ranker.fit(data.subset("train"), data.view("dev"))


def test_one_kernel_per_view_unnormalised_is_the_classical_ranker(data):
    # A sum of one kernel with weight 1, centred only: what ImageSentenceRanker decomposes.
    train, dev, test = data.subset("train"), data.view("dev"), data.view("test")
    mkl = MultipleKernelRanker(text_kernel="bow5", image_kernel="pyramid", normalization="none", **GRID).fit(train, dev)
    ranker = ImageSentenceRanker(text_kernel="bow5", **GRID).fit(train, dev)
    assert mkl.selected_ == ranker.selected_
    for a, b in zip(mkl.score(test.images, test.captions), ranker.score(test.images, test.captions)):
        np.testing.assert_allclose(a, b, atol=1e-8)


def test_alignment_weights_are_recorded_with_the_dev_results(aligned, data):
    weights = aligned.weights_
    assert set(weights["text"]) == {"bow5", "tiny_text_rbf"} and set(weights["image"]) == {"pyramid", "tiny_image_rbf"}
    for side in weights.values():
        assert min(side.values()) >= 0 and sum(side.values()) == pytest.approx(1.0)
    assert len(aligned.dev_results_) == 4 and all(r["weights"] == weights for r in aligned.dev_results_)
    assert aligned.weight_curve_[-1]["chosen"] and aligned.chosen_params_["kernel_weights"] == weights
    test = data.view("test")
    scores = aligned.score(test.images, test.captions)
    assert all(np.isfinite(s).all() and s.shape == (len(test.images), len(test.captions)) for s in scores)


def test_the_combined_kernel_is_the_weighted_sum_of_the_normalised_base_kernels(aligned, data):
    # Rows of training items through the fitted model's path reproduce its training sums' rows.
    train = data.subset("train")
    rows = aligned._combined_rows("image", train.images.subset(np.arange(5)))
    expected = 0
    for m, (name, mu) in enumerate(aligned.weights_["image"].items()):
        kernel = aligned.base_kernels_["image"][m]
        K = kernel.train_gram()
        stats = aligned.statistics_["image"][m]
        centred = K - stats.column_means[None, :] - stats.column_means[:, None] + stats.grand_mean
        expected = expected + mu * stats.scale * centred[:5]
    np.testing.assert_allclose(rows, expected, atol=1e-10)


@pytest.mark.parametrize("strategy", ["greedy", "align"])
def test_weights_chosen_on_dev_do_not_change_when_the_test_split_is_poisoned(data, strategy):
    system = SYSTEMS["mkl"]

    def fitted(dataset):
        method = MultipleKernelRanker(text_kernel="bow5+bow5_sqrtidf", image_kernel="pyramid+histo",
                                      kernel_weights=strategy, **GRID)
        return system.fit(method, dataset, "hodosh")

    clean, dirty = fitted(poisoned_copy(data)), fitted(poisoned_copy(data, poison=True))
    assert clean.weights_ == dirty.weights_
    assert clean.weight_curve_ == dirty.weight_curve_
    if strategy == "greedy":
        # The search tried every pair, then additions, and chose the best dev objective it saw.
        assert len(clean.weight_curve_) > 4
        best = max(e["dev_objective"] for e in clean.weight_curve_)
        assert [e["dev_objective"] for e in clean.weight_curve_ if e["chosen"]] == [best]


def test_sums_go_through_the_low_rank_solver(data):
    ranker = MultipleKernelRanker(text_kernel="bow5+bow5_sqrtidf", image_kernel="pyramid+histo",
                                  kernel_weights="uniform", kcca_params={"method": "lowrank", "rank": 30}, **GRID)
    ranker.fit(data.subset("train"), data.view("dev"))
    assert ranker.kcca_.method_ == "lowrank"
    test = data.view("test")
    assert all(np.isfinite(s).all() for s in ranker.score(test.images, test.captions))


def test_unknown_kernels_and_weights_are_refused_before_any_work():
    with pytest.raises(ParameterError, match=r"unknown text kernel 'nope'; available: .*tri_sem.*minilm_rbf"):
        MultipleKernelRanker(text_kernel="tri_sem+nope").fit(None)  # the data set is never read
    with pytest.raises(ParameterError, match="'text_encoder' parameter .* an encoder spec .* text_encoder_rbf"):
        MultipleKernelRanker(text_kernel="tri_sem+text_encoder_rbf").fit(None)
    for weights in ({"tri_sem": 1.0}, {"tri_sem": 0.0, "pyramid": 1.0}, {"tri_sem": -1.0, "pyramid": 1.0}):
        with pytest.raises(ParameterError, match=r"weight >= 0 for each base kernel, \['tri_sem', 'pyramid'\]"):
            MultipleKernelRanker(kernel_weights=weights).fit(None)
    with pytest.raises(ParameterError, match="greedy"):
        MultipleKernelRanker(kernel_weights="greedy", n_components=(4,), regs=(1.0,)).fit(
            load_dataset("synthetic", n_images=20, image_size=32).subset("train"))


@pytest.mark.filterwarnings("ignore:12 training images support at most 11:UserWarning")
def test_a_combined_kernel_runs_end_to_end_on_the_default_grid():
    # As tests/methods/test_every_kernel.py runs each named kernel: quick data, the default (n, κ) grid.
    data = make_synthetic(n_images=20, image_size=32, seed=0)
    ranker = MultipleKernelRanker(text_kernel=["tri5", "bow5_idf", tiny_kernel("text")],
                                  image_kernel=["pyramid", "histo", tiny_kernel("image")], kernel_weights="alignf",
                                  normalization="diagonal", regs=(0.1, 1.0),
                                  image_kernel_params={"levels": 0, "n_words": {"colour": 8, "texture": 8, "sift": 8}})
    ranker.fit(data.subset("train"), data.view("dev"))
    test = data.view("test")
    for task in ranker.score(test.images, test.captions):
        assert task.shape == (len(test.images), len(test.captions)) and np.all(np.isfinite(task))
    assert max(ranker.n_components_) <= min(ranker.kcca_.rank_x_, ranker.kcca_.rank_y_)


SMALL = ["--n-images", "100", "--colour-words", "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1",
         "--n-components", "4,8", "--regs", "0.1,1", "--n-select", "2"]


def test_command_line_round_trip(tmp_path, capsys):
    out = tmp_path / "mkl.json"
    argv = SMALL + ["--method", "mkl", "--text-kernel", "bow5+bow5_idf", "--image-kernel", "pyramid+histo",
                    "--kernel-weights", "bow5=1,bow5_idf=3,pyramid=1,histo=1", "--out", str(out), "-q"]
    assert main(argv) == 0
    assert "MKL bow5+bow5_idf (pyramid+histo)" in capsys.readouterr().out
    [result] = json.loads(out.read_text())
    chosen = result["params"]["chosen"]["kernel_weights"]
    assert chosen == {"text": {"bow5": 0.25, "bow5_idf": 0.75}, "image": {"pyramid": 0.5, "histo": 0.5}}
    assert result["command"]["settings"]["kernel_weights"] == {"bow5": 1.0, "bow5_idf": 3.0, "pyramid": 1.0,
                                                                "histo": 1.0}


def test_command_line_refuses_unknown_base_kernels_and_sums_for_other_systems(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--method", "mkl", "--image-kernel", "pyramid+nope"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown image kernel 'nope'" in err and "efficientnet_rbf" in err
    assert main(["--method", "kcca", "--text-kernel", "bow5+bow5_idf", "-q"]) == 2
    assert "are for --method mkl" in capsys.readouterr().err


#: scikit-learn's checks that fit the system on arrays: it fits on a Dataset of images and captions
#: (an array is refused with one error naming the Dataset loaders), so none of them applies; the
#: conventions of parameters, cloning, representation and unfitted use are checked.
_FITS_ON_ARRAYS = (
    "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_complex_data", "check_dtype_object",
    "check_estimators_empty_data_messages", "check_pipeline_consistency", "check_estimators_nan_inf",
    "check_estimator_sparse_tag", "check_estimator_sparse_array", "check_estimator_sparse_matrix",
    "check_estimators_pickle", "check_f_contiguous_array_estimator", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature", "check_dict_unchanged",
    "check_fit_idempotent", "check_fit_check_is_fitted", "check_n_features_in", "check_fit2d_predict1d",
)


@parametrize_with_checks([MultipleKernelRanker(text_kernel="tri_sem+minilm_rbf", image_kernel="pyramid+histo")],
                         expected_failed_checks=lambda estimator: dict.fromkeys(
                             _FITS_ON_ARRAYS, "fits on a Dataset of images and captions, not on arrays"))
def test_the_system_follows_the_scikit_learn_checks_that_apply(estimator, check):
    check(estimator)


def test_captions_without_a_word_tie_exactly_and_get_the_worst_rank():
    # Captions of stop words only have zero kernel rows; their centred rows are zero up to the
    # rounding of the combined kernel's column means (about 1e-17), which must not rank images.
    data = make_synthetic(n_images=40, image_size=48, seed=0)  # 30 images happen to round to exact zeros
    words = ("the a of", "a the", "of the a", "and the", "the of")
    empty = Dataset("stop_words", data.images, tuple(tuple(words[:len(c)]) for c in data.captions), data.splits)
    ranker = MultipleKernelRanker(text_kernel="bow5+bow5_idf", n_components=(8,), regs=(0.1,),
                                  image_kernel_params=IMAGE_PARAMS)
    with pytest.warns(UserWarning, match="no word left"):
        ranker.fit(empty.subset("train"))
    view = empty.view("test")
    scores = ranker.score(view.images, view.captions)
    assert not scores.search.any() and not scores.annotation.any()
    metrics = evaluate_scores(scores, view)
    assert metrics["search"]["R@1"] == metrics["annotation"]["R@1"] == 0.0
