"""Pre-trained word vectors distilled from a text encoder, and VSE's and Rei's embeddings started from them."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainable models need the optional torch extra")

from kcca_desc.adapters.families import ENCODER_FAMILIES, register_encoder  # noqa: E402
from kcca_desc.neural import ReiRelevanceScorer, VSEEncoder  # noqa: E402
from kcca_desc.neural.word_vectors import word_vector_matrix  # noqa: E402

from toys import TinyEncoder, as_training_set, make_dataset  # noqa: E402


class HashedWords:
    """A 12-d text encoder: a fixed random vector per text, seeded by its characters."""

    def embed_texts(self, texts):
        return np.array([np.random.default_rng([ord(c) for c in t]).normal(size=12) for t in texts])


class SameVector:
    def embed_texts(self, texts):
        return np.ones((len(texts), 4))


class PixelsOnly:
    def embed_images(self, images):
        return np.zeros((len(images), 3))


@pytest.fixture
def families():
    register_encoder("hashed_words", HashedWords)
    register_encoder("pixels_only", PixelsOnly)
    register_encoder("same_vector", SameVector)
    yield "hashed_words"
    for name in ("hashed_words", "pixels_only", "same_vector"):
        ENCODER_FAMILIES.unregister(name)


def reference_matrix(vocabulary, dim):
    """PCA by an explicit SVD of the centred vectors, then one scale to unit mean variance."""
    words = sorted(vocabulary, key=vocabulary.get)
    X = HashedWords().embed_texts(words)
    X = X - X.mean(axis=0)
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    Z = X @ Vt[:dim].T
    Z /= np.sqrt(np.mean(Z ** 2))
    out = np.zeros((max(vocabulary.values()) + 1, dim))
    out[[vocabulary[w] for w in words]] = Z
    return out


@pytest.mark.parametrize("dim", [12, 5])
def test_word_vectors_are_the_encoders_reduced_by_pca(families, dim):
    vocabulary = {w: i + 2 for i, w in enumerate(["a", "dog", "runs", "on", "the", "grass", "red", "ball",
                                                  "two", "men", "play", "guitar", "sky", "blue"])}
    matrix = word_vector_matrix("hashed_words", vocabulary, dim)
    expected = reference_matrix(vocabulary, dim)
    assert matrix.shape == (16, dim) and matrix.dtype == np.float32
    assert not matrix[:2].any()  # padding and unknown stay zero
    # PCA fixes each component up to its sign.
    signs = np.sign(np.sum(matrix[2:] * expected[2:], axis=0))
    np.testing.assert_allclose(matrix, expected * signs, atol=1e-5)
    assert np.mean(matrix[2:].astype(float) ** 2) == pytest.approx(1.0, rel=1e-5)
    # A scale multiplies the vectors, nothing else.
    small = word_vector_matrix("hashed_words", vocabulary, dim, scale=0.1)
    np.testing.assert_allclose(small, 0.1 * matrix, rtol=1e-5, atol=1e-7)
    assert np.sqrt(np.mean(small[2:].astype(float) ** 2)) == pytest.approx(0.1, rel=1e-5)


def test_bad_word_vector_settings_are_named(families):
    vocabulary = {"a": 2, "dog": 3, "runs": 4}
    with pytest.raises(ValueError, match=r"word_dim=13: .* at most 12 dimensions \(the encoder's\)"):
        word_vector_matrix("hashed_words", vocabulary, 13)
    with pytest.raises(ValueError, match="embeds no texts"):
        word_vector_matrix("pixels_only", vocabulary, 2)
    with pytest.raises(ValueError, match="all 3 words the same vector"):
        word_vector_matrix("same_vector", vocabulary, 2)
    with pytest.raises(ValueError, match="scale must be positive, got 0"):
        word_vector_matrix("hashed_words", vocabulary, 2, scale=0)
    # Refused by fit before the image features are computed.
    image_encoder = TinyEncoder()
    for model in (VSEEncoder, ReiRelevanceScorer):
        for spec, problem in (("no_such_family:x", "no_such_family"), ("pixels_only", "embeds no texts")):
            with pytest.raises(ValueError, match=problem):
                model(image_encoder=image_encoder, word_vectors=spec).fit(make_dataset(n=4))
    assert image_encoder.calls["image"] == 0


def test_a_vocabulary_of_fewer_words_than_dimensions_gives_its_components_and_zeros(families):
    # A small training set: the words span fewer dimensions than the embedding has.
    vocabulary = {"a": 2, "dog": 3, "runs": 4}
    with pytest.warns(UserWarning, match=r"word_dim=5: the 3 words .* span at most 3 dimensions .* the other 2 "
                                         "coordinates start at zero"):
        matrix = word_vector_matrix("hashed_words", vocabulary, 5)
    assert matrix.shape == (5, 5) and not matrix[:, 3:].any()
    np.testing.assert_array_equal(matrix[:, :3], word_vector_matrix("hashed_words", vocabulary, 3))


@pytest.mark.parametrize("model_class", [VSEEncoder, ReiRelevanceScorer])
def test_a_model_of_more_word_dimensions_than_its_words_span_trains(families, model_class, tmp_path, monkeypatch):
    # The default word_dim=300 on a tiny data set (python -m kcca_desc.fit --method vse --n-images 40).
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    data = make_dataset(n=2)
    with pytest.warns(UserWarning, match="the other .* coordinates start at zero"):
        model = model_class(image_encoder=TinyEncoder(), word_vectors="hashed_words", word_dim=12, min_count=3,
                            max_epochs=1, batch_size=8).fit(as_training_set(data))
    assert len(model.vocabulary_) < 12 and model.networks_[0].embed.embedding_dim == 12


#: Per model: its own settings, the scale its word vectors start at, and its sentence vectors.
MODELS = {
    "vse": (VSEEncoder, {"joint_dim": 8}, 1.0, lambda model, texts: model.embed_texts(texts)),
    # Rei's weights start at N(0, init_std), and its word vectors at the same scale.
    "rei": (ReiRelevanceScorer, {"hidden_dim": 8, "init_std": 0.1}, 0.1,
            lambda model, texts: model.sentence_vectors(texts)),
    "rei_unit_scale": (ReiRelevanceScorer, {"hidden_dim": 8, "init_std": 0.1, "word_vector_scale": 1.0}, 1.0,
                       lambda model, texts: model.sentence_vectors(texts)),
}


@pytest.mark.parametrize("freeze", [True, False])
@pytest.mark.parametrize("name", MODELS)
def test_models_start_from_the_word_vectors_and_keep_them_fixed_when_frozen(families, name, freeze, tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    model_class, own, scale, sentence_vectors = MODELS[name]
    data = make_dataset(n=16)
    settings = {**own, "word_dim": 6, "min_count": 1, "max_epochs": 2, "batch_size": 8,
                "image_encoder": TinyEncoder(), "word_vectors": "hashed_words", "freeze_word_vectors": freeze}
    model = model_class(**settings).fit(as_training_set(data))
    start = word_vector_matrix("hashed_words", model.vocabulary_, 6, scale=scale)
    weights = model.networks_[0].embed.weight.detach().numpy()
    assert np.array_equal(weights, start) == freeze
    if not freeze:  # trained from the vectors, not from somewhere else
        assert np.abs(weights - start).max() < 0.5 * np.abs(start).max()
    assert model.networks_[0].embed.weight.requires_grad == (not freeze)
    # Reloaded from its checkpoint, a frozen model is still frozen.
    again = model_class(**settings).fit(as_training_set(data))
    assert again.resumed_from_epoch_ == 2
    assert again.networks_[0].embed.weight.requires_grad == (not freeze)
    np.testing.assert_array_equal(sentence_vectors(again, data.captions[0]), sentence_vectors(model, data.captions[0]))
