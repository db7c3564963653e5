"""benchmarks/strongest.py: the set kernel against a slow reference, the scaling of summed base
kernels, and a selection on dev that never reads the test split."""

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from kcca_bench import quick_dataset
from kcca_bench.synthetic import synthetic_items

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("strongest", BENCHMARKS / "strongest.py")
strongest = importlib.util.module_from_spec(_spec)
sys.modules["strongest"] = strongest  # its dataclasses look their module up
_spec.loader.exec_module(strongest)


def test_the_set_kernel_is_the_mean_rbf_over_the_pairs_of_two_sets():
    rng = np.random.default_rng(0)
    items = rng.standard_normal((7, 3, 4))
    queries = rng.standard_normal((5 * 2, 4))
    gamma = 0.3
    fast = strongest._set_rbf(queries, 2, items, gamma, chunk=2)
    slow = np.array([[np.mean([np.exp(-gamma * np.sum((a - b) ** 2)) for a in queries[2 * q:2 * q + 2]
                               for b in items[i]]) for i in range(7)] for q in range(5)])
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


class FakeBank(strongest.GramBank):
    """Base kernels from synthetic features; the test split's rows are poisoned, or refused."""

    def __init__(self, dataset, test_rows):
        super().__init__(dataset, cache=False)
        histograms, bow = synthetic_items(len(dataset), 1, seed=1)
        features = {"pyramid": histograms, "histo": np.sqrt(histograms),
                    "bow5_idf": bow.toarray(), "tri5": bow.toarray() ** 2}
        self.entries = {}
        for name, F in features.items():
            rows = self.queries["dev"].caption_image if strongest.BASE_KERNELS[name].view == "text" else None
            entry = {"train": F[dataset.splits["train"]] @ F[dataset.splits["train"]].T, "seconds": np.float64(0)}
            for split in ("dev", "test"):
                Q = F[dataset.splits[split]]
                entry[split] = (Q if rows is None else Q[rows]) @ F[dataset.splits["train"]].T
            entry["test"] = test_rows(entry["test"])
            self.entries[name] = entry

    def grams(self, name):
        entry = self.entries[name]
        self.seconds[name] = 0.0
        K = entry["train"]
        self.scale[name] = float((np.trace(K) - K.sum() / len(K)) / len(K))
        return entry


def _args(**changes):
    return argparse.Namespace(**{"text_kernels": ["bow5_idf", "tri5"], "image_kernels": ["histo", "pyramid"],
                                 "regs": [0.1, 1.0], "weight_powers": [0.0, 1.0], "n_components": [4, 8],
                                 "weights": [0.5, 1.0], "solver_cache": None, **changes})


def test_summed_kernels_are_the_base_kernels_each_scaled_to_trace_n_after_centring():
    dataset = quick_dataset()
    bank = FakeBank(dataset, lambda rows: rows)
    K = bank.combined({"bow5_idf": 2.0, "tri5": 0.5}, "train")
    n = len(K)
    H = np.eye(n) - 1.0 / n
    for name, w in (("bow5_idf", 2.0), ("tri5", 0.5)):
        assert np.trace(H @ bank.grams(name)["train"] @ H) / bank.scale[name] == pytest.approx(n)
    expected = sum(w * bank.grams(k)["train"] / bank.scale[k] for k, w in (("bow5_idf", 2.0), ("tri5", 0.5)))
    np.testing.assert_allclose(K, expected, rtol=1e-12)


def test_the_selection_on_dev_never_reads_the_test_split():
    dataset = quick_dataset()
    views = {p: dataset.view("dev", p) for p in ("hodosh", "karpathy")}
    rng = np.random.default_rng(0)
    chosen = []
    for poison in (lambda rows: rows, lambda rows: rng.standard_normal(rows.shape) * 1e3):
        record = {}
        chosen.append(strongest.select(FakeBank(dataset, poison), _args(), views, record, lambda: None))
        assert record["dev_curve"][0]["added"] is None
    # What was chosen and its dev figures, not how long the fits took.
    untimed = [{role: {k: v for k, v in entry.items() if not k.endswith("_s")}
                for role, entry in (("best", c["best"]), *c["singles"].items())} for c in chosen]
    assert untimed[0] == untimed[1]
