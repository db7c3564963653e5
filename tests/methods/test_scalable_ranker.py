"""The landmark KCCA system: with every training item a landmark it is the exact system."""

import numpy as np
import pytest

from kcca_desc import ImageSentenceRanker, load_dataset
from kcca_desc._core.errors import ParameterError
from kcca_desc.methods import scalable
from kcca_desc.methods.scalable import ScalableRanker

IMAGE_PARAMS = {"progress": False, "n_words": {"colour": 16, "texture": 16, "sift": 16}, "levels": 1}
GRID = dict(text_kernel="tri5", n_components=(4, 8), regs=(0.1, 1.0), n_select=2, image_kernel_params=IMAGE_PARAMS,
            kcca_params={"solve_dtype": np.float64})


@pytest.fixture(scope="module")
def data():
    return load_dataset("synthetic", n_images=100, image_size=48, seed=3)


def test_all_training_items_as_landmarks_give_the_exact_system(data, tmp_path):
    train, dev = data.subset("train"), data.view("dev")
    test = data.view("test", "karpathy")
    exact = ImageSentenceRanker(**GRID).fit(train, dev)
    landmark = ScalableRanker(**GRID, rank=len(train), chunk_size=16, store=str(tmp_path)).fit(train, dev)
    for ours, theirs in zip(landmark.dev_results_, exact.dev_results_):
        assert ours["n_components"] == theirs["n_components"] and ours["reg"] == theirs["reg"]
        for task in ("annotation", "search"):
            assert ours[task]["R@1"] == pytest.approx(theirs[task]["R@1"])
            assert ours[task]["median_rank"] == pytest.approx(theirs[task]["median_rank"])
    assert landmark.selected_ == exact.selected_
    a, b = landmark.score(test.images, test.captions), exact.score(test.images, test.captions)
    # Borda counts of the same models: equal up to ties broken by float noise
    assert np.mean(a.annotation == b.annotation) > 0.99 and np.mean(a.search == b.search) > 0.99


def test_scores_fused_in_blocks_of_queries_equal_one_block_and_words_are_shared(data, monkeypatch):
    train, dev, test = data.subset("train"), data.view("dev"), data.view("test", "karpathy")
    model = ScalableRanker(**GRID, rank=40).fit(train, dev)
    whole = model.score(test.images, test.captions)
    # A few queries per block: 8 bytes x candidates x selected models per query.
    monkeypatch.setattr(scalable, "_SCORE_BLOCK_BYTES", 3 * 8 * len(test.captions) * GRID["n_select"])
    blocked = model.score(test.images, test.captions)
    np.testing.assert_array_equal(blocked.annotation, whole.annotation)
    np.testing.assert_array_equal(blocked.search, whole.search)
    # One string object per word type in the training items.
    words = [w for item in model.train_items_ for sentence in item for w in sentence]
    assert len({id(w) for w in words}) == len(set(words)) < len(words)


def test_caption_level_pairs_and_parameters(data):
    train = data.subset("train")
    model = ScalableRanker(**{**GRID, "n_components": (4,), "regs": (1.0,)}, rank=40, pairs="caption").fit(train)
    assert model.kcca_.n_samples_fit_ == 5 * len(train)
    scores = model.score(data.subset("test").images, ["a red circle", "a blue square on grass"])
    assert np.all(np.isfinite(scores.annotation)) and scores.annotation.shape == (20, 2)
    with pytest.raises(ParameterError, match="diag"):
        ScalableRanker(**GRID, diag=2.0).fit(train, data.view("dev"))
    with pytest.raises(ValueError, match="pairs"):
        ScalableRanker(pairs="word").fit(train)


def test_a_fit_that_cannot_succeed_stops_before_any_kernel(data, monkeypatch):
    def compute_kernels(*args):
        raise AssertionError("the kernels were computed")

    monkeypatch.setattr(ScalableRanker, "_training_views", compute_kernels)
    train = data.subset("train")
    with pytest.raises(ParameterError, match=r"'n_components' parameter of ScalableRanker must be at most rank=4"):
        ScalableRanker(**GRID, rank=4).fit(train, data.view("dev"))
    with pytest.raises(ParameterError, match=r"^ScalableRanker: a grid of 4 \(n, reg\) settings needs a dev view"):
        ScalableRanker(**GRID, rank=40).fit(train)


def test_command_line_runs_the_scalable_system(tmp_path, capsys):
    from kcca_desc.evaluate import load_results
    from kcca_desc.cli.fit import main

    out = tmp_path / "results.json"
    code = main(["--data", "synthetic", "--n-images", "60", "--method", "kcca_scalable", "--engine", "local",
                 "--rank", "20", "--chunk-size", "16", "--n-components", "4", "--regs", "1", "--text-kernel", "bow5",
                 "--colour-words", "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1", "-q",
                 "--out", str(out)])
    assert code in (0, None)
    (result,) = load_results(out)
    # The label shows the settings that differ from the defaults and change the figures.
    assert result.system == "Landmark KCCA bow5 (pyramid, rank 20) n=4 κ=1 L=1 words=colour:16,texture:16,sift:16"
    assert result.params["rank"] == 20 and result.params["chunk_size"] == 16  # the estimator's, resolved
    assert result.extras["command"]["settings"]["engine"] == "local"


def test_command_line_warns_of_a_rank_above_the_training_images(tmp_path, capsys):
    # --rank 500 on 36 training images ran on 36 landmarks without a word (rank_x_ alone said so).
    from kcca_desc.cli.fit import main

    code = main(["--data", "synthetic", "--n-images", "60", "--method", "kcca_scalable", "--engine", "local",
                 "--rank", "500", "--n-components", "4", "--regs", "1", "--text-kernel", "bow5", "--colour-words",
                 "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1", "-q", "--no-cache"])
    assert code in (0, None)
    err = capsys.readouterr().err
    assert "warning: 36 training items give at most 36 landmarks per view: rank=36 is used instead of 500\n" in err
    assert "Traceback" not in err


def test_stored_image_features_are_keyed_by_the_codebooks(data, tmp_path, monkeypatch):
    # Codebooks learnt on other training images give other histograms of the same test images:
    # the chunk store of the first fit must not serve the second.
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "cache"))
    images = data.subset("train").images
    test = data.subset("test").images
    params = {"progress": False, "n_words": {"colour": 8}, "featurizer_params": {"n_fit_images": 20, "max_samples": 20}}

    def features(train, cache):
        model = ScalableRanker(image_kernel="colour_histo", image_kernel_params=params, cache=cache,
                               store=str(tmp_path / "store"))
        model.image_kernel_ = model._image_kernel().fit_codebooks(train)
        return np.asarray(model._features(test)["colour"][:])

    first = features(images.subset(range(0, 20)), True)
    served = features(images.subset(range(20, 40)), True)
    fresh = features(images.subset(range(20, 40)), False)
    assert not np.array_equal(first, fresh)
    np.testing.assert_array_equal(served, fresh)
