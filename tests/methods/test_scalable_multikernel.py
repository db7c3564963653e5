"""Multiple-kernel KCCA through landmark columns (ScalableMultipleKernelRanker, system ``mkl_scalable``):
with every training item a landmark it is the exact MultipleKernelRanker, a sum of linear kernels is the
kernel of the concatenated features, base-kernel columns are computed once per fit whatever the weight
search, no n x n matrix, weights never read the test split, bad parameters refused together."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kcca_desc import load_dataset
from kcca_desc._core.errors import ParameterError
from kcca_desc.cli.fit import main
from kcca_desc.methods import SYSTEMS, MultipleKernelRanker, ScalableMultipleKernelRanker
from kcca_desc.methods.base_kernels import BaseKernel, FeatureKernel

from toys import TinyEncoder, poisoned_copy

IMAGE_PARAMS = {"progress": False, "n_words": {"colour": 16, "texture": 16, "sift": 16}, "levels": 1}
GRID = dict(n_components=(4, 8), regs=(0.1, 1.0), n_select=2, image_kernel_params=IMAGE_PARAMS,
            kcca_params={"solve_dtype": np.float64})


@pytest.fixture(scope="module")
def data():
    return load_dataset("synthetic", n_images=100, image_size=48, seed=3)


def tiny_kernel(side: str, kind: str = "rbf", seed: int = 0) -> FeatureKernel:
    return FeatureKernel(f"tiny{seed}_{side}_{kind}", side, lambda owner: TinyEncoder(seed=seed, cache=False), kind)


def kernels():
    return dict(text_kernel=["bow5", tiny_kernel("text")], image_kernel=["pyramid", tiny_kernel("image")])


def projections(ranker, view) -> dict:
    """The cosine score matrix of every (n, κ) setting of the fitted grid on ``view``."""
    return dict(ranker._projections(*ranker._new_inputs(view.images, view.captions), ranker._grid()))


@pytest.mark.parametrize("weights, normalization", [("uniform", "trace"), ("alignf", "trace"), ("align", "none"),
                                                    ("greedy", "trace")])
def test_every_training_item_a_landmark_gives_the_exact_system(data, weights, normalization):
    train, dev, test = data.subset("train"), data.view("dev"), data.view("test", "karpathy")
    settings = dict(kernel_weights=weights, normalization=normalization, **GRID)
    exact = MultipleKernelRanker(**kernels(), **settings).fit(train, dev)
    landmark = ScalableMultipleKernelRanker(**kernels(), **settings, rank=len(train), chunk_size=16).fit(train, dev)
    for side in ("text", "image"):
        assert list(landmark.weights_[side]) == list(exact.weights_[side])
        np.testing.assert_allclose(list(landmark.weights_[side].values()), list(exact.weights_[side].values()),
                                   rtol=1e-9)
    np.testing.assert_allclose(landmark.kcca_.canonical_correlations_, exact.kcca_.canonical_correlations_, rtol=1e-9)
    assert landmark.selected_ == exact.selected_
    assert len(landmark.weight_curve_) == len(exact.weight_curve_)
    ours, theirs = projections(landmark, test), projections(exact, test)
    for setting, scores in theirs.items():
        np.testing.assert_allclose(ours[setting], scores, atol=1e-8)
    assert landmark.name == "Landmark MKL bow5+tiny0_text_rbf (pyramid+tiny0_image_rbf, rank 60)"


class ConcatenatedEncoder(TinyEncoder):
    """The unit-length embeddings of two TinyEncoders side by side, over sqrt(2): unit length again."""

    def _encode_image_batch(self, arrays):
        parts = [TinyEncoder(seed=seed)._encode_image_batch(arrays) for seed in (0, 1)]
        return np.hstack([p / np.linalg.norm(p, axis=1, keepdims=True) for p in parts]) / np.sqrt(2)


def test_a_sum_of_linear_kernels_is_the_linear_kernel_of_the_concatenated_features(data):
    # u'u2/2 + v'v2/2 = [u, v]'[u2, v2]/2: the same kernel, so the same landmark columns and the same fit,
    # with fewer landmarks than items too (uniform landmarks do not depend on the kernel); equal to the
    # precision of the encoders' float32 embeddings, normalised apart or together.
    train, dev, test = data.subset("train"), data.view("dev"), data.view("test", "karpathy")
    settings = dict(text_kernel="bow5", normalization="none", rank=30, landmarks="uniform", **GRID)
    summed = ScalableMultipleKernelRanker(
        image_kernel=[tiny_kernel("image", "cosine", 0), tiny_kernel("image", "cosine", 1)],
        kernel_weights={"bow5": 1.0, "tiny0_image_cosine": 1.0, "tiny1_image_cosine": 1.0}, **settings)
    both = FeatureKernel("both", "image", lambda owner: ConcatenatedEncoder(cache=False), "cosine")
    concatenated = ScalableMultipleKernelRanker(image_kernel=[both], kernel_weights={"bow5": 1.0, "both": 1.0},
                                                **settings)
    summed.fit(train, dev)
    concatenated.fit(train, dev)
    np.testing.assert_allclose(summed.kcca_.canonical_correlations_, concatenated.kcca_.canonical_correlations_,
                               rtol=1e-6)
    ours, theirs = projections(summed, test), projections(concatenated, test)
    for setting, scores in theirs.items():
        np.testing.assert_allclose(ours[setting], scores, atol=1e-5)


class Guarded(FeatureKernel):
    """A feature kernel that counts the kernel values it computes and refuses n x n matrices."""

    def __init__(self, name, side, seed, n_train, counts):
        super().__init__(name, side, lambda owner: TinyEncoder(seed=seed, cache=False), "rbf")
        self.n_train, self.counts = n_train, counts

    def kernel_function(self):
        function = super().kernel_function()

        def counted(a, b):
            # One side is a chunk (16 rows), a block of a sample (32 rows) or the landmarks (6): never all n items.
            assert min(len(a), len(b)) <= 32 < self.n_train, f"{len(a)} x {len(b)} kernel block"
            self.counts[self.name] = self.counts.get(self.name, 0) + len(a) * len(b)
            return function(a, b)
        return counted

    def train_gram(self):
        raise AssertionError("the n x n training Gram matrix was asked for")

    cross = gram = train_gram


def test_base_kernel_columns_are_computed_once_whatever_the_weight_search_and_no_gram_is_formed(data):
    train, dev = data.subset("train"), data.view("dev")
    n = len(train)

    def fitted(weights):
        counts = {}
        ranker = ScalableMultipleKernelRanker(
            text_kernel=[Guarded(f"t{seed}", "text", seed, n, counts) for seed in (0, 1)],
            image_kernel=[Guarded(f"i{seed}", "image", seed, n, counts) for seed in (0, 1)],
            kernel_weights=weights, rank=6, chunk_size=16, **{**GRID, "n_components": (2, 4)})
        return ranker.fit(train, dev), counts

    uniform, once = fitted("uniform")
    greedy, searched = fitted("greedy")
    aligned, _ = fitted("alignf")
    assert len(greedy.weight_curve_) > 4 and len(uniform.weight_curve_) == 1
    # Training columns, landmark choice and dev columns: as many kernel values for a dozen weight settings as for one.
    assert searched == once and set(once) == {"t0", "t1", "i0", "i1"}
    assert all(isinstance(k, BaseKernel) for k in greedy.base_kernels_["text"])
    assert sum(aligned.weights_["text"].values()) == pytest.approx(1.0)


def test_weights_chosen_on_dev_do_not_change_when_the_test_split_is_poisoned(data):
    def fitted(dataset):
        method = ScalableMultipleKernelRanker(text_kernel="bow5+bow5_sqrtidf", image_kernel="pyramid+histo",
                                              kernel_weights="greedy", rank=30, **GRID)
        return SYSTEMS["mkl_scalable"].fit(method, dataset, "hodosh")

    clean, dirty = fitted(poisoned_copy(data)), fitted(poisoned_copy(data, poison=True))
    assert clean.weights_ == dirty.weights_ and clean.weight_curve_ == dirty.weight_curve_


def test_what_the_landmark_path_cannot_take_is_refused_together_before_any_work():
    with pytest.raises(ParameterError) as error:
        ScalableMultipleKernelRanker(diag=2.0, normalization="diagonal", rank=0).fit(None)  # the data are never read
    message = str(error.value)
    assert "'diag' parameter" in message and "landmark approximation" in message
    assert "'normalization' parameter" in message and "'trace' or 'none'" in message
    assert "'rank' parameter" in message
    with pytest.raises(ParameterError, match="unknown text kernel 'nope'"):
        ScalableMultipleKernelRanker(text_kernel="bow5+nope").fit(None)
    with pytest.raises(ParameterError, match=r"'n_components' parameter .* at most rank=4"):
        ScalableMultipleKernelRanker(text_kernel="bow5", n_components=(8,), regs=(1.0,), rank=4).fit(None)


def test_command_line_runs_the_landmark_multiple_kernel_system(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(["--data", "synthetic", "--n-images", "60", "--method", "mkl_scalable", "--engine", "local",
                 "--rank", "20", "--chunk-size", "16", "--n-components", "4", "--regs", "1",
                 "--text-kernel", "bow5+bow5_idf", "--image-kernel", "pyramid+histo", "--kernel-weights", "alignf",
                 "--colour-words", "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1", "-q",
                 "--out", str(out)])
    assert code == 0
    [result] = json.loads(out.read_text())
    assert result["system"].startswith("Landmark MKL bow5+bow5_idf (pyramid+histo, rank 20)")
    assert result["params"]["rank"] == 20
    chosen = result["params"]["chosen"]["kernel_weights"]
    assert set(chosen) == {"text", "image"} and sum(chosen["text"].values()) == pytest.approx(1.0)
