"""Rei's gated relevance scorer: the stopped gradient, the ablation settings,
and blocked cross-conditioned scoring equal to scoring every pair alone."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainable models need the optional torch extra")

from kcca_desc.neural import REI_ABLATION, ReiRelevanceScorer  # noqa: E402
from kcca_desc.methods.encoders import PairScorerMethod  # noqa: E402

from toys import TinyEncoder, make_dataset  # noqa: E402


def _scorer(**kwargs):
    settings = {"word_dim": 8, "hidden_dim": 6, "min_count": 1, "batch_size": 6, "max_epochs": 2,
                "checkpoint": False, **kwargs}
    data = make_dataset(n=12)
    return ReiRelevanceScorer(image_encoder=TinyEncoder(), **settings).fit(data.subset("train")), data


def test_gate_passes_no_gradient_to_the_sentence_vector():
    model, _ = _scorer()
    network = model.networks_[0]
    torch.manual_seed(0)
    x = torch.randn(3, 16)
    u = torch.randn(4, 6, requires_grad=True)
    z = network.gate(u)
    # The gate depends on W_z and b_z only: no path from z back to u.
    assert torch.autograd.grad(z.sum(), u, allow_unused=True) == (None,)
    assert torch.autograd.grad(z.sum(), network.gate_layer.weight)[0].abs().sum() > 0
    # The score's gradient in u is the one with z held fixed, which differs from an ungated-stop model's.
    (through_model,) = torch.autograd.grad(network.scores(x, u).sum(), u)
    z_fixed = z.detach()
    v = torch.tanh(network.image(x[:, None, :] * z_fixed[None]))
    (z_constant,) = torch.autograd.grad((v * u[None]).sum(), u)
    torch.testing.assert_close(through_model, z_constant, rtol=0, atol=0)
    z_live = torch.sigmoid(network.gate_layer(u))
    v_live = torch.tanh(network.image(x[:, None, :] * z_live[None]))
    (without_stop,) = torch.autograd.grad((v_live * u[None]).sum(), u)
    assert not torch.allclose(without_stop, through_model)


@pytest.mark.parametrize("step", list(REI_ABLATION))
def test_blocked_scores_equal_pair_by_pair_scores(step):
    model, data = _scorer(**REI_ABLATION[step], max_block_elements=40)
    test = data.subset("test")
    texts = [c for caps in test.captions for c in caps[:2]]
    S = model.score(test.images, texts)
    assert S.shape == (len(test.images), len(texts))
    one_by_one = np.array([[model.score(test.images.subset([i]), [t])[0, 0] for t in texts]
                           for i in range(len(test.images))])
    np.testing.assert_allclose(S, one_by_one, rtol=1e-5, atol=1e-6)
    # A block size holding the whole pool gives the same scores.
    np.testing.assert_allclose(model.set_params(max_block_elements=2 ** 20).score(test.images, texts), S,
                               rtol=1e-5, atol=1e-6)


def test_ablation_steps_change_what_they_name():
    base, _ = _scorer(**REI_ABLATION["baseline"])
    full, data = _scorer(**REI_ABLATION["+softmax"])
    assert base.networks_[0].gate_layer is None and full.networks_[0].gate_layer is not None
    test = data.subset("test")
    cosine = base.score(test.images, test.captions[0])
    assert np.all(np.abs(cosine) <= 1 + 1e-6)            # the baseline scores cosines
    assert base._tokens("A dog") == ["<s>", "a", "dog", "</s>"]


def test_pair_scorer_method_scores_with_the_trained_scorer():
    model, data = _scorer()
    view = data.view("test", "karpathy")
    S = PairScorerMethod(model).score(view.images, view.captions)
    assert S.shape == (view.n_images, view.n_captions) and np.all(np.isfinite(S))
    with pytest.raises(TypeError, match="ImageSource"):
        model.score([np.zeros((4, 4, 3))], ["a dog"])
