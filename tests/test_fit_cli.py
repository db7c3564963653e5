"""The command line end to end on small synthetic data, and its error messages."""

import json
import time

import pytest

from kcca_desc._core.errors import MissingDataFileError
from kcca_desc.evaluate import load_results
from kcca_desc.cli.fit import main

SMALL = ["--n-images", "100", "--colour-words", "16", "--texture-words", "16", "--sift-words", "16",
         "--levels", "1"]


def test_kcca_run_writes_every_format(tmp_path, capsys, monkeypatch):
    # A cache of its own: the profile below is that of a cold run, every stage computed (the
    # session's cache may hold this data's Grams, and a cached Gram needs no histograms).
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "run" / "results.json"
    start = time.perf_counter()
    code = main(SMALL + ["--text-kernel", "bow5", "--n-components", "4,8", "--regs", "0.1,1",
                         "--protocol", "both", "--out", str(out)])
    elapsed = time.perf_counter() - start
    assert code == 0
    printed = capsys.readouterr().out
    assert "KCCA bow5 (pyramid)" in printed and "karpathy" in printed
    results = load_results(out)
    assert [r.protocol for r in results] == ["hodosh", "karpathy"]
    for suffix in (".md", ".csv", ".tex"):
        assert out.with_suffix(suffix).read_text().strip()
    assert json.loads(out.read_text())
    # The run's stage profile, the same in both results: every stage up to the evaluation of both
    # protocols (the report stage comes after the file), wall and CPU seconds each.
    profile = {stage: entry for stage, entry in results[0].timings_s.items() if "calls" in entry}
    assert all(results[1].timings_s[stage] == entry for stage, entry in profile.items())
    # The training images' histograms are made for their Gram (inside "image kernel"), after the codebooks.
    assert {"data loading", "preprocessing", "codebooks", "image kernel", "image kernel/image features",
            "text kernels", "factorisations", "selection", "evaluation"} <= set(profile)
    assert "image features" not in profile  # k-means was reported as this stage
    assert profile["evaluation"]["calls"] == 2 * 2  # scoring and metrics, once per protocol
    assert all(entry["wall_s"] >= 0 and entry["cpu_s"] >= 0 for entry in profile.values())
    # Nested stages ("evaluation/fusion") are inside their parent: the top-level ones never add up
    # to more than the run.
    assert sum(entry["wall_s"] for stage, entry in profile.items() if "/" not in stage) <= elapsed


def test_nn_run(capsys):
    assert main(SMALL + ["--method", "nn", "--nn-text", "f1"]) == 0
    assert "NN5 F1 (pyramid)" in capsys.readouterr().out


def test_runs_are_named_and_describe_themselves(tmp_path, capsys):
    import kcca_desc

    out = tmp_path / "named.json"
    assert main(SMALL + ["--text-kernel", "bow5", "--n-components", "4", "--regs", "1", "--weight-power", "2",
                         "--out", str(out), "--quiet"]) == 0
    (result,) = load_results(out)
    # Default label: the system's name and each setting that differs from its default, in its notation,
    # the shared ones (SMALL's pyramid levels and codebook sizes) after the system's own.
    assert result.system == "KCCA bow5 (pyramid) n=4 κ=1 ρ² L=1 words=colour:16,texture:16,sift:16"
    environment = result.extras["environment"]
    assert environment["kcca_desc"] == kcca_desc.__version__ and environment["python"].count(".") == 2
    assert {"numpy", "scipy", "scikit-learn"} <= set(environment["libraries"])
    assert environment["machine"]["cpus"] >= 1
    # The estimator's resolved parameters, and the command's own settings (only those of kcca).
    assert result.params["weight_power"] == 2.0 and result.params["text_kernel"] == "bow5"
    command = result.extras["command"]
    assert command["method"] == "kcca" and command["settings"]["weight_power"] == 2.0
    assert "nn_text" not in command["settings"] and "--weight-power" in command["argv"]
    assert len(result.extras["data_source"]["fingerprint"]) == 64
    assert main(SMALL + ["--method", "nn", "--name", "my baseline", "--out", str(out), "--quiet"]) == 0
    assert load_results(out)[0].system == "my baseline"


