"""benchmarks/strongest.py: the bank of normalised base kernels, and a selection on dev that never
reads the test split."""

import argparse
import copy
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


class FakeBank(strongest.GramBank):
    """Linear base kernels of synthetic features; the test split's rows are passed through ``test_rows``."""

    def __init__(self, dataset, test_rows):
        super().__init__(dataset, cache=False)
        histograms, bow = synthetic_items(len(dataset), 1, seed=1)
        features = {"pyramid": histograms, "histo": np.sqrt(histograms),
                    "bow5_idf": bow.toarray(), "tri5": bow.toarray() ** 2}
        train = dataset.splits["train"]
        self.entries = {}
        for name, F in features.items():
            entry = {"train": F[train] @ F[train].T, "seconds": np.float64(0)}
            for split in ("dev", "test"):
                Q = F[dataset.splits[split]]
                if strongest.side_of(name) == "text":
                    Q = Q[self.queries[split].caption_image]
                entry[split] = Q @ F[train].T
            entry["test"] = test_rows(entry["test"])
            self.entries[name] = entry

    def grams(self, name):
        self.seconds[name] = 0.0
        return self.entries[name]


def _args(**changes):
    return argparse.Namespace(**{"text_kernels": ["bow5_idf", "tri5"], "image_kernels": ["histo", "pyramid"],
                                 "regs": [0.1, 1.0], "weight_powers": [0.0, 1.0], "n_components": [4, 8],
                                 "weights": [0.5, 1.0], "solver_cache": None, **changes})


def test_the_bank_holds_centred_kernels_of_trace_n_and_sums_them():
    dataset = quick_dataset()
    bank = strongest.GramBank(dataset, cache=False)
    grams = {name: bank.grams(name) for name in ("bow5_idf", "histo")}
    n = len(dataset.splits["train"])
    for name, entry in grams.items():
        K = entry["train"].astype(np.float64)
        np.testing.assert_allclose(K.sum(axis=0), 0, atol=1e-3)
        assert np.trace(K) == pytest.approx(n, rel=1e-5)
        assert entry["dev"].shape == ((bank.queries["dev"].n_captions if name == "bow5_idf" else
                                       bank.queries["dev"].n_images), n)
    np.testing.assert_allclose(bank.combined({"bow5_idf": 0.5}, "dev"), 0.5 * grams["bow5_idf"]["dev"], rtol=1e-6)


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


def test_a_selection_without_some_kernels_never_sums_them():
    dataset = quick_dataset()
    views = {p: dataset.view("dev", p) for p in ("hodosh", "karpathy")}
    record = {}
    bank = FakeBank(dataset, lambda rows: rows)
    strongest.select(bank, _args(), views, record, lambda: None)
    measured = dict(record["dev_candidates"])
    strongest.select(bank, _args(), views, record, lambda: None, without={"tri5", "pyramid"},
                     curve="dev_curve_without")
    for step in record["dev_curve_without"]:
        assert not {"tri5", "pyramid"} & (set(step["text"]) | set(step["image"]))
    # Both curves share the candidates measured once.
    assert all(record["dev_candidates"][k] == v for k, v in measured.items())
    assert record["dev_curve_without"][0]["added"] is None and "dev_curve" in record


