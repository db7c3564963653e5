"""Data sets print short, and the retrieval systems refuse arrays with one clear error."""

import numpy as np
import pytest

from kcca_desc import ImageSentenceRanker, NearestNeighbour, ParameterError
from kcca_desc.data import load_dataset


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
