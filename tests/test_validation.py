"""Parameter validation: the constraint types, and every estimator rejecting each bad parameter
with a message naming the estimator and the parameter before any costly work starts."""

from __future__ import annotations

import importlib.util
from numbers import Integral

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from kcca_desc import ImageSentenceRanker, NearestNeighbour, load_dataset
from kcca_desc.neural import CharGRUEncoder, VSEEncoder
from kcca_desc.image.features import ImageFeaturizer
from kcca_desc.image.kernel import ImageKernel
from kcca_desc._core.errors import KccaDescError, ParameterError
from kcca_desc.kcca import KCCA, LinearCCA, PrecomputedKernel
from kcca_desc.kernels.combine import KernelCombination
from kcca_desc.methods import EncoderMethod, FeatureBridgeMethod, MultipleKernelRanker, PairScorerMethod
from kcca_desc.scale import LandmarkKCCA
from kcca_desc.text import make_text_kernel
from kcca_desc._core.registry import Registry
from kcca_desc.text.named_kernels import TextKernel
from kcca_desc.text.preprocess import Preprocessor
from kcca_desc._core.validation import (
    POSITIVE_INT,
    DtypeOptions,
    Interval,
    InvalidParameterError,
    MappingOf,
    Registered,
    SequenceOf,
    ValidatedParams,
    invalid_parameter,
)

from toys import LatentEncoder, TinyEncoder, latent_dataset


# ------------------------------------------------------------------------ constraint types
class Toy(ValidatedParams, BaseEstimator):
    SHAPES = Registry("shape")
    _parameter_constraints = {"shape": [Registered(SHAPES, "shape")], "sizes": [SequenceOf(POSITIVE_INT)],
                              "weights": [MappingOf(str, Interval(Integral, 0, 9, closed="both")), None]}

    def __init__(self, shape="square", sizes=(1,), weights=None):
        self.shape, self.sizes, self.weights = shape, sizes, weights


@pytest.fixture
def shapes(request):
    Toy.SHAPES.register("square", 4)
    request.addfinalizer(lambda: [Toy.SHAPES.unregister(n) for n in list(Toy.SHAPES)])
    return Toy.SHAPES


def test_registered_names_are_looked_up_when_validating(shapes):
    Toy()._validate_params()
    with pytest.raises(InvalidParameterError,
                       match=r"^The 'shape' parameter of Toy must be a registered shape \(square\)\. "
                             r"Got 'circle' instead\.$"):
        Toy(shape="circle")._validate_params()
    shapes.register("circle", 0)  # registered after the class was defined
    Toy(shape="circle")._validate_params()
    for bad in (None, 4, ["square"]):
        with pytest.raises(InvalidParameterError, match="'shape' parameter"):
            Toy(shape=bad)._validate_params()


@pytest.mark.parametrize("sizes", [(1,), [2, 3], np.array([4, 5]), (np.int64(6),)])
def test_sequence_of_accepts_non_empty_sequences_of_valid_elements(shapes, sizes):
    Toy(sizes=sizes)._validate_params()


@pytest.mark.parametrize("sizes", [(), [], 3, "12", (0,), (1, 2.5), np.array([[1, 2]]), {1, 2}])
def test_sequence_of_rejects_empty_non_sequences_and_bad_elements(shapes, sizes):
    with pytest.raises(InvalidParameterError, match=r"'sizes' parameter of Toy must be a non-empty sequence of an "
                                                    r"int in the range \[1, inf\)"):
        Toy(sizes=sizes)._validate_params()


def test_sequence_of_distinct_and_mapping_of(shapes):
    distinct = SequenceOf(str, distinct=True)
    assert distinct.is_satisfied_by(["a", "b"]) and not distinct.is_satisfied_by(["a", "a"])
    assert "distinct" in str(distinct)
    Toy(weights={"a": 0, "b": 9})._validate_params()
    for bad in ({"a": 10}, {1: 1}, [("a", 1)]):
        with pytest.raises(InvalidParameterError, match=r"'weights' parameter of Toy must be a dict of an instance "
                                                        r"of 'str' to an int in the range \[0, 9\] or None"):
            Toy(weights=bad)._validate_params()