@pytest.mark.parametrize("argv, label", [
    ([], "KCCA tri_sem (pyramid)"),  # the default run's name is unchanged
    (["--text-kernel", "bow5", "--n-components", "8,16", "--regs", "0.1,1"], "KCCA bow5 (pyramid) n=8,16 κ=0.1,1"),
    # Shared settings were left out: both runs were labelled as the default one.
    (["--text-kernel", "bow5", "--levels", "1", "--colour-words", "64"], "KCCA bow5 (pyramid) L=1 words=colour:64"),
    (["--seed", "1"], "KCCA tri_sem (pyramid) seed=1"),
    (["--pixel-step", "1", "--sift-step", "4", "--weight-power", "2"],
     "KCCA tri_sem (pyramid) ρ² pixel_step=1 sift_step=4"),
    (["--method", "nn", "--levels", "3", "--sift-words", "512"], "NN5 idf F1 (pyramid) L=3 words=sift:512"),
    (["--method", "cca", "--seed", "2"], "cca_efficientnet_lite0+minilm seed=2"),
    # The data, split and protocol are recorded beside the label, not in it.
    (["--n-images", "60", "--protocol", "both", "--split", "dev"], "KCCA tri_sem (pyramid)"),
])
def test_the_default_label_shows_every_setting_that_differs_from_its_default(argv, label):
    from kcca_desc.cli.fit import _default_label, _make_method, build_parser
    from kcca_desc.methods.registry import SYSTEMS

    parser = build_parser()
    args = parser.parse_args(argv)
    assert _default_label(args, parser, SYSTEMS[args.method].resolve(vars(args)), _make_method(args)) == label


def test_version_option(capsys):
    import kcca_desc

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"kcca_desc {kcca_desc.__version__}"


