"""load_dataset: every name, option checking, clear errors."""

from __future__ import annotations

import re

import pytest
from test_data_byod import GOOD_TSV, touch_images, write_tsv
from test_data_flickr8k import MINI_SPLITS, mini_captions, write_flickr8k

from kcca_desc.data import DATASETS, load_dataset, make_synthetic


def test_names():
    assert tuple(DATASETS) == ("synthetic", "flickr8k", "json", "flickr30k", "coco", "tsv")


def test_unknown_name_lists_the_available_ones():
    with pytest.raises(ValueError, match="unknown data set 'mscoco'; available: synthetic, flickr8k, json, "
                                         "flickr30k, coco, tsv"):
        load_dataset("mscoco")


def test_synthetic_is_make_synthetic():
    via_registry = load_dataset("synthetic", seed=3, n_images=6, image_size=16, image_root=None)
    direct = make_synthetic(n_images=6, seed=3, image_size=16)
    assert via_registry.captions == direct.captions
    assert via_registry.images.load(5).tobytes() == direct.images.load(5).tobytes()


def test_synthetic_takes_no_root(tmp_path):
    message = f"the synthetic data set is generated from the seed and takes no root (CLI: --data-root), got {str(tmp_path)!r}"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        load_dataset("synthetic", root=tmp_path)
    assert not DATASETS["synthetic"].takes_root and DATASETS["flickr8k"].takes_root


def test_option_the_loader_does_not_take():
    message = "data set 'flickr8k' takes no option image_size, n_images; its options: captions"
    with pytest.raises(ValueError, match=message):
        load_dataset("flickr8k", n_images=10, image_size=32)


def test_flickr8k(tmp_path):
    root = write_flickr8k(tmp_path, mini_captions(), MINI_SPLITS)
    data = load_dataset("flickr8k", root=root, captions="lemma", n_images=None)
    assert data.name == "flickr8k" and len(data) == 6


def test_tsv_and_json_need_their_file(tmp_path):
    for name in ("tsv", "json"):
        with pytest.raises(ValueError, match=f"data set '{name}' needs root=<path of the {name.upper()} file>"):
            load_dataset(name)
    with pytest.raises(ValueError, match="data set 'json' needs option image_root \\(CLI: --image-root\\)"):
        load_dataset("json", root=tmp_path / "x.json")


def test_tsv(tmp_path):
    touch_images(tmp_path, "pics/a.jpg", "pics/b.jpg", "pics/c.jpg")
    data = load_dataset("tsv", root=write_tsv(tmp_path, GOOD_TSV), seed=5)
    assert data.image_ids == ("pics/a.jpg", "pics/b.jpg", "pics/c.jpg")
