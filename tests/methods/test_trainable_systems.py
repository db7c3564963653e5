"""The trainable systems by name: typed specs checked at registration, configurations, variants,
the command line's registry, fitting with dev."""

import subprocess
import sys
from types import MappingProxyType

import numpy as np
import pytest

from kcca_desc._core.errors import ParameterError
from kcca_desc.data.dataset import Dataset
from kcca_desc.cli.fit import build_parser
from kcca_desc.methods import SYSTEMS, EncoderMethod, PairScorerMethod
from kcca_desc.methods.trainable_spec import TrainableSpec
from kcca_desc.methods.trainable_systems import TRAINABLE, TRAINABLE_VARIANTS, TrainableSystem, TrainableVariant, \
    fit_with_dev
from kcca_desc.neural import REI_ABLATION, VSEEncoder

from toys import TinyEncoder, make_dataset


def _with_dev(n=18):
    data = make_dataset(n=n)
    idx = np.arange(n)
    return Dataset("tiny", data.images, data.captions, {"train": idx[:6], "dev": idx[6:12], "test": idx[12:]})


def test_every_system_has_both_configurations_and_its_fixed_settings():
    for name, spec in TRAINABLE.items():
        assert set(spec.configs) == {"cpu", "paper"}
        for config in ("cpu", "paper"):
            model = spec.build(config)
            assert type(model) is spec.model
            params = model.get_params()
            assert all(params[k] == v for k, v in {**spec.configs[config], **spec.fixed}.items())
    assert TRAINABLE["vse_hardest"].build().name == "vse_hardest"
    assert TRAINABLE["char_gru"].build("paper").hidden_dim == 1024


def test_unknown_system_or_configuration_is_an_error():
    with pytest.raises(ValueError, match="unknown trainable system 'vse2'"):
        TRAINABLE["vse2"]
    with pytest.raises(ValueError, match="unknown configuration 'gpu'"):
        TRAINABLE["vse"].build("gpu")


def test_settings_are_read_only():
    spec = TRAINABLE["rei"]
    for settings in (spec.configs, spec.configs["cpu"], spec.fixed, TRAINABLE_VARIANTS["rei_baseline"].settings,
                     REI_ABLATION, REI_ABLATION["baseline"]):
        assert isinstance(settings, MappingProxyType)
    with pytest.raises(TypeError):
        spec.configs["cpu"]["max_epochs"] = 1
    source = {"cpu": {"lr": 1e-3}, "paper": {"lr": 2e-4}}
    spec = TrainableSpec(VSEEncoder, EncoderMethod, source)
    source["cpu"]["lr"] = 1.0  # a copy is kept: the caller's dict does not change the spec
    assert spec.build().lr == 1e-3


@pytest.mark.parametrize("configs, fixed, match", [
    ({"cpu": {"joint_dims": 8}, "paper": {}}, {}, r"VSEEncoder has no parameter 'joint_dims' \(configuration 'cpu'\)"),
    ({"cpu": {}, "paper": {}}, {"negative": "sum"}, r"no parameter 'negative' \(fixed settings\)"),
    ({"cpu": {"batch_size": 1}, "paper": {}}, {}, "'batch_size' parameter of VSEEncoder"),
    ({"cpu": {}, "paper": {}}, {"negatives": "all"}, "'negatives' parameter of VSEEncoder"),
    ({"cpu": {}}, {}, "missing paper"),
    ({"cpu": {"negatives": "sum"}, "paper": {}}, {"negatives": "hardest"}, "'cpu' sets the fixed setting.*negatives"),
])
def test_a_bad_spec_is_an_error_when_made(configs, fixed, match):
    with pytest.raises(ParameterError, match=match):
        TrainableSpec(VSEEncoder, EncoderMethod, configs, fixed)


def test_variants_change_settings_over_the_system_they_name():
    baseline = TRAINABLE_VARIANTS["rei_baseline"].build("paper", max_epochs=2)
    expected = TRAINABLE["rei"].build("paper", **REI_ABLATION["baseline"], max_epochs=2)
    assert baseline.get_params() == expected.get_params()
    assert (baseline.dropout, baseline.gating, baseline.loss, baseline.max_epochs) == (0.0, False, "hinge", 2)
    assert TRAINABLE_VARIANTS["rei"].build().get_params() == TRAINABLE["rei"].build().get_params()
    with pytest.raises(ParameterError, match="no parameter 'gate'"):
        TrainableVariant("rei", {"gate": False})
    with pytest.raises(ParameterError, match="'dropout' parameter of ReiRelevanceScorer"):
        TrainableVariant("rei", {"dropout": 1.5})
    with pytest.raises(ParameterError, match="unknown trainable system 'rei2'"):
        TrainableVariant("rei2")


def test_registering_and_building_the_systems_leaves_torch_unimported():
    # torch is an optional extra, imported on first training: the registry (and --help) must not need it.
    code = ("import sys; from kcca_desc.methods import SYSTEMS; "
            "from kcca_desc.methods.trainable_systems import TRAINABLE, TRAINABLE_VARIANTS; "
            "[v.build(c) for v in TRAINABLE_VARIANTS.values() for c in ('cpu', 'paper')]; "
            "print(sorted(m for m in sys.modules if m.partition('.')[0] == 'torch'))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_command_line_builds_each_trainable_system():
    args = build_parser().parse_args(["--method", "rei", "--train-config", "paper", "--train-epochs", "3"])
    method = SYSTEMS["rei"].build(vars(args), {"random_state": 4, "image_kernel": "pyramid", "cache": True})
    assert isinstance(method, PairScorerMethod)
    assert method.scorer.max_epochs == 3 and method.scorer.random_state == 4 and method.scorer.batch_size == 32
    assert [name for name in SYSTEMS if name in TRAINABLE] == list(TRAINABLE)
    assert SYSTEMS.help("char_gru") == "trainable char_gru (CharGRUEncoder, --train-config cpu|paper)"


@pytest.mark.parametrize("name", list(TRAINABLE))
def test_trainable_system_fits_on_train_with_dev_and_scores(name):
    pytest.importorskip("torch", reason="the trainable models need the optional torch extra")
    method = TrainableSystem(TRAINABLE[name])(image_encoder=TinyEncoder(), max_epochs=1, checkpoint=False)
    assert isinstance(method, EncoderMethod if name != "rei" else PairScorerMethod)
    model = method.encoder if name != "rei" else method.scorer
    sizes = ("word_dim", "joint_dim", "hidden_dim", "attention_dim")
    model.set_params(**{k: 8 for k in sizes if k in model.get_params()})
    data = _with_dev()
    fit_with_dev(method, data, "hodosh")
    assert "rsum" in model.history_[0]        # dev figures: the dev split was used
    view = data.view("test", "karpathy")
    assert method.score(view.images, view.captions).shape == (view.n_images, view.n_captions)