def test_unknown_names_are_rejected_with_the_choices(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--text-kernel", "tri9"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown text kernel 'tri9'" in err and "tri_sem" in err


def test_missing_data_directory_is_a_clear_error(tmp_path, capsys):
    assert main(["--data", "flickr8k", "--data-root", str(tmp_path / "nowhere")]) == MissingDataFileError.exit_code
    assert "nowhere" in capsys.readouterr().err


def test_sampling_options_reach_the_featurizer():
    from kcca_desc.cli.fit import _make_method, build_parser

    method = _make_method(build_parser().parse_args(["--pixel-step", "1", "--sift-step", "4"]))
    assert method.image_kernel_params["featurizer_params"] == {"pixel_step": 1, "sift_step": 4}
    default = _make_method(build_parser().parse_args([]))
    assert "featurizer_params" not in default.image_kernel_params


def test_the_results_file_holds_the_per_query_ranks_and_every_figure_follows_from_them(tmp_path, monkeypatch):
    import numpy as np

    import kcca_desc.cli.fit as fit
    from kcca_desc.evaluate.ranks import retrieval_metrics

    evaluated = []
    save = fit.save_results

    def spy(results, path, **options):
        evaluated.extend(results)
        return save(results, path, **options)

    monkeypatch.setattr(fit, "save_results", spy)
    out = tmp_path / "results.json"
    assert main(SMALL + ["--method", "nn", "--nn-text", "f1", "--protocol", "both", "--out", str(out)]) == 0
    read = load_results(out)
    assert [r.protocol for r in read] == ["hodosh", "karpathy"]
    for ran, result in zip(evaluated, read, strict=True):
        for task in ("annotation", "search"):
            np.testing.assert_array_equal(result.ranks[task], ran.ranks[task])
            assert retrieval_metrics(result.ranks[task]) == getattr(result, task)


def test_the_results_file_records_the_grid_the_fit_used(tmp_path, capsys):
    out = tmp_path / "cut.json"
    # bow5 over 60 images: a low-rank text kernel supports only the smallest n of the grid.
    assert main(["--n-images", "60", "--text-kernel", "bow5", "--n-components", "16,32,64,128", "--regs", "1",
                 "--levels", "1", "--out", str(out), "--quiet"]) == 0
    assert "n_components" in capsys.readouterr().err
    (result,) = load_results(out)
    used = result.params["chosen"]["n_components"]
    assert used and set(used) < {16, 32, 64, 128}
    # What was asked for stays where it was; what was used is beside it.
    assert result.params["n_components"] == result.extras["command"]["settings"]["n_components"] == [16, 32, 64, 128]
    assert result.extras["command"]["resolved"] == {"n_components": used}


def test_a_run_onto_the_results_of_another_keeps_them_as_a_numbered_version(tmp_path, capsys):
    from kcca_desc.cli.compare import main as compare_main

    out = tmp_path / "runs" / "nn.json"
    nn = SMALL + ["--method", "nn", "--out", str(out), "-q"]
    assert main(nn + ["--nn-text", "f1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {out} (+ .md, .csv, .tex)"
    # The same settings on the same data: replaced, in one line that says so.
    assert main(nn + ["--nn-text", "f1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (f"replaced {out} (+ .md, .csv, .tex): the earlier run "
                                                        "there had the same settings and data")
    assert sorted(path.name for path in out.parent.iterdir()) == ["nn.csv", "nn.json", "nn.md", "nn.tex"]
    first = out.read_text()
    # Other settings: the earlier run was silently replaced; it is kept as nn.1.json, tables too.
    assert main(nn) == 0
    lines = capsys.readouterr().out.splitlines()
    version = out.with_name("nn.1.json")
    assert lines[-2:] == [f"kept the earlier run of {out}, of other settings or data, as {version} (+ its tables)",
                          f"wrote {out} (+ .md, .csv, .tex)"]
    assert version.read_text() == first and "NN5 F1" in version.with_suffix(".md").read_text()
    assert load_results(out)[0].system.startswith("NN5 idf F1 (pyramid)")
    # Other data (another seed): the next number; a version removed since is not reused.
    version.with_suffix(".csv").unlink()
    assert main(nn + ["--seed", "1"]) == 0
    assert f"as {out.with_name('nn.2.json')}" in capsys.readouterr().out
    assert sorted(path.name for path in out.parent.iterdir()) == [
        "nn.1.json", "nn.1.md", "nn.1.tex", "nn.2.csv", "nn.2.json", "nn.2.md", "nn.2.tex",
        "nn.csv", "nn.json", "nn.md", "nn.tex"]
    # compare over a glob of the folder takes the versions as runs of their own, each named.
    runs = sorted(map(str, out.parent.glob("*.json")))
    assert compare_main([*runs[:2], "--n-resamples", "20", "--n-permutations", "20"]) == 0
    assert "NN5 F1 (pyramid)" in capsys.readouterr().out


def test_a_file_at_out_that_holds_no_results_is_kept_too(tmp_path, capsys):
    out = tmp_path / "notes.json"
    out.write_text("my notes, not a results file\n")
    assert main(SMALL + ["--method", "nn", "--nn-text", "f1", "--out", str(out), "-q"]) == 0
    assert f"as {tmp_path / 'notes.1.json'}" in capsys.readouterr().out
    assert (tmp_path / "notes.1.json").read_text() == "my notes, not a results file\n"


def test_the_name_shows_the_components_and_rank_the_fit_used_beside_those_asked_for(tmp_path, capsys):
    # The grid cut to what 60 training images support: the name showed n=16,500, the grid asked for.
    out = tmp_path / "cut.json"
    assert main(SMALL + ["--text-kernel", "bow5", "--n-components", "16,500", "--regs", "1", "--out", str(out),
                         "-q"]) == 0
    (result,) = load_results(out)
    assert result.params["chosen"]["n_components"] == [16]
    assert result.system == "KCCA bow5 (pyramid) n=16,500→16 κ=1 L=1 words=colour:16,texture:16,sift:16"
    assert result.system in out.with_suffix(".md").read_text()
    # rank above the training items: landmarks are training items, so the fit used 60; the name said 500.
    assert main(SMALL + ["--method", "kcca_scalable", "--engine", "local", "--text-kernel", "bow5", "--rank", "500",
                         "--n-components", "16", "--regs", "1", "--out", str(out), "-q"]) == 0
    assert "rank=60 is used instead of 500" in capsys.readouterr().err
    (result,) = load_results(out)
    assert result.params["rank"] == 500 and result.params["chosen"]["rank"] == 60
    assert result.extras["command"]["resolved"]["rank"] == 60
    assert result.system.startswith("Landmark KCCA bow5 (pyramid, rank 500→60) n=16 κ=1")


def test_data_seed_varies_the_model_seed_over_fixed_data(tmp_path):
    # --seed drew the synthetic data and seeded the fit: another model seed meant other data.
    runs = {}
    for name, seeds in (("base", []), ("model", ["--seed", "1", "--data-seed", "0"]), ("both", ["--seed", "1"])):
        out = tmp_path / f"{name}.json"
        assert main(SMALL + ["--method", "nn", "--nn-text", "f1", "--out", str(out), "-q", *seeds]) == 0
        (runs[name],) = load_results(out)
    base, model, both = runs["base"], runs["model"], runs["both"]
    fingerprint = {name: run.extras["data_source"]["fingerprint"] for name, run in runs.items()}
    assert fingerprint["model"] == fingerprint["base"] != fingerprint["both"]
    # Both seeds recorded, and the name shows the data seed where it is not --seed's.
    assert (model.params["random_state"], model.extras["data_source"]["seed"]) == (1, 0)
    assert model.extras["command"]["seeds"] == {"seed": 1, "data_seed": 0}
    assert both.extras["command"]["seeds"] == {"seed": 1, "data_seed": 1}
    assert model.system.endswith("seed=1 data_seed=0") and both.system.endswith("seed=1")
