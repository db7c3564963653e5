"""Regression test: the full ``tri_sem`` KCCA system on a fixed slice of the real Flickr8K data.

The first images (by sorted file name) of each official split go through every stage of
:class:`kcca_desc.ImageSentenceRanker` — caption preprocessing, image features and codebooks, the
Tri5Sem text kernel (alignment, distributional similarity on the training captions and on the
default external corpus, idf), KCCA, dev selection over a small (n, κ) grid and Borda fusion —
and the per-query ranks of both tasks under both protocols must equal those recorded in
``tests/fixtures/flickr8k_regression.json`` exactly, as must the dev metrics and the selected
models. A change in any stage that moves one rank shows here.

The fixture was produced by this code. After a deliberate change of results, rewrite it with::

    KCCA_DESC_REGENERATE=1 python -m pytest -m flickr8k tests/test_regression_flickr8k.py

(the test then writes the file and skips, saying so) and review the diff before committing it.
With an empty ``KCCA_DESC_CACHE`` (feature extraction and the external corpus included) it takes
20-30 s on two cores; Numba's first compilation of the kernels, when no earlier test did it, adds
up to 40 s more.
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from kcca_desc import Dataset, ImageSentenceRanker, evaluate_fitted
from kcca_desc.data import load_flickr8k
from kcca_desc.data.dataset import PROTOCOLS

FIXTURE = Path(__file__).parent / "fixtures" / "flickr8k_regression.json"
REGENERATE = "KCCA_DESC_REGENERATE"

SIZES = {"train": 60, "dev": 20, "test": 20}
SETTINGS = {"text_kernel": "tri_sem", "n_components": [8, 16, 32], "regs": [0.1, 1.0, 10.0], "n_select": 2,
            "random_state": 0}
DEV_PROTOCOL = "hodosh"  # models are selected on dev under the first protocol, as the command line does

pytestmark = [pytest.mark.flickr8k, pytest.mark.filterwarnings("ignore:.*spurious entry")]


def first_images(flickr8k_root) -> Dataset:
    """The first ``SIZES[split]`` images of each split by image id, as a data set of their own."""
    full = load_flickr8k(flickr8k_root)
    chosen = {split: np.sort(full.split_indices(split))[:n] for split, n in SIZES.items()}
    order = np.concatenate(list(chosen.values()))
    bounds = np.cumsum([0, *SIZES.values()])
    return Dataset(
        name="flickr8k-regression",
        images=full.images.subset(order),
        captions=[full.captions[i] for i in order],
        splits={split: np.arange(a, b) for split, a, b in zip(SIZES, bounds[:-1], bounds[1:])},
        hodosh_caption=full.hodosh_caption,
    )


def run_system(data: Dataset) -> dict:
    """Everything the fixture records, from a cold fit of the system on ``data``."""
    ranker = ImageSentenceRanker(**SETTINGS, image_kernel_params={"progress": False})
    ranker.fit(data.subset("train"), dev=data.view("dev", DEV_PROTOCOL))
    ranks = {}
    for protocol in PROTOCOLS:
        result = evaluate_fitted(ranker, data.view("test", protocol))
        ranks[protocol] = {task: r.tolist() for task, r in result.ranks.items()}
    return {
        "subset": {split: [data.image_ids[i] for i in data.split_indices(split)] for split in SIZES},
        "settings": {**SETTINGS, "dev_protocol": DEV_PROTOCOL},
        "dev_results": ranker.dev_results_,
        "selected": {task: [list(s) for s in chosen] for task, chosen in ranker.selected_.items()},
        "ranks": ranks,
    }


def to_json(value, depth: int = 0) -> str:
    """JSON with one line per mapping entry and per list of mappings, other lists on one line (short diffs)."""
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(value, dict):
        entries = [f"{inner}{json.dumps(k)}: {to_json(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(entries) + f"\n{pad}}}"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return "[\n" + ",\n".join(inner + json.dumps(v) for v in value) + f"\n{pad}]"
    return json.dumps(value)


def test_tri_sem_ranks_on_a_fixed_flickr8k_slice(flickr8k_root):
    data = first_images(flickr8k_root)
    actual = json.loads(json.dumps(run_system(data)))  # the JSON form: lists, not tuples
    if os.environ.get(REGENERATE):
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(to_json(actual) + "\n", encoding="utf-8")
        pytest.skip(f"{REGENERATE} is set: rewrote {FIXTURE}")
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    # Stage by stage, so that a failure says where the results first differ.
    for key in ("subset", "settings", "dev_results", "selected"):
        assert actual[key] == expected[key], f"{key} differs from {FIXTURE.name}"
    for protocol in PROTOCOLS:
        for task, want in expected["ranks"][protocol].items():
            got = actual["ranks"][protocol][task]
            moved = sum(a != b for a, b in zip(got, want))
            assert got == want, f"{protocol} {task}: {moved} of {len(want)} query ranks moved"