def test_a_run_with_more_base_kernels_keeps_the_candidates_measured(tmp_path):
    out = tmp_path / "strongest.json"
    common = ["--quick", "--out", str(out), "--text-kernels", "bow5_idf", "--neural", str(tmp_path / "none.json")]
    first = strongest.main(common + ["--image-kernels", "histo", "--dev-only"])
    assert first["systems"] == {} and "dev_curve" in first
    first = strongest.main(common + ["--image-kernels", "histo"])
    second = strongest.main(common + ["--image-kernels", "histo,pyramid"])
    kept = first["dev_candidates"]
    # The first run's candidates read back, not measured again (their fit times are the first run's).
    assert {k: second["dev_candidates"][k] for k in kept} == kept
    assert len(second["dev_candidates"]) > len(kept)
    assert second["cost"]["selection"] == first["cost"]["selection"]
    assert second["cost"]["selection_added"][0]["candidates"] == len(second["dev_candidates"]) - len(kept)
    assert set(second["base_kernels"]) == {"bow5_idf", "histo", "pyramid"}
    # A changed grid keeps nothing.
    third = strongest.main(common + ["--image-kernels", "histo", "--regs", "0.5"])
    assert [e["setting"]["reg"] for e in third["dev_candidates"].values()] == [0.5]
    assert "selection_added" not in third["cost"]


def test_models_without_a_checkpoint_are_recorded_with_their_training_cost(tmp_path):
    neural = tmp_path / "neural.json"
    cost = {"device": "cpu, 2 torch threads", "peak_rss_gib": 1.0, "peak_gpu_gib": None, "seconds_per_epoch": 60.0}
    neural.write_text(strongest.json.dumps([
        {"system": "vse", "dataset": "flickr8k", "protocol": p, "params": {"train_s": 1800.0, "epochs": 30,
                                                                         "training_cost": cost}}
        for p in ("hodosh", "karpathy")]))
    missing = strongest.not_measured(neural, "flickr8k", {"vse": "no trained checkpoint", "char_gru": "not asked"})
    assert set(missing) == {"vse", "char_gru"}
    assert missing["vse"]["training"] == {"train_s": 1800.0, "epochs": 30, "training_cost": cost}
    assert missing["vse"]["reason"].startswith("no trained checkpoint; ")
    assert "30 min on cpu, 2 torch threads" in missing["vse"]["reason"]
    assert missing["char_gru"]["training"] is None


@pytest.fixture
def base_kernels_restored():
    """The base-kernel registry as it was before the test (towers register kernels in it)."""
    registry = strongest.BASE_KERNELS
    saved = dict(registry._entries), dict(registry._help)
    yield registry
    registry._entries, registry._help = saved


def test_a_towers_kernels_share_its_embeddings_of_each_list_of_items():
    calls = []

    class Model:
        def embed_texts(self, texts):
            calls.append(("text", list(texts)))
            return np.arange(2.0 * len(texts)).reshape(-1, 2)

        def embed_images(self, images):
            calls.append(("image", len(images)))
            return np.zeros((len(images), 3))

    shared = strongest.SharedEmbeddings(Model())
    first = shared.embed_texts(["a dog", "a cat"])
    assert shared.embed_texts(("a dog", "a cat")) is first
    shared.embed_texts(["a cat"])
    images = quick_dataset().subset("dev").images
    assert shared.embed_images(images) is shared.embed_images(images)
    assert calls == [("text", ["a dog", "a cat"]), ("text", ["a cat"]), ("image", len(images))]


