"""Every kind of cache entry, damaged on disk: the run warns once naming it and gives the figures of
a clean run, never a silent change (features, codebooks, image and text Grams, the KCCA solver's
spectra and solutions, trained checkpoints)."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcca_desc import ImageSentenceRanker, load_dataset
from kcca_desc._core.cache import (
    CacheWarning,
    NpzCache,
    PickleCache,
    cache_key,
    read_json_entry,
    write_json_entry,
)

IMAGE_PARAMS = {"progress": False, "n_words": {"colour": 6, "texture": 5, "sift": 4}, "levels": 1}

#: Cache sub-directory of each kind of entry a KCCA system writes.
KINDS = {
    "features": "pyramid_histograms",
    "codebooks": "codebooks",
    "image kernel": "image_gram",
    "text kernel": "text_gram",
    "spectra": "kcca_spectra/spectra",
    "solutions": "kcca_spectra/solutions",
}


def _flip(data: bytes, at: float = 0.5, n: int = 16) -> bytes:
    """``n`` bytes inverted from the relative position ``at``: parsing alone may not notice."""
    start = min(int(at * len(data)), len(data) - n)
    return data[:start] + bytes(b ^ 0xFF for b in data[start:start + n]) + data[start + n:]


DAMAGES = {
    "truncated": lambda data: data[: len(data) // 2],
    "random bytes": lambda data: np.random.default_rng(0).bytes(len(data)),
    "flipped bytes": _flip,
}


def _fit_and_score(data) -> tuple[np.ndarray, np.ndarray]:
    ranker = ImageSentenceRanker(text_kernel="bow5", n_components=(2, 4), regs=(0.1, 1.0), n_select=2,
                                 image_kernel_params=IMAGE_PARAMS)
    ranker.fit(data.subset("train"), dev=data.view("dev"))
    test = data.view("test")
    scores = ranker.score(test.images, test.captions)
    return scores.annotation, scores.search


def _rerun(data):
    """A rerun's scores and the cache warnings it gave."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        scores = _fit_and_score(data)
    return scores, [str(w.message) for w in record if issubclass(w.category, CacheWarning)]


@pytest.fixture(scope="module")
def data():
    return load_dataset("synthetic", n_images=30, image_size=32, seed=3)


@pytest.fixture(scope="module")
def clean(data, tmp_path_factory):
    """A clean run's cache (kept aside) and scores."""
    root = tmp_path_factory.mktemp("clean") / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KCCA_DESC_CACHE", str(root))
        scores = _fit_and_score(data)
    for subdir in KINDS.values():
        assert list((root / subdir).rglob("*.npz")), f"the run wrote no {subdir} entry"
    return root, scores


@pytest.fixture
def cache(clean, tmp_path, monkeypatch):
    """A copy of the clean run's cache, used by this test's run."""
    root = tmp_path / "cache"
    shutil.copytree(clean[0], root)
    monkeypatch.setenv("KCCA_DESC_CACHE", str(root))
    return root


def _assert_same(scores, reference):
    for ours, theirs in zip(scores, reference):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_entry_of_every_kind_is_reported_once_and_recomputed(data, clean, cache, kind, damage):
    entry = sorted((cache / KINDS[kind]).rglob("*.npz"))[0]
    entry.write_bytes(DAMAGES[damage](entry.read_bytes()))
    if kind == "features":
        # Histograms are read only for a Gram the cache lacks (ImageKernel.train_features_).
        shutil.rmtree(cache / KINDS["image kernel"])
    scores, warned = _rerun(data)
    _assert_same(scores, clean[1])
    assert len(warned) == 1, warned
    assert str(entry) in warned[0] and "discarded and recomputed" in warned[0]
    # Said in the cache's terms, not a parser's guess at random bytes.
    assert "allow_pickle" not in warned[0] and "\n" not in warned[0]
    assert entry.read_bytes()[:16] == b"KCCA-DESC-SHA256"  # rewritten whole
    # The next run finds the cache sound again.
    again, warned = _rerun(data)
    _assert_same(again, clean[1])
    assert warned == []


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 10_000), at=st.floats(0, 1), n=st.integers(1, 16))
def test_any_byte_flip_in_any_entry_is_reported_or_harmless(data, clean, tmp_path_factory, which, at, n):
    root = tmp_path_factory.mktemp("flip") / "cache"
    shutil.copytree(clean[0], root)
    entries = sorted(root.rglob("*.npz"))
    entry = entries[which % len(entries)]
    entry.write_bytes(_flip(entry.read_bytes(), at, n))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KCCA_DESC_CACHE", str(root))
        scores, warned = _rerun(data)
    _assert_same(scores, clean[1])
    assert warned == [] or (len(warned) == 1 and str(entry) in warned[0])


@settings(max_examples=200, deadline=None)
@given(payload=st.binary(min_size=1, max_size=200), at=st.floats(0, 1), mask=st.integers(1, 255),
       kind=st.sampled_from([NpzCache, PickleCache]))
def test_any_byte_flip_of_a_stored_entry_is_reported(tmp_path_factory, payload, at, mask, kind):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KCCA_DESC_CACHE", str(tmp_path_factory.mktemp("entries")))
        store = kind("property")
        value = {"x": np.frombuffer(payload, dtype=np.uint8)}
        store.save(cache_key(n=1), value)
        path = store.path(cache_key(n=1))
        data = bytearray(path.read_bytes())
        data[min(int(at * len(data)), len(data) - 1)] ^= mask
        path.write_bytes(bytes(data))
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            read = store.load(cache_key(n=1))
    warned = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    # A checksum leaves no flip harmless: every one is reported, and nothing damaged is returned.
    assert read is None and len(warned) == 1 and str(path) in warned[0]


@settings(max_examples=100, deadline=None)
@given(record=st.dictionaries(st.text(max_size=8), st.integers() | st.none() | st.text(max_size=8), min_size=1),
       at=st.floats(0, 1), mask=st.integers(1, 255))
def test_any_byte_flip_of_a_json_entry_is_reported(tmp_path_factory, record, at, mask):
    # The JSON entries: the lineage records beside checkpoints, the seals of the Zarr stores'
    # metadata (read as the lineage is, accepting records of before checksums).
    path = tmp_path_factory.mktemp("json") / "lineage.json"
    write_json_entry(path, record)
    data = bytearray(path.read_bytes())
    data[min(int(at * len(data)), len(data) - 1)] ^= mask
    path.write_bytes(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read = read_json_entry(path, legacy=True)
    warned = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert read is None and len(warned) == 1 and str(path) in warned[0] and not path.exists()


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_checkpoint_is_reported_once_and_not_loaded(tmp_path, damage):
    pytest.importorskip("torch", reason="checkpoints are torch files")
    from kcca_desc.neural.checkpoints import (
        CHECKPOINT_FORMAT,
        read_checkpoint,
        write_checkpoint,
    )

    path = tmp_path / "run" / "state.pt"
    state = {"format": CHECKPOINT_FORMAT, "finished": True, "network": {"w": np.arange(50.0)}}
    write_checkpoint(path, state)
    path.write_bytes(DAMAGES[damage](path.read_bytes()))
    with pytest.warns(CacheWarning) as record:
        assert read_checkpoint(path) is None  # trained afresh (tests/neural/test_trainable_checkpoint.py)
    warned = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert len(warned) == 1 and str(path) in warned[0] and not path.exists()
