"""Registries of named choices: the generic type, and additions through the public API reaching the CLI."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from kcca_desc.cli.fit import _make_method, build_parser, main
from kcca_desc.image import FEATURE_TYPES, IMAGE_KERNELS, FeatureType, ImageFeaturizer, ImageKernel, ImageKernelSpec
from kcca_desc.kernels.image import image_kernel, pyramid_cell_weights, whole_image_cell_weights
from kcca_desc.kernels.image.features import as_float_grey, grid_positions
from kcca_desc.kernels.text import document_idf, trigram_kernel
from kcca_desc.kernels.text.similarity import (AlignmentSimilarity, AverageSimilarity, DistributionalSimilarity,
                                               MaxSimilarity)
from kcca_desc.evaluate.results import format_task_figure
from kcca_desc.data import make_synthetic
from kcca_desc.methods import ImageSentenceRanker, NearestNeighbour
from kcca_desc.methods.registry import SYSTEMS, Setting, System
from kcca_desc._core.settings import unlabelled
from kcca_desc._core.registry import Registry, UnknownNameError
from kcca_desc.tasks import TASKS
from kcca_desc.text import TEXT_KERNELS, Preprocessor, TextKernelSpec, make_text_kernel
from kcca_desc.text.named_kernels import WORD_SIMILARITIES

from toys import tagged_items


# ------------------------------------------------------------------------------ the registry type
def test_register_lookup_and_order():
    reg = Registry("shape")
    reg.register("square", len, help="four sides")

    @reg.register("circle")
    def circle():
        """Round.

        More text that is not the help.
        """

    assert circle.__name__ == "circle"  # the decorator returns its argument
    assert list(reg) == ["square", "circle"] and len(reg) == 2 and "circle" in reg
    assert reg["square"] is len and reg.get("triangle") is None
    assert reg.help("square") == "four sides" and reg.help("circle") == "Round."
    assert reg.describe() == "square: four sides; circle: Round."


def test_unknown_names_list_the_registered_ones():
    reg = Registry("shape")
    reg.register("square", 1)
    reg.register("circle", 2)
    with pytest.raises(UnknownNameError, match=r"^unknown shape 'hexagon'; available: square, circle$"):
        reg["hexagon"]
    with pytest.raises(ValueError, match="available: square, circle"):  # a bad parameter value too
        reg.help("hexagon")
    with pytest.raises(KeyError):
        reg[["not", "hashable"]]


def test_duplicates_are_refused_unless_replaced_and_unregister_removes():
    reg = Registry("shape")
    reg.register("square", 1)
    with pytest.raises(ValueError, match="shape 'square' is already registered; pass replace=True"):
        reg.register("square", 2)
    assert reg["square"] == 1
    reg.register("square", 2, replace=True)
    assert reg["square"] == 2
    assert reg.unregister("square") == 2 and "square" not in reg and list(reg) == []
    with pytest.raises(UnknownNameError):
        reg.unregister("square")
    with pytest.raises(ValueError, match="non-empty string"):
        reg.register("", 3)


def test_a_registry_is_read_only_as_a_mapping():
    reg = Registry("shape")
    with pytest.raises(TypeError):
        reg["square"] = 1


# --------------------------------------------------------------------------------- text kernels
def test_text_kernel_descriptions_are_json_and_distinct_except_for_aliases():
    # The description keys the on-disk Grams: two different kernels must never share one.
    descriptions = {name: json.dumps(spec.description, sort_keys=True) for name, spec in TEXT_KERNELS.items()}
    assert descriptions["tri_sem"] == descriptions["tri5_a_dext_ic_idf"]
    assert TEXT_KERNELS["tri_sem"] is TEXT_KERNELS["tri5_a_dext_ic_idf"]
    distinct = {id(spec) for spec in TEXT_KERNELS.values()}
    assert len(set(descriptions.values())) == len(distinct) == len(TEXT_KERNELS) - 1
    # The keys of the Grams cached before the registry existed.
    assert TEXT_KERNELS["bow5_sqrtidf"].description == {"family": "bow", "single_caption": False,
                                                        "weighting": "sqrt_idf"}
    assert TEXT_KERNELS["tri_sem"].description == {"family": "tri", "single_caption": False, "use_idf": True,
                                                   "source": "a_dext_ic"}


def test_composed_word_similarity_equals_the_composition_written_out():
    items, tags = tagged_items(20, 4)
    corpus = ["The dog runs on the grass.", "A boy rides a bike.", "The girl swims in the water."] * 5
    kernel = make_text_kernel("tri_sem", corpus=corpus).fit(items, tags)
    sentences = [s for item in items for s in item]
    external = [s for s in Preprocessor().process(corpus)[0] if s]
    similarity = MaxSimilarity([AlignmentSimilarity().fit(items, tags),
                                AverageSimilarity([DistributionalSimilarity().fit(external),
                                                   DistributionalSimilarity().fit(sentences)])])
    expected = trigram_kernel(items, idf=document_idf(items), similarity=similarity)
    np.testing.assert_array_equal(kernel.train_gram(), expected)
    assert list(WORD_SIMILARITIES) == ["lin", "dic", "dext", "dext_ic", "a", "a_dic", "a_dext", "a_dext_ic"]


# --------------------------------------------------------------------------------- image kernels
def test_cell_weights_are_the_kind_of_image_kernel():
    rng = np.random.default_rng(0)
    features = {t: rng.random((4, 5, 3)).astype(np.float32) for t in ("c", "s")}
    for name, weights in (("pyramid", pyramid_cell_weights), ("histo", whole_image_cell_weights)):
        np.testing.assert_array_equal(image_kernel(features, levels=1, kind=weights),
                                      image_kernel(features, levels=1, kind=name))
    level_one = lambda levels: np.r_[0.0, np.full(4, 0.25)]  # noqa: E731 - the four level-1 cells only
    expected = sum(np.minimum(features[t][:, None, c], features[t][None, :, c]).sum(-1) * 0.25
                   for t in features for c in range(1, 5)) / 2
    np.testing.assert_allclose(image_kernel(features, levels=1, kind=level_one), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="between 1 and 5 non-negative finite cell weights"):
        image_kernel(features, levels=1, kind=lambda levels: np.ones(6))
    with pytest.raises(ValueError, match="kind must be one of"):
        image_kernel(features, levels=1, kind=3)


def _grey_grid(image, pixel_step=2):
    """Toy feature: the grey level of every ``pixel_step``-th pixel."""
    rows, cols = grid_positions(image.shape[:2], pixel_step)
    grey = as_float_grey(image)
    positions = np.stack(np.meshgrid(rows, cols, indexing="ij"), -1).reshape(-1, 2).astype(np.float32)
    return positions, grey[np.ix_(rows, cols)].reshape(-1, 1).astype(np.float32)


@pytest.fixture
def grey_histo():
    FEATURE_TYPES.register("grey", FeatureType(_grey_grid, lambda f: {"pixel_step": f.pixel_step}, n_words=4),
                           help="grey level")
    IMAGE_KERNELS.register("grey_histo", ImageKernelSpec(("grey",), whole_image_cell_weights), help="grey histogram")
    yield
    IMAGE_KERNELS.unregister("grey_histo")
    FEATURE_TYPES.unregister("grey")


def test_a_registered_feature_type_and_image_kernel_are_used(grey_histo):
    images = make_synthetic(n_images=12, image_size=32, seed=1).images
    kernel = ImageKernel(kind="grey_histo", levels=1, cache=False, progress=False).fit(images)
    features = kernel.train_features_
    assert list(features) == ["grey"] and features["grey"].shape == (12, 5, 4)  # the registered 4 words
    direct = ImageFeaturizer(feature_types=("grey",), levels=1, cache=False, progress=False).fit_transform(images)
    np.testing.assert_array_equal(features["grey"], direct["grey"])
    np.testing.assert_array_equal(kernel.train_gram(), image_kernel(direct, levels=1, kind="histo"))


# ------------------------------------------------------- systems and tasks through the command line
@dataclass(frozen=True)
class SharedWords(TextKernelSpec):
    """Toy text kernel: the number of distinct words two items share."""

    family: ClassVar[str] = "toy_shared_words"
    single_caption: bool = False

    def gram(self, kernel, items_a, items_b=None):
        words_b = [{w for s in item for w in s} for item in (items_a if items_b is None else items_b)]
        return np.array([[len({w for s in a for w in s} & b) for b in words_b] for a in items_a], dtype=float)


class TextToItem(BaseEstimator):
    """Toy system: image i against caption j scores offset + K_text(caption j, training item i)."""

    def __init__(self, text_kernel="bow5", offset=0.0, random_state=0):
        self.text_kernel = text_kernel
        self.offset = offset
        self.random_state = random_state

    @property
    def name(self) -> str:
        return f"toy {self.text_kernel} + {self.offset}"

    def fit(self, train):
        self.preprocessor_ = Preprocessor()
        items, tags = self.preprocessor_.process_items(train.captions)
        self.text_kernel_ = make_text_kernel(self.text_kernel, random_state=self.random_state).fit(items, tags)
        return self

    def score(self, images, captions):
        tokens, _ = self.preprocessor_.process(list(captions))
        return self.offset + self.text_kernel_.cross_gram([[t] for t in tokens])[:, :len(images)].T


def toy_task(method, view, *, seed=0) -> dict:
    """Toy task: the sum of the system's scores over the view."""
    return {"score_sum": float(np.sum(method.score(view.images, view.captions))), "seed": seed}


