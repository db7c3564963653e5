"""benchmarks/merge_results.py: joining parallel neural.py runs, named by their settings; and
neural.py's --train-params parsing."""

import argparse
import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from kcca_desc.methods.trainable_systems import TRAINABLE, TRAINABLE_VARIANTS

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


merge_results = _load("merge_results")


def _run_file(path, system, config, **settings):

    params = {**TRAINABLE_VARIANTS[system].build(config).get_params(), "device": "cuda", "max_train_seconds": 60.0,
              **settings, "config": config}
    params.pop("image_encoder")
    records = [{"system": system, "protocol": p, "split": "test", "params": params,
                "queries": {"top": {"annotation": [[3, 1, 2]], "search": [[0, 2, 1]]}}} for p in ("hodosh", "karpathy")]
    records.append({"system": system, "task": "off_topic", "split": "test", "params": {"seed": 0}})
    path.write_text(json.dumps(records))
    return path


def test_systems_are_named_by_configuration_and_changed_settings_only(tmp_path):
    files = [_run_file(tmp_path / "a.json", "vse", "paper"),
             _run_file(tmp_path / "b.json", "vse", "cpu", dropout=0.5),
             _run_file(tmp_path / "c.json", "rei_gating", "cpu"),
             _run_file(tmp_path / "d.json", "vse", "cpu")]
    records = merge_results.merge(files, top_k=2)
    names = [(r["system"], r.get("protocol", r.get("task"))) for r in records]
    assert names == [(s, k) for s in ("vse_paper", "vse_dropout0.5", "rei_gating", "vse")
                     for k in ("hodosh", "karpathy", "off_topic")]
    # Where and how long it ran (device, time budget) does not rename a system.
    assert all(r["queries"]["top"]["annotation"] == [[3, 1]] for r in records if "queries" in r)


@pytest.fixture
def char_gru_cpu():
    """Set char_gru's cpu configuration's settings for one test: ``char_gru_cpu(length_window=None)``."""
    registered = TRAINABLE["char_gru"]

    def change(**settings):
        configs = {**registered.configs, "cpu": {**registered.configs["cpu"], **settings}}
        TRAINABLE.register("char_gru", dataclasses.replace(registered, configs=configs), replace=True)

    yield change
    TRAINABLE.register("char_gru", registered, replace=True)


def test_a_record_from_before_a_parameter_existed_is_named_by_its_old_behaviour(tmp_path, char_gru_cpu):
    def old_record(path):  # written before length_window existed: random batches
        path = _run_file(path, "char_gru", "cpu")
        records = json.loads(path.read_text())
        for record in records:
            record["params"].pop("length_window", None)
        path.write_text(json.dumps(records))
        return path

    char_gru_cpu(length_window=None)
    assert merge_results.merge([old_record(tmp_path / "a.json")])[0]["system"] == "char_gru"
    # Once the configuration sorts batches by length, the old record is named for running without it.
    char_gru_cpu(length_window=50)
    files = [old_record(tmp_path / "b.json"), _run_file(tmp_path / "c.json", "char_gru", "cpu")]
    assert [r["system"] for r in merge_results.merge(files) if "protocol" in r] == \
        ["char_gru_length_windowNone"] * 2 + ["char_gru"] * 2


def test_two_runs_of_the_same_system_and_settings_are_refused(tmp_path):
    files = [_run_file(tmp_path / "a.json", "vse", "cpu"), _run_file(tmp_path / "b.json", "vse", "cpu")]
    with pytest.raises(ValueError, match="b.json.*also in.*a.json"):
        merge_results.merge(files)


def test_train_params_are_names_and_python_literals():
    neural = _load("neural")
    parser = argparse.ArgumentParser()
    assert neural.parse_setting("dropout=0.2", parser) == ("dropout", 0.2)
    assert neural.parse_setting("negatives='hardest'", parser) == ("negatives", "hardest")
    for bad in ("dropout", "2x=1", "dropout=fast"):
        with pytest.raises(SystemExit):
            neural.parse_setting(bad, parser)