def test_dtype_options():
    dtypes = DtypeOptions((np.float64, np.float32))
    assert all(dtypes.is_satisfied_by(d) for d in (np.float64, np.float32, "float32", np.dtype("f8")))
    assert not any(dtypes.is_satisfied_by(d) for d in (np.float16, "double-ish", None, 3))
    assert str(dtypes) == "a numpy dtype among {numpy.float64, numpy.float32}"


def test_invalid_parameter_is_worded_like_every_parameter_error():
    error = invalid_parameter(KCCA(), "reg", "in (0, 1]", 2.0)
    assert isinstance(error, ValueError) and isinstance(error, TypeError)
    assert str(error) == "The 'reg' parameter of KCCA must be in (0, 1]. Got 2.0 instead."


# ------------------------------------------------------------- every estimator, before work
def expensive(*args, **kwargs):
    raise AssertionError("costly work started before the parameters were checked")


@pytest.fixture(scope="module")
def data():
    return load_dataset("synthetic", n_images=40, image_size=48, seed=1)


def ranker(**params):
    return ImageSentenceRanker(**{"text_kernel": "bow5", "n_components": (4,), "regs": (1.0,), **params})


def fit_ranker(data, **params):
    ranker(**params).fit(data.subset("train"))


def fit_nn(data, **params):
    NearestNeighbour(**params).fit(data.subset("train"))


def fit_image_kernel(data, **params):
    ImageKernel(**params).fit(data.images)


def fit_featurizer(data, **params):
    ImageFeaturizer(**params).fit(data.images)


def fit_text_kernel(data, **params):
    TextKernel(**{"name": "bow5", **params}).fit([[["a", "dog"]]])


def fit_kcca(data, **params):
    K = np.eye(5)
    KCCA(**params).fit(K, K)


def fit_linear_cca(data, **params):
    X = np.random.default_rng(0).normal(size=(10, 3))
    LinearCCA(**{"n_components": 2, **params}).fit(X, X)


def fit_bridge(data, **params):
    FeatureBridgeMethod(**{"encoder": LatentEncoder(np.zeros((80, 2))), **params}).fit(latent_dataset().subset("train"))


def fit_encoder_method(data, **params):
    EncoderMethod(**params).fit(latent_dataset().subset("train"))


def fit_pair_scorer_method(data, **params):
    PairScorerMethod(**params).fit(latent_dataset().subset("train"))


def fit_vse(data, **params):
    VSEEncoder(**params).fit(latent_dataset().subset("train"))


def fit_char_gru(data, **params):
    CharGRUEncoder(**params).fit(latent_dataset().subset("train"))


def cases(fit, owner, bad):
    """One case per (parameter, bad value) of ``bad``: the estimator gets just that parameter."""
    return [(fit, owner, name, {name: value}) for name, value in bad]


