"""Flickr30K and COCO loaders and test pools on small Karpathy-style JSON fixtures."""

import json

import numpy as np
import pytest

from kcca_desc.data import DATASETS, load_dataset
from kcca_desc.data.karpathy import EVALUATION_POOLS, EvaluationPool, load_coco, load_flickr30k, normalise_caption

# Captions as they come in the real files: newlines, tabs, doubled and trailing spaces,
# no space before the full stop, non-ASCII letters, all capitals.
ODD = ["A man riding a horse.\n", "  two dogs   playing\tin the snow ", "A WOMAN'S HAT,ON A CHAIR",
       "Café-au-lait   coloured cat", "a  b"]


def _write(tmp_path, name, images):
    (tmp_path / "img").mkdir(exist_ok=True)
    for item in images:
        folder = tmp_path / "img" / item.get("filepath", "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / item["filename"]).write_bytes(b"not read by the loader")
    path = tmp_path / f"dataset_{name}.json"
    path.write_text(json.dumps({"dataset": name, "images": images}), encoding="utf-8")
    return path, tmp_path / "img"


def _images(splits, n_captions=5, filepath=None):
    images = []
    for i, split in enumerate(splits):
        item = {"filename": f"{i:04d}.jpg", "split": split,
                "sentences": [{"raw": ODD[(i + k) % len(ODD)] + f" {k}", "tokens": ["x"]}
                              for k in range(n_captions(i) if callable(n_captions) else n_captions)]}
        if filepath:
            item["filepath"] = filepath(i)
        images.append(item)
    return images


def test_flickr30k_shape_and_odd_captions(tmp_path):
    path, root = _write(tmp_path, "flickr30k", _images(["train"] * 4 + ["val"] * 2 + ["test"] * 3))
    data = load_flickr30k(path, root)
    assert data.name == "flickr30k"
    assert {s: len(i) for s, i in data.splits.items()} == {"train": 4, "dev": 2, "test": 3}
    assert all(len(c) == 5 for c in data.captions)
    assert data.captions[0][0] == "A man riding a horse. 0"
    assert data.captions[0][1] == "two dogs playing in the snow 1"
    assert data.captions[0][3] == "Café-au-lait coloured cat 3"
    for caps in data.captions:
        for c in caps:
            assert c == " ".join(c.split()) and "\n" not in c and "\t" not in c
    views = EvaluationPool("flickr30k", pool_images=3).views(data)
    assert len(views) == 1 and views[0].n_images == 3 and views[0].n_captions == 15
    assert views[0].protocol == "karpathy"


def test_coco_shape_restval_filepaths_and_cut_captions(tmp_path):
    splits = ["train"] * 3 + ["restval"] * 2 + ["val"] * 2 + ["test"] * 10
    images = _images(splits, n_captions=lambda i: 7 if i == 1 else (6 if i == 8 else 5),
                     filepath=lambda i: "train2014" if splits[i] in ("train", "restval") else "val2014")
    path, root = _write(tmp_path, "coco", images)
    data = load_coco(path, root)
    assert {s: len(i) for s, i in data.splits.items()} == {"train": 5, "dev": 2, "test": 10}
    assert data.image_ids[0] == "train2014/0000.jpg" and data.image_ids[-1] == "val2014/0016.jpg"
    assert all(len(c) == 5 for c in data.captions)
    assert data.metadata["images_with_captions_cut"] == 2
    assert data.metadata["split_sizes"] == {"train": 5, "dev": 2, "test": 10}
    # the registry loads the same data set
    same = load_dataset("coco", root=path, image_root=root)
    assert same.captions == data.captions
    # five folds of two images: consecutive blocks of the test split
    pool = EvaluationPool("coco", pool_images=2, n_folds=5)
    views = pool.views(data)
    assert [v.split for v in views] == [f"test/fold{k}of5" for k in range(1, 6)]
    test_ids = [data.image_ids[i] for i in data.splits["test"]]
    assert [list(v.images.ids) for v in views] == [test_ids[2 * k:2 * k + 2] for k in range(5)]
    assert all(v.n_captions == 10 for v in views)
    with pytest.raises(ValueError, match="has 10 images, but a pool of 5 x 3 images needs 15"):
        EvaluationPool("coco", pool_images=3, n_folds=5).views(data)


def test_too_few_captions_named(tmp_path):
    path, root = _write(tmp_path, "coco", _images(["test"] * 2, n_captions=lambda i: 4 if i else 5))
    with pytest.raises(ValueError, match=r"0001\.jpg.*fewer than 5 captions"):
        load_coco(path, root)


def test_registered_pools_and_data_sets():
    assert EVALUATION_POOLS["coco_1k"].record() == {
        "dataset": "coco", "protocol": "karpathy", "split": "test", "pool_images": 1000,
        "captions_per_image": 5, "n_folds": 5, "fold_averaging": "mean over folds of each metric"}
    assert EVALUATION_POOLS["coco_5k"].pool_images * EVALUATION_POOLS["coco_5k"].n_folds == 5000
    assert EVALUATION_POOLS["flickr30k_1k"].n_folds == 1
    assert {"flickr30k", "coco"} <= set(DATASETS)
    with pytest.raises(ValueError, match="needs option image_root"):
        load_dataset("coco", root="x.json")
    with pytest.raises(ValueError, match="pool_images must be a positive integer"):
        EvaluationPool("coco", pool_images=0)


def test_normalise_caption():
    assert normalise_caption(" a\tb \n c  ") == "a b c"
    assert np.all([normalise_caption(c) == normalise_caption(normalise_caption(c)) for c in ODD])
