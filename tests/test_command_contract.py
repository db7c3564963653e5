"""Every command under one error contract: ``compare``, ``report``, ``fit`` and the benchmark mains
check their options before any work, say what is wrong in one line naming the option, and exit
with a documented code; a usage error is one line and a pointer to ``--help``."""

from __future__ import annotations

import contextlib
import errno
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from kcca_bench import add_output_arguments, benchmark_parser, run_main, write_results
from kcca_bench.faults import faulty_disk

import kcca_desc.cli.compare as compare_module
import kcca_desc.report.compare as report_compare
from kcca_desc._core.errors import (
    DataError,
    MissingDataFileError,
    ParameterError,
    UnreachableServiceError,
    UnwritableOutputError,
)
from kcca_desc.cli.compare import main as compare_main
from kcca_desc.cli.fit import main as fit_main
from kcca_desc.cli.options import positive_int
from kcca_desc.cli.report import main as report_main
from kcca_desc.evaluate import Result, retrieval_metrics
from kcca_desc.image.features import ImageFeaturizer


def make_run(path, system, annotation=(1, 5, 3, 9), search=(2, 1, 4, 4), **extras):
    ranks = {"annotation": np.asarray(annotation), "search": np.asarray(search)}
    result = Result(system=system, dataset="toy", protocol="hodosh", split="test", ranks=ranks,
                    annotation=retrieval_metrics(ranks["annotation"]), search=retrieval_metrics(ranks["search"]))
    result.extras.update(extras)
    result.save(path, include_ranks=True)
    return str(path)