def test_a_trained_models_towers_are_base_kernels_keyed_by_its_checkpoint(tmp_path, monkeypatch,
                                                                           base_kernels_restored):
    pytest.importorskip("torch", reason="the trainable models need the optional torch extra")
    from kcca_desc.neural import VSEEncoder
    from toys import TinyEncoder

    # A cache of its own, and a tiny model in place of the cpu configuration's.
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(strongest, "tower_model", lambda system: VSEEncoder(
        image_encoder=TinyEncoder(), word_dim=8, joint_dim=8, min_count=1, batch_size=8, max_epochs=2,
        random_state=0, margin=0.2 if system == "vse" else 0.1))
    dataset = quick_dataset()
    found, missing = strongest.trained_towers(dataset, ["vse", "vse_hardest"])
    assert found == {} and set(missing) == {"vse", "vse_hardest"}
    model = strongest.tower_model("vse").fit(dataset.subset("train"), dataset.subset("dev"))

    found, missing = strongest.trained_towers(dataset, ["vse", "vse_hardest"])
    assert set(found) == {"vse"} and set(missing) == {"vse_hardest"}
    assert found["vse"]["checkpoint"] == model.checkpoint_path_.parent.name
    assert found["vse"]["kernels"] == {"text": ["vse_text_rbf", "vse_text_cosine"],
                                       "image": ["vse_image_rbf", "vse_image_cosine"]}
    assert strongest.side_of("vse_image_cosine") == "image" and strongest.side_of("vse_text_rbf") == "text"

    # The image tower's cosine kernel, centred and scaled to trace n, against numpy.
    bank = strongest.GramBank(dataset, cache=False, identities={"vse_image_cosine": "key"})
    train = dataset.subset("train")
    U = model.embed_images(train.images)
    U = U / np.linalg.norm(U, axis=1, keepdims=True)
    n = len(U)
    C = np.eye(n) - 1 / n
    K = C @ U @ U.T @ C
    np.testing.assert_allclose(bank.grams("vse_image_cosine")["train"], K * n / np.trace(K), rtol=1e-4, atol=1e-5)


def test_candidates_summing_a_retrained_tower_are_measured_again():
    kernels = {"text": ["vse_text_rbf"], "image": ["vse_image_rbf"]}
    entry = lambda text, image: {"text": {text: 1.0}, "image": {image: 1.0}}  # noqa: E731
    record = {"towers": {"vse": {"checkpoint": "old", "kernels": kernels}},
              "dev_candidates": {"a": entry("minilm_rbf", "efficientnet_rbf"), "b": entry("vse_text_rbf", "histo"),
                                 "c": entry("minilm_rbf", "vse_image_rbf")},
              "systems": {"mkl": entry("vse_text_rbf", "histo"), "vse": {"source": "neural.json", "results": {}}}}
    unchanged = copy.deepcopy(record)
    strongest.forget_retrained(record, {"vse": {"checkpoint": "old", "kernels": kernels}})
    assert record == unchanged
    gone = copy.deepcopy(record)
    strongest.forget_retrained(record, {"vse": {"checkpoint": "new", "kernels": kernels}})
    assert list(record["dev_candidates"]) == ["a"] and list(record["systems"]) == ["vse"]
    # A tower no longer at hand: the record could not tell a later checkpoint's candidates from these.
    strongest.forget_retrained(gone, {})
    assert list(gone["dev_candidates"]) == ["a"] and list(gone["systems"]) == ["vse"]


def test_kernel_names_are_checked_before_the_data_is_read(tmp_path, monkeypatch, capsys):
    def unread(*args):
        raise AssertionError("the data set was read")

    monkeypatch.setattr(strongest, "flickr8k_or_quick", unread)
    common = ["--quick", "--out", str(tmp_path / "strongest.json"), "--image-kernels", "histo"]
    for argv, message in [
            (["--text-kernels", "bow5_idf,vse_text_rbf"], "towers of models not among --towers (none)"),
            (["--towers", "vse", "--text-kernels", "vse_image_rbf"], "--text-kernels: not text base kernels"),
            (["--text-kernels", "histo"], "--text-kernels: not text base kernels: ['histo']")]:
        with pytest.raises(SystemExit):
            strongest.main(common + argv)
        assert message in capsys.readouterr().err


def test_a_named_tower_of_an_untrained_model_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(strongest, "trained_towers",
                        lambda dataset, systems: ({}, dict.fromkeys(systems, "no trained checkpoint in the cache")))
    with pytest.raises(SystemExit):
        strongest.main(["--quick", "--out", str(tmp_path / "strongest.json"), "--towers", "vse,char_gru",
                        "--text-kernels", "bow5_idf,vse_text_cosine", "--image-kernels", "histo"])
    err = capsys.readouterr().err
    assert "vse_text_cosine: no trained checkpoint in the cache" in err and "char_gru" not in err
    assert not (tmp_path / "strongest.json").exists()
