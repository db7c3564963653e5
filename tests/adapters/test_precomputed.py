"""Image features read from a file by image id: round trip, the family spec, and bad files."""

import numpy as np
import pytest

from kcca_desc.adapters.families import build_encoder
from kcca_desc.adapters.precomputed import PrecomputedImageEncoder, save_image_features
from kcca_desc.data.images import ArrayImages
from kcca_desc._core.errors import DataError, MissingDataFileError

from toys import TinyEncoder


def _images(n=6, seed=0):
    rng = np.random.default_rng(seed)
    return ArrayImages([rng.integers(0, 256, (8, 8, 3), dtype=np.uint8) for _ in range(n)],
                       [f"img{i}.jpg" for i in range(n)])


def test_saved_features_read_back_by_id_in_any_order(tmp_path):
    images = _images()
    path = save_image_features(tmp_path / "f.npz", TinyEncoder(), images)
    encoder = PrecomputedImageEncoder(path)
    expected = TinyEncoder().embed_images(images)
    np.testing.assert_array_equal(encoder.embed_images(images), expected)
    order = [4, 0, 2]
    np.testing.assert_array_equal(encoder.embed_images(images.subset(order)), expected[order])
    assert encoder.name == TinyEncoder().name and encoder.dim == {"image": expected.shape[1]}
    assert encoder.embed_images(images).dtype == np.float32


def test_float16_storage_and_the_family_spec(tmp_path):
    images = _images()
    path = save_image_features(tmp_path / "f.npz", TinyEncoder(), images, dtype=np.float16)
    encoder = build_encoder(f"features:{path}", cache=True)
    np.testing.assert_allclose(encoder.embed_images(images), TinyEncoder().embed_images(images), rtol=1e-3)
    with pytest.raises(ValueError, match="features:/path/to/features.npz"):
        build_encoder("features")


def test_identity_follows_the_file_contents(tmp_path):
    path = save_image_features(tmp_path / "f.npz", TinyEncoder(), _images())
    before = PrecomputedImageEncoder(path).identity("image")
    save_image_features(path, TinyEncoder(), _images(seed=1))
    assert PrecomputedImageEncoder(path).identity("image") != before


def _write(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("arrays, message", [
    ({"ids": np.array(["a", "b"])}, "lacks features"),
    ({"ids": np.array(["a", "b"]), "features": np.zeros((3, 2))}, "one row per id"),
    ({"ids": np.array(["a", "a"]), "features": np.zeros((2, 2))}, "repeated image ids"),
    ({"ids": np.array(["a", "b"]), "features": np.array([[0.0, np.nan], [1.0, 1.0]])}, "non-finite .* 'a'"),
])
def test_bad_files_are_named_with_what_is_wrong(tmp_path, arrays, message):
    path = _write(tmp_path / "bad.npz", **arrays)
    with pytest.raises(DataError, match=message):
        PrecomputedImageEncoder(path).embed_images(_images(2))


def test_missing_file_and_missing_images_are_named(tmp_path):
    with pytest.raises(MissingDataFileError, match="not found"):
        PrecomputedImageEncoder(tmp_path / "none.npz").embed_images(_images(2))
    path = _write(tmp_path / "f.npz", ids=np.array(["img0.jpg"]), features=np.ones((1, 2)))
    with pytest.raises(DataError, match="no features for 1 image, e.g. 'img1.jpg'"):
        PrecomputedImageEncoder(path).embed_images(_images(2))


def _object_ids(path):
    return _write(path, ids=np.array(["a", "b"], dtype=object), features=np.zeros((2, 2)))


def _truncated(path):
    _write(path, ids=np.array(["a", "b"]), features=np.zeros((2, 2)))
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def _damaged(path):
    np.savez_compressed(path, ids=np.array(["a", "b"]), features=np.ones((50, 40)))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("make", [
    lambda path: path.write_text("bad\n"),
    lambda path: path.write_bytes(b"\xff\xd8\xff\xe0" + bytes(100)),  # a JPEG renamed .npz
    _truncated, _damaged, _object_ids,
    lambda path: np.save(path.with_suffix(".npy"), np.zeros(3)) or path.with_suffix(".npy").rename(path),
], ids=["text", "jpeg", "truncated", "damaged", "object-array", "npy"])
def test_a_file_that_is_no_features_archive_is_one_data_error_naming_it(tmp_path, make):
    # NumPy's own errors (zip, pickle, zlib) must not escape: one DataError naming the file.
    path = tmp_path / "bad.npz"
    make(path)
    with pytest.raises(DataError, match=f"{path}: not a features file"):
        PrecomputedImageEncoder(path).embed_images(_images(2))


def test_ids_that_are_no_list_are_a_data_error(tmp_path):
    path = _write(tmp_path / "f.npz", ids=np.array([["a", "b"]]), features=np.zeros((2, 2)))
    with pytest.raises(DataError, match="'ids' must be a list"):
        PrecomputedImageEncoder(path).embed_images(_images(2))