@pytest.fixture(autouse=True)
def fallback_in_tmp_path(tmp_path, monkeypatch):
    """The temporary folders that keep unwritable outputs go under the test's own folder."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))


@pytest.fixture
def runs(tmp_path):
    return [make_run(tmp_path / "a.json", "A"), make_run(tmp_path / "b.json", "B", (2, 1, 3, 7), (1, 1, 8, 2))]


@pytest.fixture
def no_loading(monkeypatch):
    """Fail the test if a results file is read: the options must be checked first."""
    def refuse(*args, **kwargs):
        raise AssertionError("results files were read before the options were checked")

    monkeypatch.setattr(report_compare, "load_runs", refuse)
    monkeypatch.setattr("kcca_desc.cli.runs.load_runs", refuse)


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err.strip()


# ------------------------------------------------------------------------ usage errors
@pytest.mark.parametrize("main, argv, named", [
    (fit_main, ["--levels", "x"], "argument --levels: invalid int value: 'x'"),
    (fit_main, ["--nope"], "unrecognized arguments: --nope"),
    (compare_main, ["a.json", "--n-resamples", "1.5"], "argument --n-resamples: invalid int value: '1.5'"),
    (compare_main, [], "the following arguments are required: results"),
    (report_main, ["a.json", "--protocol", "x"], "argument --protocol: invalid choice: 'x'"),
])
def test_a_usage_error_is_one_line_and_a_pointer_to_help(capsys, main, argv, named):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == ParameterError.exit_code == 2
    line = one_error_line(capsys)
    assert named in line and line.endswith("--help)")


def test_a_benchmark_counts_its_options_and_names_the_bad_one(capsys):
    parser = benchmark_parser("benchmarks/kcca.py", "a benchmark")
    parser.add_argument("--repeats", type=positive_int, default=3)
    assert parser.parse_args(["--repeats", "2"]).repeats == 2
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["--repeats", "0"])
    assert exit_.value.code == 2
    assert one_error_line(capsys) == ("error: argument --repeats: must be an integer >= 1, got 0 "
                                      "(see python benchmarks/kcca.py --help)")


def test_a_benchmark_main_exits_with_the_documented_code(capsys, monkeypatch):
    def broken(argv):
        raise DataError("tiny.tsv, line 3: expected 3 fields")

    monkeypatch.setattr("sys.argv", ["bench.py"])
    with pytest.raises(SystemExit) as exit_:
        run_main(broken)
    assert exit_.value.code == DataError.exit_code == 65
    assert one_error_line(capsys) == "error: tiny.tsv, line 3: expected 3 fields"
    with pytest.raises(SystemExit) as exit_:
        run_main(lambda argv: {"a record": 1})
    assert exit_.value.code == 0


# ------------------------------------------------------------------- compare and report
@pytest.mark.parametrize("main", [compare_main, report_main])
@pytest.mark.parametrize("option, value", [("--n-resamples", "0"), ("--n-permutations", "0"), ("--seed", "-1")])
def test_a_bad_statistics_option_is_refused_before_the_files_are_read(capsys, no_loading, tmp_path, main, option,
                                                                      value):
    assert main(["a.json", option, value, "--out", str(tmp_path / "out")]) == 2
    # The option is the subject: no internal class of the command's own options.
    line = one_error_line(capsys)
    assert line.startswith(f"error: {option} must be an int in the range") and "CommandLine" not in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["2", "0", "1", "nan"])
def test_compare_refuses_a_confidence_outside_the_open_unit_interval(capsys, no_loading, value):
    assert compare_main(["a.json", "--confidence", value]) == 2
    assert one_error_line(capsys).startswith("error: --confidence must be a float in the range (0.0, 1.0). Got ")


@pytest.mark.parametrize("option", ["--n-gallery", "--n-worst"])
def test_report_refuses_a_negative_count(capsys, no_loading, option):
    assert report_main(["a.json", option, "-1"]) == 2
    assert one_error_line(capsys) == f"error: {option} must be an int in the range [0, inf). Got -1 instead."


@pytest.mark.parametrize("main", [compare_main, report_main])
def test_a_results_file_that_is_not_utf8_is_one_line_naming_it(capsys, tmp_path, runs, main):
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"système": 1}'.encode("latin-1"))
    assert main([runs[0], str(latin), "--out", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: {latin}: not a JSON results file (") and "utf-8" in line


def test_report_refuses_a_missing_data_root_before_any_work(capsys, tmp_path, runs):
    code = report_main([*runs, "--data-root", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")])
    assert code == MissingDataFileError.exit_code == 66
    assert one_error_line(capsys) == f"error: --data-root {tmp_path / 'nowhere'}: no such file or directory"
    assert not (tmp_path / "out").exists()


def test_report_refuses_a_data_root_the_data_set_cannot_take(capsys, tmp_path, runs):
    # An existing folder as the root of the synthetic data set was a warning, and a report without gallery.
    files = [make_run(tmp_path / "s.json", "S", data_source={"name": "synthetic", "root": None, "seed": 0})]
    assert report_main([*files, "--data-root", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert one_error_line(capsys) == ("error: --data-root: not an option of --data synthetic, which takes none of "
                                      "--image-root: drop it")
    assert not (tmp_path / "out").exists()


def test_report_refuses_an_image_root_without_the_images_as_fit_does(capsys, tmp_path):
    from bad_inputs import write_tsv_dataset

    tsv = write_tsv_dataset(tmp_path / "ds", n_images=5, splits=(0.0, 0.0, 1.0))
    (tmp_path / "elsewhere").mkdir()
    files = [make_run(tmp_path / "t.json", "T", data_source={"name": "tsv", "root": str(tsv), "seed": 0})]
    argv = [*files, "--data", "tsv", "--data-root", str(tsv), "--out", str(tmp_path / "out")]
    # One warning per image before, and a report without gallery (exit 0).
    assert report_main([*argv, "--image-root", str(tmp_path / "elsewhere")]) == DataError.exit_code
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "none of its 5 images is under" in err and "warning" not in err
    assert report_main([*argv, "--image-root", str(tmp_path / "nowhere")]) == MissingDataFileError.exit_code
    assert one_error_line(capsys) == f"error: --image-root {tmp_path / 'nowhere'}: no such file or directory"
    assert report_main([*argv[:1], "--data", "flickr8k", "--image-root", str(tmp_path / "elsewhere"),
                        "--out", str(tmp_path / "out")]) == 2
    assert one_error_line(capsys) == ("error: --image-root: not an option of --data flickr8k, which takes none of "
                                      "--image-root: drop it")
    assert not (tmp_path / "out").exists()


def test_report_without_the_recorded_data_set_warns_and_keeps_the_tables(capsys, tmp_path):
    """The data set a results file records is gone: the report is still useful, and says what it lacks."""
    source = {"name": "tsv", "root": str(tmp_path / "moved.tsv"), "seed": 0, "n_images": None, "image_root": None}
    files = [make_run(tmp_path / "a.json", "A", data_source=source),
             make_run(tmp_path / "b.json", "B", (2, 1, 3, 7), (1, 1, 8, 2), data_source=source)]
    assert report_main([*files, "--out", str(tmp_path / "out"), "--n-resamples", "50", "--n-permutations", "50",
                        "-q"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning")]
    assert len(warnings) == 1 and "the report has no retrieval gallery" in warnings[0] and "moved.tsv" in warnings[0]
    assert (tmp_path / "out" / "report.html").is_file()


@pytest.mark.parametrize("main, directory", [(compare_main, False), (report_main, True)])
def test_an_out_on_a_read_only_file_system_fails_before_any_work(capsys, no_loading, tmp_path, main, directory):
    out = tmp_path / "readonly" / ("report" if directory else "table")
    with faulty_disk(tmp_path / "readonly", errno.EROFS):
        code = main(["a.json", "--out", str(out)])
    assert code == UnwritableOutputError.exit_code == 73
    assert one_error_line(capsys) == f"error: cannot write {out}: Read-only file system"


@pytest.mark.parametrize("main, directory", [(compare_main, False), (report_main, True)])
def test_an_out_of_the_other_kind_names_the_kind_to_give(capsys, no_loading, tmp_path, main, directory):
    # report --out onto a results file read "File exists"; compare --out onto a folder suggested a bare name.
    out = tmp_path / "runs"
    if directory:
        out.write_text("{}")
    else:
        out.mkdir()
    assert main(["a.json", "--out", str(out)]) == UnwritableOutputError.exit_code
    assert one_error_line(capsys) == (
        f"error: cannot write {out}: it is a file, not a directory; name a directory for the report "
        f"(e.g. {tmp_path / 'report'})" if directory else
        f"error: cannot write {out}: it is a directory; name a file in it (e.g. {out / 'results.json'})")


def test_compare_on_a_disk_that_fills_up_keeps_the_table_elsewhere_and_leaves_no_partial_file(capsys, tmp_path, runs,
                                                                                              monkeypatch):
    full = tmp_path / "full"
    full.mkdir()
    real = compare_module.compare_runs
    with contextlib.ExitStack() as disk:
        def compare_then_fill_the_disk(*args, **kwargs):
            comparison = real(*args, **kwargs)
            disk.enter_context(faulty_disk(full, errno.ENOSPC))
            return comparison

        monkeypatch.setattr(compare_module, "compare_runs", compare_then_fill_the_disk)
        code = compare_main([*runs, "--n-resamples", "50", "--n-permutations", "50", "--out", str(full / "t")])
    assert code == 73
    line = one_error_line(capsys)
    assert line.startswith(f"error: cannot write {full / 't'}: No space left on device; the outputs were written to ")
    kept = line.split("written to ")[1].split(" instead")[0]
    assert sorted(p.name for p in Path(kept).parent.iterdir()) == ["t.csv", "t.json", "t.md", "t.tex"]
    assert list(full.iterdir()) == []


# ------------------------------------------------------------------------------ fit
@pytest.mark.parametrize("failure, message", [(errno.EROFS, "Read-only file system"),
                                              (errno.ENOSPC, "No space left on device")])
def test_fit_refuses_an_out_that_cannot_be_written_before_any_work(capsys, tmp_path, monkeypatch, failure, message):
    monkeypatch.setattr(ImageFeaturizer, "fit", lambda *a, **k: pytest.fail("features computed before the check"))
    out = tmp_path / "disk" / "results.json"
    out.parent.mkdir()
    with faulty_disk(out.parent, failure):
        code = fit_main(["--n-images", "40", "--out", str(out), "-q"])
    assert code == 73
    assert one_error_line(capsys) == f"error: cannot write {out}: {message}"


def test_an_unreachable_scheduler_is_a_clear_error_within_seconds(capsys, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr("kcca_desc.scale.engine.CONNECT_TIMEOUT_S", 1)
    start = time.perf_counter()
    code = fit_main(["--method", "kcca_scalable", "--scheduler", "tcp://127.0.0.1:9", "--n-images", "40", "-q"])
    assert code == UnreachableServiceError.exit_code == 69
    assert time.perf_counter() - start < 15
    line = one_error_line(capsys)
    assert line.startswith("error: the Dask scheduler at 'tcp://127.0.0.1:9' does not answer")
    assert "--engine local" in line


def test_a_scheduler_with_the_local_engine_is_refused(capsys):
    code = fit_main(["--method", "kcca_scalable", "--engine", "local", "--scheduler", "tcp://127.0.0.1:9",
                     "--n-images", "40", "-q"])
    assert code == 2
    assert one_error_line(capsys).startswith("error: --scheduler must be unset with --engine local")


# ------------------------------------------------------------------------ benchmarks
def test_a_benchmark_record_that_cannot_be_written_is_kept_elsewhere(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    with faulty_disk(full, errno.ENOSPC), pytest.raises(UnwritableOutputError) as error:
        write_results(full / "bench.json", {"figure": 1.5})
    kept = str(error.value).split("written to ")[1].split(" instead")[0]
    assert json.loads(open(kept).read()) == {"figure": 1.5}
    assert list(full.iterdir()) == []
    assert error.value.exit_code == 73


def test_a_benchmark_refuses_an_out_it_cannot_write_before_its_work(capsys, tmp_path, monkeypatch):
    def main(argv):
        add_output_arguments(benchmark_parser("bench.py", "a benchmark"), "tiny").parse_args(argv)
        pytest.fail("the benchmark started")

    disk = tmp_path / "readonly"
    monkeypatch.setattr("sys.argv", ["bench.py", "--out", str(disk / "record.json")])
    with faulty_disk(disk, errno.EROFS), pytest.raises(SystemExit) as exit_:
        run_main(main)
    assert exit_.value.code == UnwritableOutputError.exit_code
    assert one_error_line(capsys) == f"error: cannot write {disk / 'record.json'}: Read-only file system"


@pytest.mark.parametrize("command, option", [(compare_main, "--out"), (report_main, "--out"), (fit_main, "--report")])
def test_an_empty_output_is_refused(capsys, tmp_path, monkeypatch, runs, command, option):
    # compare and fit wrote nothing without a word; report wrote into the working directory.
    monkeypatch.chdir(tmp_path)
    argv = ["--n-images", "40"] if command is fit_main else runs
    with pytest.raises(SystemExit) as exit_:
        command([*argv, option, ""])
    assert exit_.value.code == ParameterError.exit_code
    assert one_error_line(capsys).startswith(f"error: argument {option}: must name a file or folder, got ''")