CASES = [
    # fit, the estimator the message names, the parameter it names, the parameters given
    *cases(fit_ranker, "ImageSentenceRanker", [
        ("image_kernel", "spiral"), ("text_kernel", "tri9"), ("power", 0.0), ("diag", 0.5),
        ("n_components", ()), ("n_components", (0, 4)), ("n_components", (4.5,)), ("n_components", 4),
        ("regs", ()), ("regs", (-1.0,)), ("regs", (np.inf,)), ("n_select", 0), ("weight_power", np.nan),
        ("kcca_params", "exact"), ("image_kernel_params", ["levels"]), ("preprocessor", "nltk"),
        ("random_state", -1), ("random_state", np.random.RandomState(0)), ("cache", "yes")]),
    (fit_ranker, "ImageSentenceRanker", "n_components", {"n_components": (30,)}),  # 24 training images
    # Parameters handed on to the stages are checked by them, up front too.
    (fit_ranker, "KCCA", "method", {"kcca_params": {"method": "fast"}}),
    (fit_ranker, "ImageKernel", "levels", {"image_kernel_params": {"levels": -1}}),
    (fit_ranker, "ImageFeaturizer", "sift_step", {"image_kernel_params": {"featurizer_params": {"sift_step": 0}}}),
    (fit_ranker, "ImageFeaturizer", "n_words", {"image_kernel_params": {"n_words": {"edges": 3}}}),
    # Keys a stage does not take, or that the system sets itself, named before the stage is built.
    *cases(fit_ranker, "ImageSentenceRanker", [
        ("image_kernel_params", {"bogus": 1}), ("image_kernel_params", {"power": 2}),
        ("image_kernel_params", {"kind": "histo"}), ("kcca_params", {"bogus": 1}),
        ("kcca_params", {"n_components": 3}), ("kcca_params", {"reg": 0.1})]),
    (fit_ranker, "ImageKernel", "featurizer_params", {"image_kernel_params": {"featurizer_params": {"bogus": 1}}}),
    *cases(fit_nn, "NearestNeighbour", [("image_kernel_params", {"bogus": 1}),
                                        ("image_kernel_params", {"random_state": 1})]),
    *cases(fit_image_kernel, "ImageKernel", [("featurizer_params", {"levels": 1}),
                                             ("featurizer_params", {"colour_words": 64})]),
    *cases(fit_nn, "NearestNeighbour", [
        ("text_similarity", "jaccard"), ("image_kernel", "spiral"), ("image_kernel_params", 3),
        ("preprocessor", "nltk"), ("random_state", 1.5), ("cache", None)]),
    (fit_nn, "ImageKernel", "power", {"image_kernel_params": {"power": -1.0}}),
    *cases(fit_image_kernel, "ImageKernel", [
        ("kind", "spiral"), ("levels", -1), ("levels", 1.0), ("power", 0), ("n_words", [128]),
        ("random_state", None), ("backend", "torch"), ("featurizer_params", "x"), ("cache", 1),
        ("progress", "no")]),
    (fit_image_kernel, "ImageFeaturizer", "pixel_step", {"featurizer_params": {"pixel_step": 0}}),
    *cases(fit_featurizer, "ImageFeaturizer", [
        ("feature_types", ("colour", "shape")), ("feature_types", ("colour", "colour")), ("feature_types", ()),
        ("n_words", {"edges": 3}), ("n_words", {"colour": 0}), ("levels", -1), ("levels", 9), ("pixel_step", 0),
        ("sift_step", 2.5), ("sift_size", 0), ("max_samples", 0), ("n_fit_images", 0), ("max_iter", 0),
        ("random_state", -3), ("n_jobs", 0), ("n_jobs", -2), ("cache", "no"), ("progress", None)]),
    *cases(fit_text_kernel, "TextKernel", [
        ("name", "tri9"), ("lam", 0.0), ("max_len", 0), ("random_state", -1), ("corpus", 5),
        ("preprocessor", "nltk")]),
    *cases(fit_kcca, "KCCA", [
        ("n_components", 0), ("reg", 0.0), ("reg", np.inf), ("reg_form", "lasso"), ("kernel_x", "nonsense"),
        ("kernel_y_params", "gamma"), ("center", "yes"), ("method", "fast"), ("rank", 0), ("tol", -1.0),
        ("weight_power", np.inf), ("memory", 3), ("solve_dtype", np.float16)]),
    (fit_kcca, "KCCA", "reg", {"reg": 2.0, "reg_form": "hardoon"}),
    *cases(fit_linear_cca, "LinearCCA", [("n_components", 0), ("n_components", 2.0), ("reg", 0), ("reg", np.nan)]),
    (fit_linear_cca, "LinearCCA", "n_components", {"n_components": 4}),  # more than the 3 columns
    *cases(fit_bridge, "FeatureBridgeMethod", [
        ("encoder", None), ("model", "svm"), ("kernel", "poly"), ("n_components", 0), ("reg", -1.0),
        ("weight_power", np.nan), ("rank", 0), ("gamma_scale", 0), ("random_state", -1)]),
    *cases(fit_encoder_method, "EncoderMethod", [("encoder", None)]),
    *cases(fit_pair_scorer_method, "PairScorerMethod", [("scorer", TinyEncoder())]),
    *cases(fit_vse, "VSEEncoder", [
        ("image_encoder", "vit"), ("word_dim", 0), ("joint_dim", 0), ("min_count", 0), ("margin", -0.1),
        ("lr", 0), ("batch_size", 1), ("max_epochs", 0), ("patience", 0), ("max_train_seconds", 0),
        ("n_threads", 0), ("random_state", -1)]),
    *cases(fit_char_gru, "CharGRUEncoder", [
        ("char_dim", 0), ("hidden_dim", 0), ("attention_dim", 0), ("max_chars", 0)]),
]


