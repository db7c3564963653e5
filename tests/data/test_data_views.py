"""Protocol views (hodosh, karpathy) and image sources."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc.data import ArrayImages, Dataset, FileImages, ImageReadError, make_synthetic


def toy_dataset(n_images: int, n_captions: int, n_test: int) -> Dataset:
    ids = [f"im{i}" for i in range(n_images)]
    return Dataset(
        name="toy",
        images=ArrayImages([np.full((2, 2, 3), i, np.uint8) for i in range(n_images)], ids),
        captions=[[f"caption {k} of {image_id}" for k in range(n_captions)] for image_id in ids],
        splits={"test": np.arange(n_images - n_test, n_images)[::-1], "train": np.arange(n_images - n_test)},
    )


def check_gold_consistency(view) -> None:
    """Gold mappings agree with each other and with the caption ids."""
    for i, gold in enumerate(view.annotation_gold):
        assert all(view.caption_image[j] == i for j in gold)
        assert all(view.caption_ids[j].rsplit("#", 1)[0] == view.images.ids[i] for j in gold)
    for j, gold in enumerate(view.search_gold):
        assert gold.tolist() == [view.caption_image[j]]
    assert sum(len(g) for g in view.annotation_gold) == view.n_captions


@settings(max_examples=30, deadline=None)
@given(n_images=st.integers(3, 12), n_captions=st.integers(3, 6), data=st.data())
def test_hodosh_view_one_gold_each_way(n_images, n_captions, data):
    n_test = data.draw(st.integers(1, n_images))
    dataset = toy_dataset(n_images, n_captions, n_test)
    view = dataset.view("test", "hodosh")
    assert view.n_images == view.n_captions == n_test
    assert all(g.tolist() == [i] for i, g in enumerate(view.annotation_gold))
    assert all(len(g) == 1 for g in view.search_gold)
    for image_id, caption_id, caption in zip(view.images.ids, view.caption_ids, view.captions):
        assert caption_id == f"{image_id}#2" and caption == f"caption 2 of {image_id}"
    check_gold_consistency(view)


@settings(max_examples=30, deadline=None)
@given(n_images=st.integers(3, 12), n_captions=st.integers(1, 6), data=st.data())
def test_karpathy_view_all_captions_gold(n_images, n_captions, data):
    n_test = data.draw(st.integers(1, n_images))
    view = toy_dataset(n_images, n_captions, n_test).view("test", "karpathy")
    assert view.n_captions == n_captions * n_test
    assert all(len(g) == n_captions for g in view.annotation_gold)
    assert view.caption_lists()[0] == [f"caption {k} of {view.images.ids[0]}" for k in range(n_captions)]
    check_gold_consistency(view)


def test_views_of_synthetic_data():
    data = make_synthetic(n_images=20, image_size=16, seed=4)
    karpathy = data.view("test", "karpathy")
    assert karpathy.n_images == 4 and karpathy.n_captions == 20
    assert all(len(g) == 5 for g in karpathy.annotation_gold)
    check_gold_consistency(karpathy)
    hodosh = data.view("dev", "hodosh")
    assert hodosh.n_images == hodosh.n_captions == 4
    check_gold_consistency(hodosh)
    assert np.array_equal(hodosh.images.load(1), data.images.load(int(data.splits["dev"][1])))


def test_hodosh_needs_the_caption(tmp_path):
    with pytest.raises(ValueError, match="has 2 captions; the hodosh protocol needs caption #2"):
        toy_dataset(4, 2, 2).view("test", "hodosh")


def test_unknown_protocol_and_split():
    dataset = toy_dataset(4, 5, 2)
    with pytest.raises(ValueError, match="unknown protocol 'coco'; available: hodosh, karpathy"):
        dataset.view("test", "coco")
    with pytest.raises(KeyError, match="no split 'dev'"):
        dataset.view("dev")


# ------------------------------------------------------------------ image files
def test_file_images_decode_rgb(tmp_path):
    import cv2

    rgb = np.zeros((5, 7, 3), np.uint8)
    rgb[..., 0] = 200  # red
    cv2.imwrite(str(tmp_path / "red.png"), rgb[..., ::-1])
    image = FileImages([tmp_path / "red.png"]).load(0)
    assert image.shape == (5, 7, 3) and image.dtype == np.uint8
    assert np.array_equal(image, rgb)


def test_corrupt_image_file_names_the_file(tmp_path):
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 this is not really a JPEG")
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    images = FileImages([bad, empty, tmp_path / "missing.jpg"])
    with pytest.raises(ImageReadError, match="cannot decode image file .*broken.jpg"):
        images.load(0)
    with pytest.raises(ImageReadError, match="empty.jpg"):
        images.load(1)
    with pytest.raises(ImageReadError, match="image file not found: .*missing.jpg"):
        images.load(2)
    with pytest.raises(ImageReadError, match="missing.jpg"):
        images.key(2)


def test_file_image_key_follows_the_content_not_the_path_or_time(tmp_path):
    # Caches keyed by it survive a copy or a fresh checkout of the data, never a changed file.
    original = tmp_path / "a.jpg"
    original.write_bytes(b"same bytes")
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "b.jpg"
    copy.write_bytes(b"same bytes")
    os.utime(copy, ns=(1, 1))
    other = tmp_path / "other.jpg"
    other.write_bytes(b"some bytes")  # same size, other content
    images = FileImages([original, copy, other])
    assert images.key(0) == images.key(1) == "sha1:" + hashlib.sha1(b"same bytes").hexdigest()
    assert images.key(2) != images.key(0)
    # Rewritten in place: a new size or modification time makes the remembered digest stale.
    before = images.key(1)
    copy.write_bytes(b"new bytes!")
    os.utime(copy, ns=(2, 2))
    assert images.key(1) == "sha1:" + hashlib.sha1(b"new bytes!").hexdigest() != before
    assert images.subset([1]).key(0) == images.key(1)


def test_array_image_keys_stay_those_of_the_pixels_served(tmp_path):
    # The key is computed once: no change of the caller's arrays after construction, nor a
    # write through load(), may leave it naming other pixels than the source serves (a stale
    # cache hit).  The caller's writable array, a view of it, and a read-only view of a writable
    # array are all copied; a read-only array that owns its data is shared.
    from kcca_desc.data.images import array_key

    writable = np.zeros((4, 4, 3), np.uint8)
    base = np.zeros((8, 4, 3), np.uint8)
    read_only_view = base[:4]
    read_only_view.flags.writeable = False
    frozen = np.full((4, 4, 3), 7, np.uint8)
    frozen.flags.writeable = False
    images = ArrayImages([writable, base[4:], read_only_view, frozen], ["a", "b", "c", "d"])
    before = [images.key(i) for i in range(4)]
    writable[:] = 200
    base[:] = 100
    assert [images.key(i) for i in range(4)] == before == [array_key(images.load(i)) for i in range(4)]
    with pytest.raises(ValueError, match="read-only"):
        images.load(0)[:] = 50
    assert images.load(3) is frozen and images.subset([0]).load(0) is images.load(0)
    with pytest.raises(AttributeError):
        images.arrays = (writable,)


def test_unreadable_image_file_key_names_the_file(tmp_path):
    folder = tmp_path / "folder.jpg"
    folder.mkdir()  # exists, but reading it fails
    with pytest.raises(ImageReadError, match="cannot read image file .*folder.jpg"):
        FileImages([folder]).key(0)
