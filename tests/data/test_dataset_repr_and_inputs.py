"""Data sets print short, and the retrieval systems refuse arrays with one clear error and warn of a test split."""

import warnings

import numpy as np
import pytest

from kcca_desc import DataError, ImageSentenceRanker, NearestNeighbour, ParameterError
from kcca_desc.data import Dataset, SplitLeakWarning, load_dataset, require_dataset


def test_dataset_and_view_reprs_are_one_short_line():
    data = load_dataset("synthetic")
    text = repr(data)
    assert text == "<Dataset 'synthetic': 1,000 images, 5,000 captions; splits train 600, dev 200, test 200>"
    view = repr(data.view("dev", "karpathy"))
    assert view == "<RetrievalView 'synthetic' dev (karpathy): 200 images, 1,000 captions>"


@pytest.mark.parametrize("system", [ImageSentenceRanker, NearestNeighbour])
def test_systems_refuse_arrays_naming_the_estimators_that_take_them(system):
    with pytest.raises(ParameterError, match=rf"^{system.__name__}\.fit: train must be a Dataset .* got ndarray; "
                                             r".*KCCA"):
        system().fit(np.zeros((10, 3)))


def test_fingerprint_identifies_ids_captions_and_splits():
    data = load_dataset("synthetic", n_images=60, seed=0)
    same = load_dataset("synthetic", n_images=60, seed=0)
    other = load_dataset("synthetic", n_images=60, seed=1)
    assert data.fingerprint() == same.fingerprint() != other.fingerprint()
    assert data.subset("train").fingerprint() != data.fingerprint()


def test_fitting_on_a_whole_data_set_warns_that_its_test_split_is_learned_from():
    data = load_dataset("synthetic", n_images=30, seed=0)
    with pytest.warns(SplitLeakWarning, match=r"^NearestNeighbour\.fit: train is the whole data set 'synthetic' "
                                              r"\(splits dev, test, train\), so it learns from its 6 test images; "
                                              r"pass train=data\.subset\('train'\)"):
        require_dataset(data, "NearestNeighbour.fit")
    one_image = Dataset("one", data.images, data.captions, {"train": np.arange(29), "test": np.array([29])})
    with pytest.warns(SplitLeakWarning, match="its 1 test image;"):
        require_dataset(one_image, "fit")
    # One split, whichever it is, is the caller's choice: the train split, or the test split on purpose.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        require_dataset(data.subset("train"), "fit")
        require_dataset(data.subset("test"), "fit")


def test_a_system_fitted_on_a_whole_data_set_warns_from_the_callers_line():
    data = load_dataset("synthetic", n_images=30, seed=0)
    with pytest.warns(SplitLeakWarning) as caught:
        NearestNeighbour(cache=False).fit(data)
    assert caught[0].filename == __file__


def test_a_str_for_an_images_captions_is_refused_not_split_into_letters():
    data = load_dataset("synthetic", n_images=30, seed=0).subset("train")
    n = len(data)
    with pytest.raises(ParameterError, match=r"^dataset 'x': captions\[0\] is a str \('dog'\), not a list of "
                                             r"captions; .*wrap it in a list, \[caption\]"):
        Dataset("x", data.images, ["dog"] * n, {"train": np.arange(n)})
    with pytest.raises(ParameterError, match=r"^dataset 'x': captions\[1\] must be a list of str .*got NoneType"):
        Dataset("x", data.images, [["a dog"], None] + [["a dog"]] * (n - 2), {"train": np.arange(n)})


@pytest.mark.parametrize("change, error, message", [
    (dict(images=[np.zeros((8, 8, 3), np.uint8)] * 18), ParameterError,
     r"^dataset 'x': images must be an ImageSource .*got list$"),
    (dict(splits=[np.arange(24)]), ParameterError, r"^dataset 'x': splits must be a mapping .*got list$"),
    (dict(splits={"train": ["a"]}), DataError, r"^dataset 'x': split 'train' must hold integer image indices, "
                                               r"got strings such as 'a'$"),
    (dict(splits={"train": [0.7, 1.9]}), DataError, r"^dataset 'x': split 'train' must hold integer image "
                                                    r"indices, got floats such as 0\.7$"),
    (dict(splits={"train": [[0, 1]]}), DataError, r"^dataset 'x': split 'train' must be a 1-D sequence of image "
                                                  r"indices, got shape \(1, 2\)$"),
    (dict(splits={"train": [[0, 1], [2]]}), DataError, r"^dataset 'x': split 'train' must be a 1-D sequence"),
    (dict(splits={"train": np.ones(24, bool)}), DataError, r"^dataset 'x': split 'train' is a boolean mask; "
                                                           r"pass its image indices, np\.flatnonzero\(mask\)$"),
    (dict(splits={"dev": [0, 18]}), DataError, r"^dataset 'x': split 'dev' has an index out of range \[0, 18\): 18$"),
    (dict(hodosh_caption=-1), ParameterError, r"^dataset 'x': hodosh_caption must be a non-negative int .*got -1$"),
    (dict(hodosh_caption=1.0), ParameterError, r"^dataset 'x': hodosh_caption must be a non-negative int .*got 1\.0$"),
])
def test_the_constructor_refuses_bad_images_splits_and_hodosh_caption(change, error, message):
    data = load_dataset("synthetic", n_images=30, seed=0).subset("train")
    parts = dict(name="x", images=data.images, captions=data.captions, splits={"train": np.arange(len(data))})
    with pytest.raises(error, match=message):
        Dataset(**{**parts, **change})


def test_the_constructor_keeps_empty_and_integer_splits():
    data = load_dataset("synthetic", n_images=30, seed=0).subset("train")
    made = Dataset("x", data.images, data.captions, {"train": [0, np.int32(3)], "dev": [], "test": range(2)},
                   hodosh_caption=np.int64(1))
    assert {split: idx.tolist() for split, idx in made.splits.items()} == {"train": [0, 3], "dev": [], "test": [0, 1]}
    assert all(idx.dtype == np.int64 for idx in made.splits.values())
    assert made.hodosh_caption == 1 and type(made.hodosh_caption) is int