@pytest.fixture
def no_costly_work(monkeypatch):
    """Every stage that costs time fails the test if it starts."""
    for target, attribute in [
        (Preprocessor, "process"), (Preprocessor, "process_items"), (ImageFeaturizer, "_map"),
        (ImageFeaturizer, "transform"), (KCCA, "_training_kernel"),
        (LatentEncoder, "embed_images"), (LatentEncoder, "embed_texts"), (TinyEncoder, "embed_images"),
        (VSEEncoder, "_build_vocabulary"), (CharGRUEncoder, "_build_vocabulary"),
    ]:
        monkeypatch.setattr(target, attribute, expensive)
    monkeypatch.setattr("kcca_desc.text.named_kernels.check_items", expensive)
    monkeypatch.setattr("kcca_desc.kcca.linear._inverse_sqrt", expensive)


@pytest.mark.parametrize("fit, owner, name, params", CASES,
                         ids=[f"{fit.__name__[4:]}-{owner}-{name}-{i}" for i, (fit, owner, name, _) in enumerate(CASES)])
def test_bad_parameters_are_named_before_costly_work(data, no_costly_work, fit, owner, name, params):
    with pytest.raises(InvalidParameterError, match=rf"^The '{name}' parameter of {owner} must be .+\. Got .+ instead\.$"):
        fit(data, **params)


def test_the_tripwires_fire_on_good_parameters(data, no_costly_work):
    # Otherwise the test above could pass with checks that come after the work.
    for fit in (fit_ranker, fit_nn, fit_image_kernel, fit_featurizer, fit_text_kernel, fit_kcca, fit_linear_cca,
                fit_bridge):
        with pytest.raises(AssertionError, match="costly work started"):
            fit(data)
    with pytest.raises(AssertionError, match="costly work started"):
        fit_pair_scorer_method(data, scorer=_FittedScorer())
    if importlib.util.find_spec("torch") is not None:  # the trainable encoders' extra
        for fit, params in [(fit_encoder_method, {"encoder": VSEEncoder()}), (fit_vse, {}), (fit_char_gru, {})]:
            with pytest.raises(AssertionError, match="costly work started"):
                fit(data, **params)


class _FittedScorer:
    name = "scorer"

    def score(self, images, texts):
        return np.zeros((len(images), len(texts)))

    fit = staticmethod(expensive)


# ------------------------------------------------------------- data arguments, before work
BAD_ARGUMENTS = [
    (lambda data: ranker().fit(data.subset("train"), dev="dev"),
     r"^ImageSentenceRanker\.fit: dev must be a RetrievalView \(Dataset\.view\), got str$"),
    (lambda data: ranker().fit(data.subset("train"), dev=data.subset("dev")),
     r"^ImageSentenceRanker\.fit: dev must be a RetrievalView .*, got Dataset; take the view of a split with "
     r"dev=data\.view\('dev', 'hodosh'\)$"),
    (lambda data: MultipleKernelRanker(text_kernel="bow5+bow5_idf", n_components=(4,), regs=(1.0,)).fit(
        data.subset("train"), [1]), r"^MultipleKernelRanker\.fit: dev must be a RetrievalView"),
    (lambda data: ImageKernel().fit([1, 2]), r"^train_images must be an ImageSource .*, got list$"),
    (lambda data: ImageFeaturizer().fit(np.zeros((2, 8, 8, 3))), r"^train_images must be an ImageSource .*, got ndarray$"),
    (lambda data: make_text_kernel("tri5", bogus=1),
     r"^make_text_kernel\('tri5'\): unknown parameters \['bogus'\]; TextKernel takes \['cache', 'corpus', "),
]


