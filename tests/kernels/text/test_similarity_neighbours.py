"""Word neighbours: ranking helper, table, Lin neighbours (needs WordNet) and the Flickr8K rider/swim comparison."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from kcca_desc.kernels.text.similarity import neighbour_table, top_neighbours
from kcca_desc.kernels.text.similarity import DistributionalSimilarity, LinSimilarity, WordSimilarity


class _Fixed(WordSimilarity):
    """σ from a fixed table (test double)."""

    name = "fixed"

    def __init__(self, table=None):
        self.table = table

    def _similarity(self, a, b):
        return np.array([[self.table.get(frozenset((x, y)), 0.0) for y in b] for x in a])


SIM = _Fixed({frozenset(("swim", "dive")): 0.6, frozenset(("swim", "pool")): 0.6, frozenset(("swim", "wade")): 0.3})


def test_top_neighbours_orders_by_score_then_word():
    vocab = ["wade", "pool", "swim", "dive", "car"]
    assert top_neighbours(SIM, "swim", vocab, k=2) == [("dive", pytest.approx(0.6)), ("pool", pytest.approx(0.6))]
    # Zero-similarity words and the query itself are never neighbours.
    assert [w for w, _ in top_neighbours(SIM, "swim", vocab, k=10)] == ["dive", "pool", "wade"]
    assert top_neighbours(SIM, "unknown", vocab) == []


def test_top_neighbours_validates():
    with pytest.raises(ValueError, match="k must be"):
        top_neighbours(SIM, "swim", ["dive"], k=0)
    with pytest.raises(TypeError, match="word must be a str"):
        top_neighbours(SIM, 3, ["dive"])


def test_neighbour_table_layout():
    table = neighbour_table({"S": SIM}, ["swim"], ["dive", "pool", "wade"], k=2)
    lines = table.splitlines()
    assert lines[0].split() == ["word", "S"]
    assert lines[1].split() == ["swim", "dive", "0.60"]
    assert lines[2].split() == ["pool", "0.60"]


def test_top_neighbours_with_a_fitted_source():
    sentences = [["swim", "pool"], ["swim", "pool", "water"], ["dog", "run"], ["dog", "run", "grass"]]
    sim = DistributionalSimilarity(min_count=1, threshold=0.0).fit(sentences)
    best = top_neighbours(sim, "swim", sorted({w for s in sentences for w in s}), k=1)
    assert best[0][0] == "pool"


def test_lin_neighbours_are_wordnet_relatives(wordnet):
    sentences = [["dog", "run", "grass"], ["puppy", "play", "ball"], ["cat", "sit", "mat"], ["man", "ride", "bike"],
                 ["woman", "ride", "horse"], ["dog", "catch", "ball"], ["child", "swim", "pool"], ["dog", "swim"]]
    sim = LinSimilarity().fit(sentences)
    vocabulary = sorted({w for s in sentences for w in s})
    assert [w for w, _ in top_neighbours(sim, "dog", vocabulary, k=3)] == ["puppy", "cat", "horse"]
    assert [w for w, _ in top_neighbours(sim, "man", vocabulary, k=2)] == ["woman", "child"]


@pytest.mark.heavy
@pytest.mark.flickr8k
def test_flickr8k_rider_swim_neighbours(flickr8k_root, wordnet, tmp_path):
    # The benchmark that prints the Figure 6 comparison, run end to end on the real captions.
    script = Path(__file__).resolve().parents[3] / "benchmarks" / "word_neighbours.py"
    spec = importlib.util.spec_from_file_location("word_neighbours", script)
    word_neighbours = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(word_neighbours)

    record = word_neighbours.main(["--data-root", str(flickr8k_root), "--out", str(tmp_path / "out.json")])
    assert record["unavailable"] == {}
    neighbours = {(name, w): [n for n, _ in record["neighbours"][w][name]] for w in ("rider", "swim")
                  for name in ("A", "D_ic", "D_ext", "Lin")}
    # The paper's Figure 6 pairs that any sensible fit reproduces.
    assert "bike" in neighbours["D_ic", "rider"]
    assert "pool" in neighbours["D_ic", "swim"]
    assert "biker" in neighbours["A", "rider"]
    assert {"cyclist", "bicyclist"} & set(neighbours["Lin", "rider"])