def test_the_raw_feature_baseline_can_be_rerun_alone(tmp_path):
    neural = _load("neural")
    out = tmp_path / "neural.json"
    kept = {"system": "vse", "dataset": "synthetic", "split": "test", "task": "vsts", "metrics": {}}
    out.write_text(json.dumps([kept, {**kept, "system": neural.named_for_features(
        neural.RAW_FEATURES, argparse.Namespace(image_features="efficientnet"))}]))
    # The quick data set has no vSTS pairs: the rerun baseline's old record is dropped, the rest kept.
    neural.main(["--quick", "--merge", "--systems", neural.RAW_FEATURES, "--out", str(out)])
    assert json.loads(out.read_text()) == [kept]
    with pytest.raises(SystemExit):
        neural.main(["--quick", "--systems", "minilm", "--out", str(out)])


def test_a_merged_record_is_re_run_with_the_settings_its_name_lists(tmp_path, char_gru_cpu, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    rerun = _load("rerun_records")
    neural = _load("neural")
    files = [_run_file(tmp_path / "a.json", "vse", "paper", dropout=0.5, word_vectors=None),
             _run_file(tmp_path / "b.json", "rei_gating", "cpu", max_epochs=20),
             _run_file(tmp_path / "c.json", "vse_hardest", "cpu")]
    for record in (r for r in merge_results.merge(files) if r.get("protocol") == "karpathy"):
        args = rerun.rerun_arguments(record["system"], record["params"])
        config, variant = args[1], args[3]
        settings = dict(neural.parse_setting(text, argparse.ArgumentParser()) for text in args[5:])
        rebuilt = {**TRAINABLE_VARIANTS[variant].build(config, **settings).get_params(), "config": config}
        assert merge_results.settings_name(variant, rebuilt) == record["system"]
    assert rerun.rerun_arguments("vse_hardest", {**TRAINABLE_VARIANTS["vse_hardest"].build("cpu").get_params(),
                                                 "config": "cpu"}) == ["--train-config", "cpu", "--systems", "vse_hardest"]

    # A record the configuration has moved away from would be merged under another name: refused.
    char_gru_cpu(length_window=None)
    old = {**TRAINABLE_VARIANTS["char_gru"].build("cpu").get_params(), "config": "cpu"}
    char_gru_cpu(length_window=50)
    with pytest.raises(ValueError, match="char_gru: its settings now name it 'char_gru_length_windowNone' .*"
                                         "--systems char_gru --train-params length_window=None trains it again"):
        rerun.rerun_arguments("char_gru", old)
    with pytest.raises(ValueError, match="not a run of a trainable system"):
        rerun.trained_variant("clip_vit")


def test_a_bridge_record_is_re_selected_over_its_recorded_grid(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    rerun = _load("rerun_records")
    neural = _load("neural")
    grid = [{"params": {"reg": reg, "weight_power": power, "gamma_scale": scale}}
            for scale in (0.5, 2.0) for reg in (1.0, 30.0) for power in (1.0,)]
    params = {"reg": 30.0, "n_components": 64, "rank": 512, "selected_on_dev": ["karpathy"], "dev_search": grid}
    records = [{"system": "kcca_minilm_efficientnet", "protocol": p, "params": params} for p in ("hodosh", "karpathy")]
    arguments = rerun.record_arguments("kcca_minilm_efficientnet", params)
    assert arguments[:4] == ["--image-features", "efficientnet", "--systems", "kcca_minilm_vit"]
    # The printed arguments select over the recorded grid: nothing for --merge to warn about ...
    assert neural.selection_changes(records, neural.parse_arguments(arguments)) == []
    # ... while neural.py's own grid differs from the record's, and says how.
    (line,) = neural.selection_changes(records, neural.parse_arguments(arguments[:4]))
    assert line.startswith("kcca_minilm_efficientnet: its record was selected with --kcca-gamma-scales 0.5 2 "
                           "--kcca-regs 1 30 --kcca-weight-powers 1 --n-components 64 --kcca-rank 512 "
                           "--select-on karpathy, this run with --kcca-gamma-scales 0.03125")
    # A re-selection of another bridge, or over other image features, is not this record's.
    assert neural.selection_changes(records, neural.parse_arguments(["--systems", "cca_minilm_vit"])) == []
    assert neural.selection_changes(records, neural.parse_arguments(
        ["--systems", "kcca_minilm_vit", "--image-features", "vit"])) == []
    with pytest.raises(ValueError, match="not a bridge"):
        rerun.record_arguments("kcca_minilm_clip", params)