STAGE_SETTINGS = [
    (lambda: ranker(image_kernel_params={"bogus": 1}),
     r"^The 'image_kernel_params' parameter of ImageSentenceRanker must be a dict of ImageKernel parameters "
     r"\(backend, featurizer_params, levels, n_words, progress\); 'bogus' is not one\. Got \{'bogus': 1\} instead\.$"),
    (lambda: ranker(image_kernel_params={"power": 2}),
     r"^The 'image_kernel_params' parameter of ImageSentenceRanker must be a dict of ImageKernel parameters without "
     r"'power', which ImageSentenceRanker sets itself: use its 'power' parameter instead\."),
    (lambda: ranker(kcca_params={"reg": 0.1}), r"without 'reg', .* use its 'regs' parameter instead\."),
    (lambda: ranker(kcca_params={"bogus": 1, "other": 2}),
     r"KCCA parameters \(center, .*, view_names\); 'bogus', 'other' are not one"),
    (lambda: ranker(image_kernel_params={"featurizer_params": {"sift_step": 4, "bogus": 1}}),
     r"^The 'featurizer_params' parameter of ImageKernel must be a dict of ImageFeaturizer parameters "
     r"\(chunk_size, .*\); 'bogus' is not one"),
    (lambda: MultipleKernelRanker(text_kernel="bow5+bow5_idf", image_kernel="histo", n_components=(4,), regs=(1.0,),
                                  image_kernel_params={"bogus": 1}),
     r"^The 'image_kernel_params' parameter of MultipleKernelRanker must be a dict of ImageKernel parameters"),
    (lambda: MultipleKernelRanker(text_kernel="bow5+bow5_idf", n_components=(4,), regs=(1.0,),
                                  kcca_params={"oversample": 2}),
     r"^The 'kcca_params' parameter of MultipleKernelRanker must be a dict of KCCA parameters .*'oversample' is not one"),
]


@pytest.mark.parametrize("build, message", STAGE_SETTINGS)
def test_settings_handed_to_a_stage_name_the_key_and_what_the_stage_takes(data, no_costly_work, build, message):
    with pytest.raises(InvalidParameterError, match=message):
        build().fit(data.subset("train"))


def test_a_landmark_systems_kcca_params_are_checked_against_landmark_kcca(data, no_costly_work):
    from kcca_desc.methods.scalable import ScalableRanker
    from kcca_desc.methods.scalable_multikernel import ScalableMultipleKernelRanker
    with pytest.raises(InvalidParameterError, match=r"^The 'oversample' parameter of LandmarkKCCA must be"):
        ScalableRanker(text_kernel="bow5", n_components=(4,), regs=(1.0,), kcca_params={"oversample": 0.5}).fit(
            data.subset("train"))
    with pytest.raises(InvalidParameterError, match=r"without 'rank', which ScalableMultipleKernelRanker sets itself"):
        ScalableMultipleKernelRanker(text_kernel="bow5+bow5_idf", n_components=(4,), regs=(1.0,),
                                     kcca_params={"rank": 3}).fit(data.subset("train"))


@pytest.mark.parametrize("call, message", BAD_ARGUMENTS)
def test_bad_arguments_are_named_before_costly_work(data, no_costly_work, call, message):
    with pytest.raises(ParameterError, match=message):
        call(data)


BAD_ARRAYS = [
    (lambda: KCCA().fit(np.full((4, 4), np.nan), np.eye(4)), r"^Input X contains NaN\.$"),
    (lambda: LinearCCA().fit(np.arange(4.0), np.eye(4)), r"^Expected 2D array, got 1D array instead"),
    (lambda: LandmarkKCCA().fit(np.zeros((0, 3)), np.zeros((0, 3))), r"^Found array with 0 sample\(s\)"),
    (lambda: PrecomputedKernel(np.full((3, 3), np.inf)), r"^Input gram contains infinity"),
    (lambda: KernelCombination().fit(np.array([[1.0, np.nan], [0.0, 1.0]])), r"^Input X contains NaN\.$"),
    (lambda: LinearCCA().fit(np.array([[{}], [{}]]), np.eye(2)), r"must be a string or a real number"),
]


@pytest.mark.parametrize("call, message", BAD_ARRAYS)
def test_bad_arrays_raise_the_toolkits_errors(call, message):
    # scikit-learn's checks and messages, the toolkit's classes: `except KccaDescError` catches them.
    with pytest.raises(KccaDescError, match=message):
        call()
