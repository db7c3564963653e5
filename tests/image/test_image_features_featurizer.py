"""ImageFeaturizer: codebooks on training images, cached pyramid histograms, bad images."""

import numpy as np
import pytest
from sklearn.base import clone

from kcca_desc.data.images import ArrayImages, FileImages, ImageReadError
from kcca_desc.image import features
from kcca_desc.image.features import ImageFeaturizer

SMALL = dict(n_words={"colour": 6, "texture": 5, "sift": 4}, levels=1, pixel_step=3, sift_step=8,
             max_samples=40, max_iter=20, n_jobs=2, progress=False)


def _scenes(n, seed=0, size=40):
    """Random blocky colour scenes, with one grey and one RGBA uint16 image."""
    rng = np.random.default_rng(seed)
    images = []
    for i in range(n):
        blocks = rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)
        image = np.kron(blocks, np.ones((size // 4, size // 4, 1), np.uint8))
        image = np.clip(image + rng.integers(-20, 20, image.shape), 0, 255).astype(np.uint8)
        if i == 1:
            image = image[:, :, 0]
        elif i == 2:
            image = np.concatenate([image, np.full((size, size, 1), 255, np.uint8)], axis=2).astype(np.uint16) * 257
        images.append(image)
    return ArrayImages(images, [f"img{i}.png" for i in range(n)])


@pytest.fixture(scope="module")
def fitted():
    return ImageFeaturizer(**SMALL).fit(_scenes(6))


def test_transform_shapes_and_level_sums(fitted):
    tiny = ArrayImages([np.full((8, 8, 3), 90, np.uint8)], ["tiny.png"])
    for images in (_scenes(4, seed=1), tiny):
        out = fitted.transform(images)
        assert set(out) == {"colour", "texture", "sift"}
        for name, hist in out.items():
            assert hist.shape == (len(images), 5, SMALL["n_words"][name]) and hist.dtype == np.float32
    np.testing.assert_allclose(fitted.transform(_scenes(4, seed=1))["sift"][:, 1:].sum(axis=(1, 2)), 1, atol=1e-5)
    tiny_out = fitted.transform(tiny)
    assert not tiny_out["sift"].any()  # smaller than one SIFT patch: empty histogram
    np.testing.assert_allclose(tiny_out["colour"][0, 0].sum(), 1, atol=1e-6)


def test_same_seed_same_figures_any_thread_count():
    images = _scenes(6)
    a = ImageFeaturizer(**{**SMALL, "n_jobs": 1}, cache=False).fit(images)
    b = ImageFeaturizer(**SMALL, cache=False).fit(images)
    for name in a.codebooks_:
        np.testing.assert_array_equal(a.codebooks_[name].cluster_centers_, b.codebooks_[name].cluster_centers_)
    ha, hb = a.transform(images), b.transform(images)
    for name in ha:
        np.testing.assert_array_equal(ha[name], hb[name])
    c = ImageFeaturizer(**SMALL, cache=False, random_state=1).fit(images)
    assert not np.array_equal(a.codebooks_["colour"].cluster_centers_, c.codebooks_["colour"].cluster_centers_)


def test_cache_hits_are_identical_and_keyed_by_parameters(monkeypatch):
    images = _scenes(5, seed=2)
    featurizer = ImageFeaturizer(**SMALL, random_state=11).fit(images)
    first = featurizer.transform(images)

    def fail(*args, **kwargs):
        raise AssertionError("cache miss: features were recomputed")

    monkeypatch.setattr(ImageFeaturizer, "_extract", fail)
    refit = ImageFeaturizer(**SMALL, random_state=11).fit(images)  # codebooks from the cache
    again = refit.transform(images)
    subset = refit.transform(images.subset([3, 1]))  # any subset of a cached set is a hit
    for name in first:
        np.testing.assert_array_equal(again[name], first[name])
        np.testing.assert_array_equal(subset[name], first[name][[3, 1]])
    with pytest.raises(AssertionError, match="cache miss"):
        refit.set_params(levels=2).transform(images)
    with pytest.raises(AssertionError, match="cache miss"):
        ImageFeaturizer(**{**SMALL, "pixel_step": 2}, random_state=11).fit(images)
    monkeypatch.undo()
    changed = ImageFeaturizer(**{**SMALL, "pixel_step": 2}, random_state=11).fit(images).transform(images)
    assert not np.array_equal(changed["colour"], first["colour"])


def test_a_subset_keeps_only_its_own_cached_histograms_in_memory(monkeypatch):
    # A Dask worker featurising one partition of COCO read every cached chunk of the other
    # partitions and kept them all: up to 6 GB per worker.
    images = _scenes(5, seed=4)
    featurizer = ImageFeaturizer(**SMALL, chunk_size=2).fit(images)
    whole = featurizer.transform(images)  # every histogram cached, in three chunks
    stores = []

    class Recording(features._HistogramStore):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            stores.append(self)

    monkeypatch.setattr(features, "_HistogramStore", Recording)
    subset = images.subset([3, 1])
    out = featurizer.transform(subset)
    assert len(stores) == 3 and all(set(store.rows) == {subset.key(0), subset.key(1)} for store in stores)
    for name in whole:
        np.testing.assert_array_equal(out[name], whole[name][[3, 1]])


def test_codebooks_see_only_a_seeded_subset_of_training_images():
    images = _scenes(8, seed=3)
    a = ImageFeaturizer(**SMALL, n_fit_images=5, cache=False).fit(images)
    b = ImageFeaturizer(**SMALL, n_fit_images=5, cache=False).fit(images)
    np.testing.assert_array_equal(a.codebooks_["sift"].cluster_centers_, b.codebooks_["sift"].cluster_centers_)
    assert a.codebooks_["colour"].n_samples_fit_ == 5 * SMALL["max_samples"]


def test_corrupt_file_is_named(tmp_path, fitted):
    good = tmp_path / "good.png"
    import cv2

    cv2.imwrite(str(good), np.zeros((20, 20, 3), np.uint8))
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"\xff\xd8 not really a jpeg")
    with pytest.raises(ImageReadError, match="corrupt.jpg"):
        fitted.transform(FileImages([good, corrupt]))


def test_bad_array_is_named(fitted):
    images = ArrayImages([np.zeros((20, 20, 3), np.uint8), np.zeros((20, 20, 3), np.int32)], ["ok", "weird.tif"])
    with pytest.raises(ValueError, match="weird.tif.*dtype"):
        fitted.transform(images)


def test_parameter_errors_and_clone():
    with pytest.raises(ValueError, match="feature_types"):
        ImageFeaturizer(feature_types=("colour", "shape")).fit(_scenes(2))
    with pytest.raises(ValueError, match="n_words"):
        ImageFeaturizer(n_words={"edges": 3}).fit(_scenes(2))
    for name, value in [("levels", -1), ("pixel_step", 0), ("sift_step", 2.5), ("sift_size", 0)]:
        with pytest.raises(ValueError, match=name):
            ImageFeaturizer(**{name: value}).fit(_scenes(2))
    featurizer = ImageFeaturizer(**SMALL, feature_types=("colour",))
    assert clone(featurizer).get_params() == featurizer.get_params()
    out = featurizer.fit(_scenes(3)).transform(_scenes(2))
    assert list(out) == ["colour"]


@pytest.mark.flickr8k
def test_flickr8k_images_featurise(flickr8k_root):
    paths = sorted((flickr8k_root / "images").glob("*.jpg"))[:4]
    images = FileImages(paths)
    featurizer = ImageFeaturizer(**{**SMALL, "levels": 2, "pixel_step": 4}).fit(images)
    out = featurizer.transform(images)
    for name, hist in out.items():
        assert hist.shape[:2] == (4, 21)
        np.testing.assert_allclose(hist[:, 5:].sum(axis=(1, 2)), 1, atol=1e-5)



class _FirstUnreadable(ArrayImages):
    def load(self, index):
        if index == 0:
            raise ImageReadError("cannot decode image file (corrupt or unsupported format): first.jpg")
        return super().load(index)


def test_an_unreadable_image_stops_the_run_early(fitted, monkeypatch):
    calls = []
    original = ImageFeaturizer._extract
    monkeypatch.setattr(ImageFeaturizer, "_extract", lambda self, *args: calls.append(1) or original(self, *args))
    n = 300
    images = _FirstUnreadable([np.full((24, 24, 3), i % 256, np.uint8) for i in range(n)], [f"{i}" for i in range(n)])
    with pytest.raises(ImageReadError, match="first.jpg"):
        fitted.transform(images)
    assert len(calls) < 3 * n // 2  # the queued images were cancelled


def test_an_image_kernel_reads_its_training_histograms_only_when_a_gram_needs_them(monkeypatch):
    from kcca_desc.data import make_synthetic
    from kcca_desc.image.kernel import ImageKernel

    data = make_synthetic(n_images=14, image_size=32, seed=3)
    train, new = data.images.subset(range(10)), data.images.subset(range(10, 14))
    computed = ImageKernel(levels=1, progress=False).fit(train)
    gram, cross = computed.train_gram(), computed.cross(new)  # computed: the histograms were needed
    transforms = []
    real_transform = ImageFeaturizer.transform
    monkeypatch.setattr(ImageFeaturizer, "transform", lambda self, images: transforms.append(len(images)) or
                        real_transform(self, images))
    again = ImageKernel(levels=1, progress=False).fit(train)
    np.testing.assert_array_equal(again.train_gram(), gram)
    np.testing.assert_array_equal(again.cross(new), cross)
    assert transforms == []  # both Grams came from the cache
    features = again.train_features_
    assert transforms == [10]
    for name, histograms in computed.train_features_.items():
        np.testing.assert_array_equal(features[name], histograms)


def test_image_grams_are_keyed_by_the_extractor_version_and_the_codebooks(monkeypatch, tmp_path):
    # An extractor whose output changes raises _EXTRACTOR_VERSION: its codebooks and histograms are
    # recomputed, and the Grams of them must be too, not read back from before the change.
    import dataclasses

    from kcca_desc.image.kernel import ImageKernel

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    images = _scenes(8, seed=5)

    def gram(cache=True):
        return ImageKernel(kind="colour_histo", levels=1, n_words={"colour": 6}, progress=False, cache=cache,
                           featurizer_params={"max_samples": 40, "pixel_step": 3}).fit(images).train_gram()

    before = gram()
    colour = features.FEATURE_TYPES["colour"]

    def changed(image, **settings):
        positions, descriptors = colour.extract(image, **settings)
        return positions, np.sqrt(np.abs(descriptors)).astype(descriptors.dtype)

    monkeypatch.setitem(features.FEATURE_TYPES._entries, "colour", dataclasses.replace(colour, extract=changed))
    monkeypatch.setattr(features, "_EXTRACTOR_VERSION", features._EXTRACTOR_VERSION + 1)
    served, fresh = gram(), gram(cache=False)
    assert not np.allclose(before, fresh)
    np.testing.assert_array_equal(served, fresh)