@pytest.fixture
def toys():
    TEXT_KERNELS.register("toy_shared_words", SharedWords())
    # The toy's name shows its offset already, so the run's label leaves the setting out.
    SYSTEMS.register("toy", System(TextToItem, (Setting("toy_offset", float, 0.0, help="added to every score",
                                                        label=unlabelled),),
                                   lambda settings: {"offset": settings["toy_offset"]}),
                     help="toy text-to-item scores")
    TASKS.register("toy_task", toy_task)
    yield
    TASKS.unregister("toy_task")
    SYSTEMS.unregister("toy")
    TEXT_KERNELS.unregister("toy_shared_words")


SMALL = ["--n-images", "60", "--seed", "3"]


def test_toy_kernel_system_and_task_run_through_the_command_line(toys, tmp_path, capsys):
    out = tmp_path / "toy.json"
    assert main(SMALL + ["--method", "toy", "--text-kernel", "toy_shared_words", "--toy-offset", "0.5",
                         "--task", "retrieval,toy_task", "--protocol", "both", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    # The task's figure is printed in the tasks' table, one row per protocol.
    assert "toy toy_shared_words + 0.5" in printed and "Toy task score sum" in printed
    results = json.loads(out.read_text())
    assert [r["protocol"] for r in results] == ["hodosh", "karpathy"]

    # The slow obvious reference: shared words counted here, on the same preprocessed captions.
    data = make_synthetic(n_images=60, seed=3)
    preprocessor = Preprocessor()
    train_items, _ = preprocessor.process_items(data.subset("train").captions)
    train_words = [{w for s in item for w in s} for item in train_items]
    for result in results:
        view = data.view("test", result["protocol"])
        caption_words = [set(t) for t in preprocessor.process(list(view.captions))[0]]
        expected = sum(0.5 + len(caption_words[j] & train_words[i])
                       for i in range(view.n_images) for j in range(view.n_captions))
        assert result["tasks"]["toy_task"] == {"score_sum": pytest.approx(expected), "seed": 3}
        # the system's own name, then the shared settings that differ from their defaults (--seed 3)
        assert result["system"] == "toy toy_shared_words + 0.5 seed=3"
        assert result["command"]["settings"]["toy_offset"] == 0.5 and "retrieval" not in result["tasks"]


def test_help_lists_registered_entries(toys, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for phrase in ("toy: toy text-to-item scores", "--toy-offset", "toy_shared_words",
                   "toy_task: Toy task: the sum", "forced_choice:", "--sift-words"):
        assert phrase in text


def test_unregistered_toys_are_gone(capsys):
    with pytest.raises(SystemExit):
        main(["--method", "toy"])
    assert "unknown method 'toy'; available: kcca, nn" in capsys.readouterr().err


def _kcca(text_kernel="tri_sem", image_kernel="pyramid", power=1.0, diag=1.0, n_components=(16, 32, 64, 128, 256),
          regs=(0.01, 0.1, 1.0, 10.0), n_select=5, weight_power=0.0, seed=0, cache=True, levels=2):
    """The system the command line built before systems were registered."""
    return ImageSentenceRanker(text_kernel=text_kernel, image_kernel=image_kernel, power=power, diag=diag,
                               n_components=list(n_components), regs=list(regs), n_select=n_select,
                               weight_power=weight_power, random_state=seed, cache=cache,
                               image_kernel_params={"levels": levels,
                                                    "n_words": {"colour": 128, "texture": 256, "sift": 256}})


@pytest.mark.parametrize("argv, expected", [
    ([], _kcca()),
    (["--text-kernel", "bow5", "--image-kernel", "histo", "--power", "2", "--diag", "1.5", "--n-components", "4,8",
      "--regs", "0.1", "--n-select", "3", "--weight-power", "1", "--seed", "4", "--no-cache", "--levels", "1"],
     _kcca("bow5", "histo", 2.0, 1.5, (4, 8), (0.1,), 3, 1.0, 4, False, 1)),
])
def test_registered_kcca_is_built_as_before(argv, expected):
    assert _make_method(build_parser().parse_args(argv)).get_params() == expected.get_params()


def test_registered_nn_is_built_as_before():
    nn = _make_method(build_parser().parse_args(["--method", "nn", "--nn-text", "kernel", "--text-kernel", "bow5",
                                                 "--image-kernel", "colour_histo", "--no-cache", "--seed", "2"]))
    assert isinstance(nn, NearestNeighbour)
    assert (nn.text_similarity, nn.image_kernel, nn.random_state) == ("bow5", "colour_histo", 2)
    assert _make_method(build_parser().parse_args(["--method", "nn"])).text_similarity == "idf_f1"
    assert nn.cache is False


def test_builtin_tasks_run_on_a_view(tmp_path):
    out = tmp_path / "nn.json"
    assert main(SMALL + ["--method", "nn", "--colour-words", "8", "--texture-words", "8", "--sift-words", "8",
                         "--levels", "1", "--task", "forced_choice,off_topic", "--out", str(out)]) == 0
    [result] = json.loads(out.read_text())
    assert set(result["tasks"]) == {"forced_choice", "off_topic"}
    assert result["tasks"]["forced_choice"]["n_choices"] == 6
    assert result["tasks"]["off_topic"]["n_pairs"] == 2 * result["annotation"]["n_queries"]
    # Every task figure has its interval, in the retrieval layout, and the tables show it.
    for task, figures in {"forced_choice": {"accuracy", "mean_positive", "mean_negative"},
                          "off_topic": {"AP", "accuracy"}}.items():
        metrics = result["tasks"][task]
        assert set(metrics["ci"]) == {k for k, v in metrics.items() if isinstance(v, float)} >= figures
        assert metrics["ci_settings"]["method"] == "percentile bootstrap"
        assert all(low <= metrics[name] <= high for name, (low, high) in metrics["ci"].items())
    low, high = result["tasks"]["off_topic"]["ci"]["AP"]
    assert f"[{format_task_figure(low)}, {format_task_figure(high)}]" in out.with_suffix(".md").read_text()
