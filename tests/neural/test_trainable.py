"""The trainable models' losses, networks and fitting: hand-computed losses, falling losses with
finite gradients, the cyclic schedule, snapshot ensembling, and use in the harness."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch", reason="the trainable models need the optional torch extra")

from kcca_desc._core.errors import NotFittedError  # noqa: E402
from kcca_desc._core.progress import is_quiet, set_quiet  # noqa: E402
from kcca_desc.methods.encoders import EncoderMethod  # noqa: E402
from kcca_desc.neural import (CharGRUEncoder, ReiRelevanceScorer, VSEEncoder,  # noqa: E402
                              bidirectional_hinge_loss, hinge_loss, recall_sum, softmax_cross_entropy_loss, trainer)

from toys import TinyEncoder, as_training_set, make_dataset  # noqa: E402

SMALL = {
    VSEEncoder: {"word_dim": 16, "joint_dim": 16, "min_count": 1},
    CharGRUEncoder: {"char_dim": 8, "hidden_dim": 8, "attention_dim": 8, "n_heads": 2},
    ReiRelevanceScorer: {"word_dim": 16, "hidden_dim": 16, "min_count": 1},
}


def looped_hinge(S, margin, directions=("annotation", "search"), hardest=False):
    """The hinge loss by explicit loops over the queries and their negatives."""
    B = len(S)
    total = 0.0
    for i in range(B):
        for direction in directions:
            costs = [max(0.0, margin - S[i, i] + (S[i, k] if direction == "annotation" else S[k, i]))
                     for k in range(B) if k != i]
            total += max(costs) if hardest else sum(costs)
    return total / B


def test_hinge_losses_by_hand():
    S = torch.tensor([[0.9, 0.8, 0.1], [0.5, 0.2, 0.6], [0.0, 0.3, 0.7]])
    # Image 0: texts 1, 2 cost 0.1 and 0; image 1: 0.5, 0.6; image 2: 0, 0.   Sum 1.2.
    # Text 0 vs images 1, 2: 0, 0; text 1: 0.8, 0.3; text 2: 0, 0.1.            Sum 1.2.
    assert float(hinge_loss(S, margin=0.2, directions=("annotation",))) == pytest.approx(1.2 / 3)
    assert float(hinge_loss(S, margin=0.2)) == pytest.approx(2.4 / 3)
    # Hardest: annotation max 0.1 + 0.6 + 0; search max 0 + 0.8 + 0.1.
    assert float(hinge_loss(S, margin=0.2, hardest=True)) == pytest.approx(1.6 / 3)


@pytest.mark.parametrize("hardest", [False, True])
@pytest.mark.parametrize("directions", [("annotation",), ("search",), ("annotation", "search")])
def test_hinge_loss_matches_explicit_loops(hardest, directions):
    g = torch.Generator().manual_seed(0)
    a = torch.nn.functional.normalize(torch.randn(5, 4, generator=g), dim=1)
    b = torch.nn.functional.normalize(torch.randn(5, 4, generator=g), dim=1)
    S = a @ b.T
    expected = looped_hinge(S.numpy(), 0.3, directions, hardest)
    assert float(hinge_loss(S, margin=0.3, directions=directions, hardest=hardest)) == pytest.approx(expected, rel=1e-6)
    if directions == ("annotation", "search"):
        assert float(bidirectional_hinge_loss(a, b, margin=0.3, hardest=hardest)) == pytest.approx(expected, rel=1e-6)


def test_hinge_loss_refuses_unknown_directions():
    with pytest.raises(ValueError, match="directions"):
        hinge_loss(torch.zeros(2, 2), margin=0.2, directions=("text",))


def test_softmax_cross_entropy_by_hand():
    S = torch.tensor([[2.0, 0.0], [1.0, 1.0]])
    # Image 0: −log(e²/(e² + 1)); image 1: −log(1/2).
    expected = (-math.log(math.exp(2) / (math.exp(2) + 1)) + math.log(2)) / 2
    assert float(softmax_cross_entropy_loss(S)) == pytest.approx(expected, rel=1e-6)


def test_recall_sum_counts_ties_against_the_gold_item():
    assert recall_sum(np.eye(20))["rsum"] == 600
    assert recall_sum(np.ones((20, 20)))["annotation_R@10"] == 0


def _fitted(cls, n=16, **kwargs):
    data = make_dataset(n=n)
    settings = {"max_epochs": 1, "batch_size": n, "checkpoint": False, "random_state": 0, **SMALL[cls], **kwargs}
    return cls(image_encoder=TinyEncoder(), **settings).fit(as_training_set(data)), data


@pytest.mark.parametrize("cls", list(SMALL))
def test_loss_falls_on_a_tiny_batch_with_finite_gradients(cls):
    model, data = _fitted(cls, dropout=0.0) if cls is ReiRelevanceScorer else _fitted(cls)
    network = model.networks_[0].train()
    feats = torch.from_numpy(TinyEncoder().embed_images(data.images).astype(np.float32))
    ids, lengths = model._encode_texts([caps[0] for caps in data.captions])
    opt = torch.optim.Adam(network.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        loss = model._batch_loss(network, feats, ids, lengths, epoch=1)
        opt.zero_grad()
        loss.backward()
        grads = [p.grad for p in network.parameters() if p.grad is not None]
        assert grads and all(torch.isfinite(g).all() for g in grads)
        opt.step()
        losses.append(loss.item())
    # By at least a quarter: with four look-alike images per colour, the softmax loss has a floor
    # of log 4, half its start of log 16.
    assert losses[-1] < 0.75 * losses[0]


def test_vse_switches_to_hardest_negatives_after_the_sum_epochs():
    model = VSEEncoder(negatives="hardest", sum_epochs=2)
    assert [model._hardest(e) for e in (1, 2, 3)] == [False, False, True]
    assert not VSEEncoder(negatives="sum")._hardest(10)


def test_vse_learning_rate_decays_after_its_epoch():
    model = VSEEncoder(lr_decay_epoch=2, lr_decay=0.1)
    assert [model._lr_factor(s, 10) for s in (0, 19, 20, 50)] == [1.0, 1.0, 0.1, 0.1]


def test_char_gru_cyclic_learning_rate_and_snapshot_epochs():
    model = CharGRUEncoder(lr=1e-3, lr_min=1e-6, cycle_epochs=4, max_epochs=10)
    lr = [1e-3 * model._lr_factor(s, 5) for s in range(45)]
    assert lr[0] == pytest.approx(1e-3) and lr[20] == pytest.approx(1e-3)        # a restart every 4 epochs
    assert min(lr) >= 1e-6 and lr[19] == pytest.approx(1e-6, abs=2e-5)           # a minimum at a cycle's end
    assert lr[10] == pytest.approx(0.5 * (1e-3 + 1e-6))                          # the half-way cosine
    assert [e for e in range(1, 11) if model._is_snapshot_epoch(e)] == [4, 8, 10]


def test_char_gru_keeps_the_characters_as_written_and_embeds_the_heads():
    model, data = _fitted(CharGRUEncoder)
    assert "A" not in model.vocabulary_ and model._tokens("A dog.") == ["A", " ", "d", "o", "g", "."]
    assert model.embed_texts(["a red dog"]).shape == (1, 2 * 2 * 8)


@settings(max_examples=20, deadline=None)
@given(lengths=st.lists(st.integers(1, 9), min_size=1, max_size=6), seed=st.integers(0, 2**16))
def test_char_gru_states_equal_a_packed_bidirectional_gru(lengths, seed):
    """The two one-way GRUs over the padded batch against torch's bidirectional GRU over the
    packed batch, carrying the same weights: the pooled caption embeddings agree."""
    from kcca_desc.neural.char_gru import _network
    torch.manual_seed(seed)
    network = _network(12, 4, 3, 5, 4, 2, 0.0).eval()
    packed_gru = torch.nn.GRU(3, 5, batch_first=True, bidirectional=True)
    network.load_state_dict({**{k: v for k, v in network.state_dict().items() if "_gru." not in k},
                             **{"gru." + k: v for k, v in packed_gru.state_dict().items()}})
    ids = torch.zeros((len(lengths), max(lengths)), dtype=torch.long)
    for row, n in enumerate(lengths):
        ids[row, :n] = torch.randint(1, 12, (n,))
    lengths = torch.tensor(lengths)
    packed = torch.nn.utils.rnn.pack_padded_sequence(network.embed(ids), lengths, batch_first=True,
                                                     enforce_sorted=False)
    states, _ = torch.nn.utils.rnn.pad_packed_sequence(packed_gru(packed)[0], batch_first=True)
    expected = []
    for head in network.heads:
        pooled = [torch.softmax(head(states[b, :n]), dim=0).mul(states[b, :n]).sum(dim=0)
                  for b, n in enumerate(lengths)]
        expected.append(torch.stack(pooled))
    with torch.no_grad():
        np.testing.assert_allclose(network.embed_text(ids, lengths), torch.cat(expected, dim=1).detach(),
                                   rtol=1e-5, atol=1e-6)


def test_snapshot_ensemble_averages_the_snapshots_cosines():
    data = make_dataset(n=16)
    train, dev = data.subset("train"), data.subset("test")
    model = CharGRUEncoder(image_encoder=TinyEncoder(), **SMALL[CharGRUEncoder], batch_size=8, max_epochs=4,
                           cycle_epochs=1, n_ensemble=2, checkpoint=False).fit(train, dev=dev)
    assert len(model.networks_) == 2 and model.best_epoch_ == model.snapshot_epochs_[0]
    kept = [h for h in model.history_ if h["epoch"] in model.snapshot_epochs_]
    assert min(h["rsum"] for h in kept) >= max(h["rsum"] for h in model.history_
                                               if h["epoch"] not in model.snapshot_epochs_)
    view = dev.view("test", "hodosh")
    ensemble = EncoderMethod(model).score(view.images, view.captions)
    singles = []
    for network in model.networks_:
        model_one = model.__class__(**model.get_params())
        model_one.__dict__.update({k: v for k, v in vars(model).items() if k.endswith("_")}, networks_=[network])
        singles.append(EncoderMethod(model_one).score(view.images, view.captions))
    np.testing.assert_allclose(ensemble, np.mean(singles, axis=0), atol=1e-5)


def test_fit_is_seeded_early_stops_and_plugs_into_the_harness():
    data = make_dataset(n=24)
    train, test = data.subset("train"), data.subset("test")
    kwargs = dict(image_encoder=TinyEncoder(), **SMALL[VSEEncoder], batch_size=8, max_epochs=4, patience=1,
                  lr=1e-2, checkpoint=False, random_state=3)
    a = VSEEncoder(**kwargs).fit(train, dev=test)
    b = VSEEncoder(**kwargs).fit(train, dev=test)
    measured = ("seconds", "max_rss_gib")  # of the machine, not of the seed
    assert [{k: v for k, v in h.items() if k not in measured} for h in a.history_] == \
        [{k: v for k, v in h.items() if k not in measured} for h in b.history_]
    assert all(h["max_rss_gib"] > 0 for h in a.history_)
    assert 1 <= a.best_epoch_ <= len(a.history_) <= 4
    assert a.stopped_by_ in ("patience", "max_epochs")
    assert {"loss", "lr", "rsum", "annotation_R@1", "search_R@10"} <= set(a.history_[0])
    view = test.view("test", "hodosh")
    S = EncoderMethod(a).score(view.images, view.captions)
    assert S.shape == (12, 12) and np.all(np.isfinite(S))


@pytest.mark.parametrize("cls", [VSEEncoder, ReiRelevanceScorer])  # char-GRU scores as VSE does
def test_training_and_scoring_run_on_n_threads_and_restore_the_callers(cls, monkeypatch):
    # torch's thread count is global: a model that set it and left it would change every later
    # torch call of its caller (the trained towers of the strongest baseline embedded on one thread).
    seen = []
    forward = torch.nn.Module.__call__

    def spy(module, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return forward(module, *args, **kwargs)

    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        monkeypatch.setattr(torch.nn.Module, "__call__", spy)
        model, data = _fitted(cls, n_threads=2)
        assert seen and set(seen) == {2} and torch.get_num_threads() == 3
        seen.clear()
        view = data.view("test", "hodosh")
        scorer = model if cls is ReiRelevanceScorer else EncoderMethod(model)
        scorer.score(view.images, view.captions)
        assert seen and set(seen) == {2} and torch.get_num_threads() == 3
        seen.clear()
        model.set_params(n_threads=None)
        scorer.score(view.images, view.captions)
        assert seen and set(seen) == {3}
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("decay_epoch, stopped_after", [(None, 2), (3, 4)])
def test_vse_dev_patience_waits_for_the_learning_rate_decay(monkeypatch, decay_epoch, stopped_after):
    # A dev figure that never improves: patience 1 ends the run one epoch after the first, or one
    # epoch after the decay (the decayed phase lifts dev, so a plateau before it must not stop it).
    monkeypatch.setattr(trainer, "recall_sum", lambda scores: {"rsum": 100.0})
    data = make_dataset(n=24)
    model = VSEEncoder(image_encoder=TinyEncoder(), **SMALL[VSEEncoder], batch_size=8, max_epochs=6, patience=1,
                       lr_decay_epoch=decay_epoch, checkpoint=False).fit(data.subset("train"), dev=data.subset("test"))
    assert len(model.history_) == stopped_after and model.stopped_by_ == "patience"


def test_time_budget_is_a_recorded_safety_stop():
    model, _ = _fitted(VSEEncoder, max_epochs=5, max_train_seconds=1e-9)
    assert model.stopped_by_ == "time budget" and len(model.history_) == 1
    # Stopped before its first snapshot epoch (the end of a cycle), a model keeps its last weights.
    model, _ = _fitted(CharGRUEncoder, max_epochs=8, cycle_epochs=4, max_train_seconds=1e-9)
    assert model.stopped_by_ == "time budget" and model.snapshot_epochs_ == [1] and len(model.networks_) == 1


def test_unfitted_use_and_bad_parameters_are_errors():
    with pytest.raises(NotFittedError, match="not fitted"):
        VSEEncoder().embed_texts(["a dog"])
    with pytest.raises(ValueError, match="negatives"):
        VSEEncoder(image_encoder=TinyEncoder(), negatives="max").fit(make_dataset(4))
    with pytest.raises(ValueError, match="not a torch device"):
        VSEEncoder(image_encoder=TinyEncoder(), device="gpu0").fit(make_dataset(4))
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            VSEEncoder(image_encoder=TinyEncoder(), device="cuda").fit(make_dataset(4))
    with pytest.raises(ValueError, match="at least 2 images"):
        VSEEncoder(image_encoder=TinyEncoder(), checkpoint=False).fit(make_dataset(2).subset("train"))


@pytest.mark.parametrize("cls", [VSEEncoder, CharGRUEncoder])
def test_dropout_acts_in_training_only(cls):
    model, data = _fitted(cls, dropout=0.5)
    network = model.networks_[0]
    feats = torch.from_numpy(TinyEncoder().embed_images(data.images).astype(np.float32))
    ids, lengths = model._encode_texts([caps[0] for caps in data.captions])
    network.train()
    assert not torch.equal(network.embed_image(feats), network.embed_image(feats))
    assert not torch.equal(network.embed_text(ids, lengths), network.embed_text(ids, lengths))
    network.eval()
    assert torch.equal(network.embed_image(feats), network.embed_image(feats))
    assert torch.equal(network.embed_text(ids, lengths), network.embed_text(ids, lengths))
    with pytest.raises(ValueError, match="dropout"):
        cls(image_encoder=TinyEncoder(), dropout=1.0).fit(make_dataset(4))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 90), batch_size=st.integers(2, 9), window=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_length_windows_cut_the_same_number_of_batches_of_similar_lengths(n, batch_size, window, seed):
    rng = np.random.default_rng(seed)
    token_ids = [[1] * int(k) for k in rng.integers(1, 40, size=n)]
    order = rng.permutation(n)
    batches = trainer.batches(order, token_ids, batch_size, window, np.random.default_rng(seed))
    # As many batches, of the same sizes, as slicing cuts: the learning-rate schedule is unchanged.
    assert sorted(map(len, batches)) == sorted(len(order[s:s + batch_size]) for s in range(0, n, batch_size))
    np.testing.assert_array_equal(np.sort(np.concatenate(batches)), np.arange(n))
    # A window's batches are consecutive runs of its pairs sorted by length.
    position = {j: p for p, j in enumerate(order)}
    size = window * batch_size
    by_window = {}
    for b in batches:
        windows = {position[j] // size for j in b}
        assert len(windows) == 1
        by_window.setdefault(windows.pop(), []).append(b)
    for w, members in by_window.items():
        lengths = [sorted(len(token_ids[j]) for j in b) for b in members]
        lengths.sort()
        flat = [x for b in lengths for x in b]
        expected = sorted(len(token_ids[j]) for j in order[w * size:(w + 1) * size])
        assert flat == expected


def test_without_a_length_window_batches_are_slices_and_draw_nothing():
    order = np.random.default_rng(0).permutation(10)
    rng = np.random.default_rng(1)
    before = rng.bit_generator.state
    batches = trainer.batches(order, [[1]] * 10, 4, None, rng)
    assert [b.tolist() for b in batches] == [order[:4].tolist(), order[4:8].tolist(), order[8:].tolist()]
    assert rng.bit_generator.state == before


def test_vse_weight_decay_reaches_adam():
    model, _ = _fitted(VSEEncoder, weight_decay=1e-4)
    assert model._optimiser_options() == {"weight_decay": 1e-4}


@pytest.mark.parametrize("stop", [{"max_epochs": 3}, {"max_epochs": 5, "max_train_seconds": 1e-9}])
def test_progress_counts_every_epoch_run_including_the_last(stop, capsys):
    # The epoch that ends the run (last one, or an early stop) is done once its checkpoint is written.
    before = is_quiet()
    set_quiet(False)
    try:
        model, _ = _fitted(VSEEncoder, **stop)
    finally:
        set_quiet(before)
    err = capsys.readouterr().err
    n = len(model.history_)
    assert f"VSEEncoder epochs: done, {n} epoch{'s' if n > 1 else ''} in" in err, err
