"""The trainable systems by name: configurations, the command line's registry, fitting with dev."""

import numpy as np
import pytest

from kcca_desc.data.dataset import Dataset
from kcca_desc.cli.fit import build_parser
from kcca_desc.methods import SYSTEMS, EncoderMethod, PairScorerMethod
from kcca_desc.methods.trainable_systems import TRAINABLE_CONFIGS, WRAPPERS, TrainableSystem, fit_with_dev, \
    trainable_model

from toys import TinyEncoder, make_dataset


def _with_dev(n=18):
    data = make_dataset(n=n)
    idx = np.arange(n)
    return Dataset("tiny", data.images, data.captions, {"train": idx[:6], "dev": idx[6:12], "test": idx[12:]})


def test_every_system_has_both_configurations_and_its_fixed_settings():
    for name, entry in TRAINABLE_CONFIGS.items():
        assert set(entry["configs"]) == {"cpu", "paper"}
        for config in ("cpu", "paper"):
            model = trainable_model(name, config)
            params = model.get_params()
            assert all(params[k] == v for k, v in {**entry["configs"][config], **entry["fixed"]}.items())
    assert trainable_model("vse_hardest").name == "vse_hardest"
    assert trainable_model("char_gru", "paper").hidden_dim == 1024


def test_unknown_system_or_configuration_is_an_error():
    with pytest.raises(ValueError, match="unknown trainable system 'vse2'"):
        trainable_model("vse2")
    with pytest.raises(ValueError, match="unknown configuration 'gpu'"):
        trainable_model("vse", "gpu")


def test_command_line_builds_each_trainable_system():
    args = build_parser().parse_args(["--method", "rei", "--train-config", "paper", "--train-epochs", "3"])
    method = SYSTEMS["rei"].build(vars(args), {"random_state": 4, "image_kernel": "pyramid", "cache": True})
    assert isinstance(method, PairScorerMethod)
    assert method.scorer.max_epochs == 3 and method.scorer.random_state == 4 and method.scorer.batch_size == 32
    for name in WRAPPERS:
        assert name in SYSTEMS


@pytest.mark.parametrize("name", list(WRAPPERS))
def test_trainable_system_fits_on_train_with_dev_and_scores(name):
    pytest.importorskip("torch", reason="the trainable models need the optional torch extra")
    method = TrainableSystem(name)(image_encoder=TinyEncoder(), max_epochs=1, checkpoint=False)
    assert isinstance(method, EncoderMethod if name != "rei" else PairScorerMethod)
    model = method.encoder if name != "rei" else method.scorer
    sizes = ("word_dim", "joint_dim", "hidden_dim", "attention_dim")
    model.set_params(**{k: 8 for k in sizes if k in model.get_params()})
    data = _with_dev()
    fit_with_dev(method, data, "hodosh")
    assert "rsum" in model.history_[0]        # dev figures: the dev split was used
    view = data.view("test", "karpathy")
    assert method.score(view.images, view.captions).shape == (view.n_images, view.n_captions)
