"""Checkpoints of the trainable models: an interrupted run (or one the clock stopped) resumes to
the same weights as an uninterrupted one, a finished run reloads without training, a longer run
extends a finished shorter one to the weights of training it whole, and the key covers every
parameter but the time budget."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainable models need the optional torch extra")

from kcca_desc.neural import CharGRUEncoder, ReiRelevanceScorer, VSEEncoder  # noqa: E402
from kcca_desc.neural import trainer  # noqa: E402
from kcca_desc.neural.trainer import Trainer  # noqa: E402
from kcca_desc.neural.checkpoints import read_checkpoint  # noqa: E402
from kcca_desc._core.cache import CacheWarning  # noqa: E402

from toys import TinyEncoder, make_dataset  # noqa: E402

CASES = {
    VSEEncoder: {"word_dim": 8, "joint_dim": 8, "min_count": 1, "negatives": "hardest", "sum_epochs": 1,
                 "lr_decay_epoch": 2},
    # Batches cut from length-sorted windows: their shuffle is part of what a resume restores.
    CharGRUEncoder: {"char_dim": 4, "hidden_dim": 6, "attention_dim": 4, "cycle_epochs": 2, "length_window": 2},
    ReiRelevanceScorer: {"word_dim": 8, "hidden_dim": 8, "min_count": 1, "dropout": 0.5},
}


class Interrupted(Exception):
    pass


def _interrupt_at(monkeypatch, epoch):
    """Make ``Trainer.run_epoch`` raise :class:`Interrupted` at ``epoch``; returns the undo."""
    run_epoch = Trainer.run_epoch

    def interrupted(self, *args):
        if args[-1] == epoch:
            raise Interrupted
        return run_epoch(self, *args)

    monkeypatch.setattr(Trainer, "run_epoch", interrupted)
    return lambda: monkeypatch.setattr(Trainer, "run_epoch", run_epoch)


def _model(cls):
    return cls(image_encoder=TinyEncoder(), batch_size=4, max_epochs=4, patience=None, random_state=5,
               **CASES[cls])


def _weights(model):
    return [{k: v.clone() for k, v in n.state_dict().items()} for n in model.networks_]


def _whole_run(cls, tmp_path, monkeypatch):
    """Train and dev data, and the 4-epoch run trained uninterrupted in a cache of its own."""
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "whole"))
    return train, dev, _model(cls).fit(train, dev=dev)


@pytest.mark.parametrize("cls", list(CASES))
def test_resumed_run_equals_uninterrupted_run(cls, tmp_path, monkeypatch):
    train, dev, whole = _whole_run(cls, tmp_path, monkeypatch)
    assert whole.resumed_from_epoch_ == 0 and len(whole.history_) == 4

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "interrupted"))
    undo = _interrupt_at(monkeypatch, 3)
    with pytest.raises(Interrupted):
        _model(cls).fit(train, dev=dev)
    undo()
    resumed = _model(cls).fit(train, dev=dev)
    assert resumed.resumed_from_epoch_ == 2
    _assert_same_run(resumed, whole)

    # A finished run is loaded, not trained: scoring needs no epoch.
    monkeypatch.setattr(Trainer, "run_epoch", lambda *args: pytest.fail("trained again"))
    loaded = _model(cls).fit(train, dev=dev)
    assert loaded.resumed_from_epoch_ == 4 and loaded.checkpoint_path_ == resumed.checkpoint_path_
    view = dev.view("test", "hodosh")
    if cls is ReiRelevanceScorer:
        np.testing.assert_array_equal(loaded.score(view.images, view.captions),
                                      resumed.score(view.images, view.captions))
    else:
        np.testing.assert_array_equal(loaded.embed_texts(view.captions), resumed.embed_texts(view.captions))


def _assert_same_run(a, b):
    assert [h["loss"] for h in a.history_] == [h["loss"] for h in b.history_]
    assert a.snapshot_epochs_ == b.snapshot_epochs_
    for x, y in zip(_weights(a), _weights(b), strict=True):
        assert x.keys() == y.keys()
        for key in x:
            assert torch.equal(x[key], y[key]), key


@pytest.mark.parametrize("cls", list(CASES))
def test_longer_run_extends_a_finished_shorter_run_to_the_same_weights(cls, tmp_path, monkeypatch):
    train, dev, whole = _whole_run(cls, tmp_path, monkeypatch)

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "extended"))
    short = _model(cls).set_params(max_epochs=2).fit(train, dev=dev)
    extended = _model(cls).fit(train, dev=dev)
    assert extended.resumed_from_epoch_ == 2 and extended.checkpoint_path_ != short.checkpoint_path_
    _assert_same_run(extended, whole)
    # The shorter run's checkpoint is left as it was.
    again = _model(cls).set_params(max_epochs=2).fit(train, dev=dev)
    assert again.resumed_from_epoch_ == 2 and len(again.history_) == 2


def test_a_shorter_run_with_other_snapshots_is_not_extended(tmp_path, monkeypatch):
    # char-GRU's last epoch is always a snapshot: a 3-epoch run with 2-epoch cycles kept epoch 3,
    # which a 4-epoch run does not, so the 4-epoch run trains from the start.
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    _model(CharGRUEncoder).set_params(max_epochs=3).fit(train, dev=dev)
    assert _model(CharGRUEncoder).fit(train, dev=dev).resumed_from_epoch_ == 0


def _constant_dev(monkeypatch):
    """Constant dev scores: no epoch improves on the first, so patience p stops a run p epochs
    after the first that it counts (VSE counts after its lr_decay_epoch, 2)."""
    monkeypatch.setattr(trainer, "recall_sum", lambda scores: {"rsum": 0.0})


@pytest.mark.parametrize("cls", list(CASES))
def test_a_more_patient_run_trains_on_from_a_less_patient_one(cls, tmp_path, monkeypatch):
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    _constant_dev(monkeypatch)
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "whole"))
    whole = _model(cls).set_params(max_epochs=6, patience=2).fit(train, dev=dev)
    assert whole.stopped_by_ == "patience" and len(whole.history_) < 6

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "extended"))
    impatient = _model(cls).set_params(max_epochs=6, patience=1).fit(train, dev=dev)
    assert impatient.stopped_by_ == "patience" and len(impatient.history_) == len(whole.history_) - 1
    extended = _model(cls).set_params(max_epochs=6, patience=2).fit(train, dev=dev)
    assert extended.resumed_from_epoch_ == len(impatient.history_) and extended.stopped_by_ == "patience"
    assert [h.get("snapshot", False) for h in extended.history_] == [h.get("snapshot", False) for h in whole.history_]
    _assert_same_run(extended, whole)
    # The more patient run is no beginning of the less patient one, nor of one with more epochs
    # and less patience; a run without patience is none of a run with some.
    run_epoch = Trainer.run_epoch
    trained = []
    monkeypatch.setattr(Trainer, "run_epoch", lambda self, *args: trained.append(1) or run_epoch(self, *args))
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "whole"))
    assert _model(cls).set_params(max_epochs=6, patience=1).fit(train, dev=dev).resumed_from_epoch_ == 0
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "unlimited"))
    _model(cls).set_params(max_epochs=2, patience=None).fit(train, dev=dev)
    assert _model(cls).set_params(max_epochs=6, patience=2).fit(train, dev=dev).resumed_from_epoch_ == 0
    assert trained


@pytest.mark.parametrize("cls, first, then, stopped_by", [
    # Patience 1 stops VSE after the third epoch, the first it counts: the last of the short run.
    (VSEEncoder, {"max_epochs": 3, "patience": 1}, {"patience": 1}, "patience"),
    # Patience 3 never stops a 3-epoch run, nor would patience 5.
    (ReiRelevanceScorer, {"max_epochs": 3, "patience": 3}, {"max_epochs": 3, "patience": 5}, "max_epochs")])
def test_an_earlier_run_that_is_this_whole_run_is_loaded(cls, first, then, stopped_by, tmp_path, monkeypatch):
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    _constant_dev(monkeypatch)
    earlier = _model(cls).set_params(**first).fit(train, dev=dev)
    assert earlier.stopped_by_ == stopped_by and len(earlier.history_) == 3
    monkeypatch.setattr(Trainer, "run_epoch", lambda *args: pytest.fail("trained again"))
    same = _model(cls).set_params(**then).fit(train, dev=dev)
    assert same.stopped_by_ == stopped_by and same.resumed_from_epoch_ == 3
    assert same.checkpoint_path_ != earlier.checkpoint_path_ and same.checkpoint_path_.is_file()
    _assert_same_run(same, earlier)


def test_a_run_stopped_on_less_patience_at_this_runs_last_epoch_is_not_used(tmp_path, monkeypatch):
    # Patience 1 stops a 2-epoch run on its last epoch; with patience 2 that epoch ends the run on
    # max_epochs instead, which the earlier run's state does not say: trained afresh.
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    _constant_dev(monkeypatch)
    assert _model(ReiRelevanceScorer).set_params(max_epochs=2, patience=1).fit(train, dev=dev).stopped_by_ == "patience"
    run = _model(ReiRelevanceScorer).set_params(max_epochs=2, patience=2).fit(train, dev=dev)
    assert run.resumed_from_epoch_ == 0 and run.stopped_by_ == "max_epochs" and run.checkpoint_path_.is_file()


@pytest.mark.parametrize("cls", list(CASES))
def test_a_finished_run_is_loaded_under_other_threads_and_an_unfinished_one_is_not_trained_on(cls, tmp_path,
                                                                                           monkeypatch):
    train, dev, whole = _whole_run(cls, tmp_path, monkeypatch)
    run_epoch = Trainer.run_epoch
    monkeypatch.setattr(Trainer, "run_epoch", lambda *args: pytest.fail("trained again"))
    loaded = _model(cls).set_params(n_threads=2).fit(train, dev=dev)
    assert loaded.resumed_from_epoch_ == 4 and loaded.checkpoint_path_ != whole.checkpoint_path_
    _assert_same_run(loaded, whole)
    monkeypatch.setattr(Trainer, "run_epoch", run_epoch)

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "interrupted"))
    undo = _interrupt_at(monkeypatch, 3)
    with pytest.raises(Interrupted):
        _model(cls).fit(train, dev=dev)
    undo()
    assert _model(cls).set_params(n_threads=2).fit(train, dev=dev).resumed_from_epoch_ == 0


def test_a_checkpoint_without_its_lineage_is_found_once_loaded(tmp_path, monkeypatch):
    # Checkpoints written before lineage.json existed: loading one records its lineage.
    train, dev, whole = _whole_run(VSEEncoder, tmp_path, monkeypatch)
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "old"))
    short = _model(VSEEncoder).set_params(max_epochs=2).fit(train, dev=dev)
    (short.checkpoint_path_.parent / "lineage.json").unlink()
    assert _model(VSEEncoder).set_params(max_epochs=3).fit(train, dev=dev).resumed_from_epoch_ == 0
    _model(VSEEncoder).set_params(max_epochs=2).fit(train, dev=dev)
    (tmp_path / "old" / "checkpoints" / _model(VSEEncoder).set_params(max_epochs=3).checkpoint_key(train, dev)
     / "state.pt").unlink()
    extended = _model(VSEEncoder).fit(train, dev=dev)
    assert extended.resumed_from_epoch_ == 2
    _assert_same_run(extended, whole)


@pytest.mark.parametrize("cls", list(CASES))
def test_longer_run_extends_an_unfinished_shorter_run(cls, tmp_path, monkeypatch):
    # A 3-epoch run stopped by the clock after epoch 1 (char-GRU kept that epoch only because the
    # clock stopped the run before its first snapshot epoch), and a 3-epoch run interrupted
    # during epoch 3: the 4-epoch run trains on from each to the uninterrupted run's weights.
    train, dev, whole = _whole_run(cls, tmp_path, monkeypatch)
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "clocked"))
    clocked = _model(cls).set_params(max_epochs=3, max_train_seconds=1e-9).fit(train, dev=dev)
    assert clocked.stopped_by_ == "time budget" and len(clocked.history_) == 1
    # A budget that would have stopped it no later does not use it.
    assert _model(cls).set_params(max_train_seconds=1e-9).fit(train, dev=dev).resumed_from_epoch_ == 0
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "clocked2"))
    _model(cls).set_params(max_epochs=3, max_train_seconds=1e-9).fit(train, dev=dev)
    extended = _model(cls).fit(train, dev=dev)
    assert extended.resumed_from_epoch_ == 1 and extended.stopped_by_ == "max_epochs"
    assert [h.get("snapshot", False) for h in extended.history_] == [h.get("snapshot", False) for h in whole.history_]
    _assert_same_run(extended, whole)

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "interrupted"))
    undo = _interrupt_at(monkeypatch, 3)
    with pytest.raises(Interrupted):
        _model(cls).set_params(max_epochs=3).fit(train, dev=dev)
    undo()
    extended = _model(cls).fit(train, dev=dev)
    assert extended.resumed_from_epoch_ == 2
    _assert_same_run(extended, whole)


def test_of_several_earlier_runs_the_one_that_went_furthest_is_extended(tmp_path, monkeypatch):
    # The 4-epoch run itself and a 3-epoch run, both interrupted after one epoch, and a finished
    # 2-epoch run: the 4-epoch run trains on from the 2-epoch one.
    train, dev, whole = _whole_run(VSEEncoder, tmp_path, monkeypatch)
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "several"))
    undo = _interrupt_at(monkeypatch, 2)
    for epochs in (4, 3):  # the 4-epoch run first, so that it trains its first epoch itself
        with pytest.raises(Interrupted):
            _model(VSEEncoder).set_params(max_epochs=epochs).fit(train, dev=dev)
    undo()
    _model(VSEEncoder).set_params(max_epochs=2).fit(train, dev=dev)
    extended = _model(VSEEncoder).fit(train, dev=dev)
    assert extended.resumed_from_epoch_ == 2
    _assert_same_run(extended, whole)


@pytest.mark.parametrize("cls", list(CASES))
def test_a_run_stopped_by_the_clock_trains_on_under_a_larger_budget(cls, tmp_path, monkeypatch):
    train, dev, whole = _whole_run(cls, tmp_path, monkeypatch)
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "clocked"))
    clocked = _model(cls).set_params(max_train_seconds=1e-9).fit(train, dev=dev)
    assert clocked.stopped_by_ == "time budget" and len(clocked.history_) == 1
    # Under the budget that stopped it, the run is loaded as it is.
    run_epoch = Trainer.run_epoch
    monkeypatch.setattr(Trainer, "run_epoch", lambda *args: pytest.fail("trained again"))
    again = _model(cls).set_params(max_train_seconds=1e-9).fit(train, dev=dev)
    assert again.stopped_by_ == "time budget" and again.resumed_from_epoch_ == 1
    monkeypatch.setattr(Trainer, "run_epoch", run_epoch)
    # Without one it trains on, from the same checkpoint, to the uninterrupted run (char-GRU's
    # epoch 1, kept only because the clock stopped the run there, is a snapshot no more).
    resumed = _model(cls).fit(train, dev=dev)
    assert resumed.resumed_from_epoch_ == 1 and resumed.checkpoint_path_ == clocked.checkpoint_path_
    assert resumed.stopped_by_ == "max_epochs"
    assert [h.get("snapshot", False) for h in resumed.history_] == [h.get("snapshot", False) for h in whole.history_]
    _assert_same_run(resumed, whole)


def test_checkpoint_key_covers_parameters_data_and_features():
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    model = _model(VSEEncoder)
    key = model.checkpoint_key(train, dev)
    assert key == _model(VSEEncoder).checkpoint_key(train, dev)
    assert key != model.set_params(margin=0.1).checkpoint_key(train, dev)
    assert key != _model(VSEEncoder).set_params(max_epochs=2).checkpoint_key(train, dev)
    assert key != _model(VSEEncoder).checkpoint_key(train, None)
    assert key != _model(VSEEncoder).checkpoint_key(dev, train)
    assert key != _model(VSEEncoder).set_params(image_encoder=TinyEncoder(dim=8)).checkpoint_key(train, dev)
    # Whether a checkpoint is written, and when the clock would stop the run, do not change
    # what is trained.
    assert key == _model(VSEEncoder).set_params(checkpoint=False).checkpoint_key(train, dev)
    assert key == _model(VSEEncoder).set_params(max_train_seconds=60.0).checkpoint_key(train, dev)


def test_a_parameter_added_later_leaves_the_key_unchanged_at_its_old_behaviour(monkeypatch):
    # Checkpoints written before length_window existed are found: at None the key is the one
    # computed without the parameter.
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    key = _model(VSEEncoder).checkpoint_key(train, dev)
    assert key != _model(VSEEncoder).set_params(length_window=2).checkpoint_key(train, dev)
    get_params = VSEEncoder.get_params
    monkeypatch.setattr(VSEEncoder, "get_params", lambda self, deep=True: {
        k: v for k, v in get_params(self, deep).items() if k != "length_window"})
    assert _model(VSEEncoder).checkpoint_key(train, dev) == key


def test_checkpoint_is_written_atomically_each_epoch(tmp_path, monkeypatch):
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    data = make_dataset(n=8)
    model = _model(VSEEncoder).set_params(max_epochs=2).fit(data.subset("train"))
    path = model.checkpoint_path_
    assert path.parent.parent == tmp_path / "checkpoints"
    assert sorted(p.name for p in path.parent.iterdir()) == ["lineage.json", "state.pt"]  # no temporary file left
    state = read_checkpoint(path)
    assert state["finished"] and len(state["run"]["history"]) == 2


def test_damaged_checkpoint_is_retrained_not_trusted(tmp_path, monkeypatch):
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path))
    train = make_dataset(n=8).subset("train")
    first = _model(VSEEncoder).set_params(max_epochs=1).fit(train)
    first.checkpoint_path_.write_bytes(b"not a checkpoint")
    with pytest.warns(CacheWarning, match="state.pt is damaged"):
        again = _model(VSEEncoder).set_params(max_epochs=1).fit(train)
    assert again.resumed_from_epoch_ == 0 and len(again.history_) == 1
    assert read_checkpoint(again.checkpoint_path_)["finished"]


def test_fit_from_checkpoint_loads_a_trained_model_and_never_trains(tmp_path, monkeypatch):
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "cache"))

    def loaded(model):
        path = model.fit_from_checkpoint(train, dev)
        assert (path is not None) == hasattr(model, "networks_")
        return path

    assert loaded(_model(VSEEncoder)) is None
    assert not any((tmp_path / "cache").rglob("lineage.json"))  # nothing written
    undo = _interrupt_at(monkeypatch, 3)
    with pytest.raises(Interrupted):
        _model(VSEEncoder).fit(train, dev=dev)
    undo()
    # An interrupted run is not a trained model, and is not trained on.
    assert loaded(_model(VSEEncoder)) is None
    whole = _model(VSEEncoder).fit(train, dev=dev)
    model = _model(VSEEncoder)
    assert loaded(model) == whole.checkpoint_path_
    assert model.history_ == whole.history_
    np.testing.assert_allclose(model.embed_texts(["a dog runs"]), whole.embed_texts(["a dog runs"]))
    # The same run under other threads is loaded, so it is at hand too; other data or settings are not.
    assert loaded(_model(VSEEncoder).set_params(n_threads=2)) is not None
    assert loaded(_model(VSEEncoder).set_params(margin=0.3)) is None
    assert _model(VSEEncoder).fit_from_checkpoint(train, data.subset("train")) is None
    assert loaded(_model(VSEEncoder).set_params(checkpoint=False)) is None
