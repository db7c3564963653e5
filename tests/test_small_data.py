"""Small data sets run on the defaults: codebooks and the (n, reg) grid shrink to what the data
supports, with one warning saying what changed; images too small for a feature, captions left
without a word and kernels that are not positive semi-definite are reported in the user's terms,
attributed to the user's call."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from bad_inputs import write_tsv_dataset

from kcca_desc.data import ArrayImages, make_synthetic
from kcca_desc._core.errors import DataError, ParameterError
from kcca_desc.cli.fit import main
from kcca_desc.image.features import ImageFeaturizer
from kcca_desc.kcca import KCCA
from kcca_desc.methods import ImageSentenceRanker
from kcca_desc.text import Preprocessor


def _only(record, text):
    matching = [w for w in record if text in str(w.message)]
    assert len(matching) == 1, [str(w.message) for w in record]
    return matching[0]


def test_twelve_images_run_on_every_default(tmp_path, capsys):
    tsv = write_tsv_dataset(tmp_path, n_images=12)
    assert main(["--data", "tsv", "--data-root", str(tsv), "-q"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: 7 training images support at most 6 KCCA dimensions: the grid of n_components "
                     "uses [6] instead of [16, 32, 64, 128, 256]") == 1
    assert err.count("the codebooks are smaller: ") == 1
    assert "Traceback" not in err


def test_codebooks_shrink_to_the_distinct_descriptors_with_one_warning():
    data = make_synthetic(n_images=6, image_size=24, seed=3)
    featurizer = ImageFeaturizer(n_words={"colour": 4096, "texture": 8, "sift": 4096}, levels=0, progress=False)
    with pytest.warns(UserWarning) as record:
        featurizer.fit(data.images)
    warning = _only(record, "the codebooks are smaller")
    sizes = {t: c.n_words for t, c in featurizer.codebooks_.items()}
    assert sizes["texture"] == 8 and sizes["colour"] < 4096 and sizes["sift"] < 4096
    assert (f"colour 4096 -> {sizes['colour']} words (n_words['colour'], command line --colour-words)"
            in str(warning.message))
    assert "texture" not in str(warning.message)
    assert warning.filename == __file__
    histograms = featurizer.transform(data.images)
    assert histograms["colour"].shape == (6, 1, sizes["colour"])
    # Read back from the cache, the codebook has the same size and says so again.
    again = ImageFeaturizer(n_words={"colour": 4096, "texture": 8, "sift": 4096}, levels=0, progress=False)
    with pytest.warns(UserWarning, match="the codebooks are smaller"):
        again.fit(data.images)
    np.testing.assert_array_equal(again.codebooks_["colour"].cluster_centers_,
                                  featurizer.codebooks_["colour"].cluster_centers_)


def test_no_descriptor_at_all_is_an_error_naming_the_feature():
    tiny = ArrayImages([np.full((6, 6, 3), v, np.uint8) for v in (10, 90, 200)], ["a", "b", "c"])
    with pytest.raises(DataError, match="the training images give no sift descriptors"):
        ImageFeaturizer(feature_types=("sift",), n_words={"sift": 2}, progress=False, cache=False).fit(tiny)


def test_images_too_small_for_a_feature_are_counted_in_one_warning():
    data = make_synthetic(n_images=8, image_size=40, seed=1)
    featurizer = ImageFeaturizer(feature_types=("colour", "sift"), n_words={"colour": 8, "sift": 8}, levels=0,
                                 progress=False).fit(data.images)
    rng = np.random.default_rng(0)
    queries = ArrayImages([data.images.load(0), rng.integers(0, 256, (8, 8, 3), np.uint8),
                           rng.integers(0, 256, (10, 6, 3), np.uint8)], ["big", "small", "thin"])
    with pytest.warns(UserWarning) as record:
        histograms = featurizer.transform(queries)
    message = str(_only(record, "descriptor").message)
    assert message == ("2 of 3 images give no sift descriptor ('small', 'thin'): too small for the feature, "
                       "so its histograms are all zero")
    assert histograms["sift"][1:].sum() == 0 and histograms["colour"][1:].sum() > 0


def test_captions_left_empty_by_preprocessing_are_counted_once():
    with pytest.warns(UserWarning) as record:
        tokens, _ = Preprocessor(cache=False).process_items([["A dog runs .", "The ."], ["!!!", "a cat"]])
    assert tokens == [[["dog", "run"], []], [[], ["cat"]]]
    assert str(_only(record, "no word left").message) == (
        "2 of 4 captions have no word left after preprocessing (only stop words, punctuation or symbols: "
        "'The .', '!!!'); they are kept, but match no other caption")


@pytest.fixture(scope="module")
def tiny_train():
    return make_synthetic(n_images=20, image_size=32, seed=2).subset("train")


RANKER = {"image_kernel_params": {"levels": 0, "n_words": {"colour": 8, "texture": 8, "sift": 8}},
          "text_kernel": "bow5"}


def test_a_user_grid_keeps_what_the_data_supports_with_a_warning(tiny_train):
    n = len(tiny_train)
    with pytest.warns(UserWarning) as record:
        ranker = ImageSentenceRanker(n_components=(2, 4, 50), regs=(1.0,), **RANKER)
        with pytest.raises(ParameterError, match="needs a dev view"):
            ranker.fit(tiny_train)
    assert ranker.n_components_ == (2, 4)
    assert str(_only(record, "KCCA dimensions").message) == (
        f"{n} training images support at most {n - 1} KCCA dimensions: the grid of n_components uses [2, 4] "
        "instead of [2, 4, 50]")
    with pytest.raises(ParameterError, match=rf"'n_components' parameter of ImageSentenceRanker must be below "
                                             rf"the number of training images \({n}\)"):
        ImageSentenceRanker(n_components=(50, 60), regs=(1.0,), **RANKER).fit(tiny_train)


def test_the_default_grid_falls_back_to_the_largest_supported_n(tiny_train):
    with pytest.warns(UserWarning, match="uses \\[11\\] instead of \\[16, 32, 64, 128, 256\\]"):
        ranker = ImageSentenceRanker(regs=(1.0,), **RANKER).fit(tiny_train)
    assert ranker.n_components_ == (len(tiny_train) - 1,) == (11,)
    assert ranker.kcca_.n_components == 11


def test_an_indefinite_kernel_warning_is_in_the_data_terms_and_points_at_the_caller(tmp_path):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((30, 4))
    Kx = Z @ Z.T
    Ky = Kx - 3.0 * np.eye(30)          # clearly not positive semi-definite
    model = KCCA(n_components=2, memory=str(tmp_path), view_names=("the images", "the captions"))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model.fit(Kx, Ky)
    (warning,) = [w for w in record if "positive semi-definite" in str(w.message)]
    assert warning.category is RuntimeWarning
    assert str(warning.message).startswith("the training kernel of the captions (30 items) is not positive "
                                           "semi-definite: ")
    # Not the cache's module, nor a toolkit module: the line above.
    assert warning.filename == __file__
    # A refit reads the spectrum from the cache, and warns the same, once.
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        KCCA(n_components=2, memory=str(tmp_path), view_names=("the images", "the captions")).fit(Kx, Ky)
    assert [str(w.message) for w in record if "positive semi-definite" in str(w.message)] == [str(warning.message)]


def test_a_grid_above_the_solvers_rank_is_known_before_any_work(tiny_train, monkeypatch):
    from kcca_desc.image.kernel import ImageKernel

    monkeypatch.setattr(ImageKernel, "fit", lambda *a, **k: pytest.fail("features computed before the error"))
    with pytest.raises(ParameterError, match=r"'n_components' parameter of ImageSentenceRanker must be at most "
                                             r"the solver's rank \(kcca_params rank=3\)"):
        ImageSentenceRanker(n_components=(4, 8), regs=(1.0,), kcca_params={"rank": 3}, **RANKER).fit(tiny_train)


def test_a_grid_partly_above_the_solvers_rank_keeps_what_it_supports(tiny_train):
    with pytest.warns(UserWarning) as record:
        ranker = ImageSentenceRanker(n_components=(2, 4, 8), regs=(1.0, 0.1), kcca_params={"rank": 4},
                                     **RANKER).fit(tiny_train, make_synthetic(n_images=20, image_size=32,
                                                                              seed=2).view("dev"))
    assert str(_only(record, "(kcca_params)").message) == (
        "KCCA factors of rank 4 (kcca_params) give at most 4 canonical pairs: the grid of n_components uses "
        "[2, 4] instead of [2, 4, 8]")
    assert ranker.n_components_ == (2, 4) and ranker.kcca_.n_components_ == 4
