"""Every registered text and image kernel runs end to end on the defaults, in quick mode: a small
synthetic data set, small codebooks and grids, and a few sentences as the external corpus.

Low-rank kernels (a small vocabulary, captions that repeat) keep the canonical pairs there are:
the (n, reg) grid shrinks to the kernels' rank with one warning instead of failing.  The command
itself runs every text and image kernel on the default data in the heavy tests (one to three
minutes each on two busy cores, the image features cached after the first).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from bad_inputs import write_tsv_dataset

from kcca_desc.cli.fit import main
from kcca_desc.data import make_synthetic
from kcca_desc.image.kernel import IMAGE_KERNELS
from kcca_desc.methods import ImageSentenceRanker
from kcca_desc.text import named_kernels
from kcca_desc.text.named_kernels import TEXT_KERNELS

QUICK_IMAGES = {"levels": 0, "n_words": {"colour": 8, "texture": 8, "sift": 8}}

# The quick data set's 12 training images shrink the default grid, with a warning of its own.
pytestmark = pytest.mark.filterwarnings("ignore:12 training images support at most 11:UserWarning")


def _text_kernels() -> list:
    """Every registered text kernel; Lin's WordNet similarity is heavy (WordNet is prepared first, ~40 s)."""
    return [pytest.param(name, marks=pytest.mark.heavy) if _uses_wordnet(name) else name for name in TEXT_KERNELS]


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_images=20, image_size=32, seed=0)


@pytest.fixture(autouse=True)
def small_corpus(monkeypatch, data):
    """The external corpus of the ``dext`` similarities: the synthetic captions, not 0.8M words."""
    sentences = [caption for captions in data.captions for caption in captions]
    monkeypatch.setattr(named_kernels, "default_external_corpus", lambda: sentences)


def _uses_wordnet(text_kernel: str) -> bool:
    return "_lin" in text_kernel


@pytest.fixture
def needs(request, text_kernel):
    """WordNet for the kernels of Lin's similarity (skipped only when its package is not installed)."""
    if _uses_wordnet(text_kernel):
        request.getfixturevalue("wordnet")


def _fit_and_score(data, **params) -> ImageSentenceRanker:
    ranker = ImageSentenceRanker(image_kernel_params=QUICK_IMAGES, regs=(0.1, 1.0), **params)
    ranker.fit(data.subset("train"), data.view("dev"))
    test = data.view("test")
    scores = ranker.score(test.images, test.captions)
    for task in (scores.annotation, scores.search):
        assert task.shape == (len(test.images), len(test.captions)) and np.all(np.isfinite(task))
    # The grid keeps only what the kernels support.
    assert max(ranker.n_components_) <= min(ranker.kcca_.rank_x_, ranker.kcca_.rank_y_)
    return ranker


@pytest.mark.parametrize("text_kernel", _text_kernels())
def test_every_text_kernel_runs_on_the_default_grid(data, text_kernel, needs):
    _fit_and_score(data, text_kernel=text_kernel)


@pytest.mark.parametrize("image_kernel", list(IMAGE_KERNELS))
def test_every_image_kernel_runs_on_the_default_grid(data, image_kernel):
    _fit_and_score(data, image_kernel=image_kernel, text_kernel="bow5")


@pytest.fixture(scope="module")
def repeated_captions(tmp_path_factory):
    """A 12-image TSV data set (7 train, 2 dev, 3 test) whose images share three caption sets."""
    tsv = write_tsv_dataset(tmp_path_factory.mktemp("repeated"), n_images=12)
    lines = tsv.read_text().splitlines()
    captions = [line.split("\t")[1] for line in lines]
    # Image i takes the captions of image i % 3: many identical captions, a text kernel of rank 2.
    rewritten = []
    for number, line in enumerate(lines):
        image, _, split = line.split("\t")
        # Five lines per image, in order.
        image_index, caption_index = divmod(number, 5)
        rewritten.append(f"{image}\t{captions[5 * (image_index % 3) + caption_index]}\t{split}")
    tsv.write_text("\n".join(rewritten) + "\n")
    return tsv


@pytest.mark.parametrize("text_kernel", _text_kernels())
def test_every_text_kernel_runs_on_twelve_images_whose_captions_repeat(repeated_captions, text_kernel, needs,
                                                                        capsys):
    assert main(["--data", "tsv", "--data-root", str(repeated_captions), "--text-kernel", text_kernel, "-q"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error" not in err
    # Three distinct caption sets: a text kernel of rank 2 at most, so the grid of [6] is clipped
    # to it with one warning, unless the single-caption kernels drew different captions.
    rank_warnings = [line for line in err.splitlines() if "has numerical rank" in line]
    if text_kernel not in ("bow1", "tri1"):
        assert rank_warnings == [_rank_warning(text_kernel, 2, [6], [2])]


def _rank_warning(text_kernel: str, rank: int, grid: list, kept: list) -> str:
    return (f"warning: the training kernel of the captions ({text_kernel} text kernel) has numerical rank {rank}, "
            f"so KCCA finds at most {rank} canonical pairs: the grid of n_components uses {kept} instead of {grid}")


def _fit_command(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kcca_desc.fit", *argv, "-q"], capture_output=True, text=True,
                          timeout=900)


def test_the_command_runs_a_low_rank_kernel(repeated_captions):
    run = _fit_command("--data", "tsv", "--data-root", str(repeated_captions), "--text-kernel", "bow5")
    assert run.returncode == 0, run.stderr
    assert _rank_warning("bow5", 2, [6], [2]) in run.stderr.splitlines()
    assert "KCCA bow5 (pyramid)" in run.stdout


@pytest.mark.heavy
@pytest.mark.parametrize("option, kernel", [*(("--text-kernel", name) for name in TEXT_KERNELS),
                                            *(("--image-kernel", name) for name in IMAGE_KERNELS)])
def test_the_command_runs_every_kernel_on_the_default_data(option, kernel):
    run = _fit_command(option, kernel)
    assert run.returncode == 0, run.stderr
    # The system's label names its text kernel and, in brackets, its image kernel.
    assert (f"KCCA {kernel} (" if option == "--text-kernel" else f" ({kernel})") in run.stdout
    assert "Traceback" not in run.stderr


def test_a_grid_of_the_users_above_the_kernels_rank_is_an_error_naming_the_option(repeated_captions, capsys):
    argv = ["--data", "tsv", "--data-root", str(repeated_captions), "--text-kernel", "bow5", "--n-components", "3,4"]
    assert main(argv + ["-q"]) == 2
    # After the default codebooks' warning that they shrink on 7 images, one line.
    [error] = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert error == ("error: --n-components: The 'n_components' parameter of ImageSentenceRanker must be at most 2, "
                     "the rank of the training kernel of the captions (bow5 text kernel). Got [3, 4] instead.")
