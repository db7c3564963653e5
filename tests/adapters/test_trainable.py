"""VSE and char-GRU baselines: the loss, a falling loss on a tiny batch, finite gradients."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from kcca_desc.methods.encoders import EncoderMethod  # noqa: E402
from kcca_desc.adapters.trainable import CharGRUEncoder, VSEEncoder, bidirectional_hinge_loss  # noqa: E402

from toys import TinyEncoder, make_dataset  # noqa: E402


def brute_force_loss(S, margin):
    B = len(S)
    total = 0.0
    for i in range(B):
        for k in range(B):
            if k != i:
                total += max(0.0, margin - S[i, i] + S[i, k])  # image i, wrong caption k
                total += max(0.0, margin - S[i, i] + S[k, i])  # caption i, wrong image k
    return total / B


def test_hinge_loss_matches_explicit_loops():
    g = torch.Generator().manual_seed(0)
    a = torch.nn.functional.normalize(torch.randn(5, 4, generator=g), dim=1)
    b = torch.nn.functional.normalize(torch.randn(5, 4, generator=g), dim=1)
    S = (a @ b.T).numpy()
    assert float(bidirectional_hinge_loss(a, b, 0.3)) == pytest.approx(brute_force_loss(S, 0.3), rel=1e-6)


@pytest.mark.parametrize("cls, kwargs", [
    (VSEEncoder, {"word_dim": 16, "joint_dim": 16, "min_count": 1}),
    (CharGRUEncoder, {"char_dim": 8, "hidden_dim": 16, "attention_dim": 8, "joint_dim": 16}),
])
def test_loss_falls_and_gradients_are_finite(cls, kwargs):
    data = make_dataset(n=16)
    enc = cls(image_encoder=TinyEncoder(), max_epochs=1, batch_size=16, random_state=0, **kwargs)
    enc.fit(data)  # builds vocabulary and networks
    feats = torch.from_numpy(TinyEncoder().embed_images(data.images).astype(np.float32))
    texts = [caps[0] for caps in data.captions]
    params = list(enc.image_projection_.parameters()) + list(enc.text_network_.parameters())
    opt = torch.optim.Adam(params, lr=1e-2)
    losses = []
    for _ in range(30):
        loss = bidirectional_hinge_loss(enc._embed_image_tensor(feats), enc._embed_text_tensor(texts), 0.2)
        opt.zero_grad()
        loss.backward()
        assert all(torch.isfinite(p.grad).all() for p in params if p.grad is not None)
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_fit_is_seeded_early_stops_and_plugs_into_the_harness():
    data = make_dataset(n=24)
    train, test = data.subset("train"), data.subset("test")
    kwargs = dict(image_encoder=TinyEncoder(), word_dim=8, joint_dim=8, min_count=1, batch_size=8,
                  max_epochs=4, patience=1, random_state=3)
    a = VSEEncoder(**kwargs).fit(train, dev=test)
    b = VSEEncoder(**kwargs).fit(train, dev=test)
    assert [h["loss"] for h in a.history_] == [h["loss"] for h in b.history_]
    assert 1 <= a.best_epoch_ <= len(a.history_) <= 4
    view = test.view("test", "hodosh")
    S = EncoderMethod(a).score(view.images, view.captions)
    assert S.shape == (12, 12) and np.all(np.isfinite(S))


def test_unfitted_use_is_an_error():
    with pytest.raises(RuntimeError, match="not fitted"):
        VSEEncoder().embed_texts(["a dog"])
