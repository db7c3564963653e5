"""Two cheap runs written by the command line (nearest neighbours on the synthetic data set) and their report."""

import pytest

from kcca_desc.cli.fit import main as fit_main
from kcca_desc.cli.report import main as report_main

N_GALLERY = 4


@pytest.fixture(scope="session")
def gallery_size():
    """Queries of each gallery of :func:`report_page`."""
    return N_GALLERY


@pytest.fixture(scope="session")
def run_files(tmp_path_factory):
    """``python -m kcca_desc.fit --out`` of two NN systems (both protocols), as a user would keep them.

    The first also measures the other tasks (forced choice, off-topic detection).
    """
    out = tmp_path_factory.mktemp("runs")
    paths = []
    for text, tasks in (("idf_f1", "retrieval,forced_choice,off_topic"), ("f1", "retrieval")):
        path = out / f"nn_{text}.json"
        assert fit_main(["--method", "nn", "--nn-text", text, "--n-images", "100", "--protocol", "both",
                         "--task", tasks, "--out", str(path), "--quiet"]) == 0
        paths.append(path)
    return paths


@pytest.fixture(scope="session")
def report_page(run_files, tmp_path_factory):
    """The report of both runs (``python -m kcca_desc.report``); returns the page's path."""
    out = tmp_path_factory.mktemp("report")
    assert report_main([*map(str, run_files), "--out", str(out), "--n-gallery", str(N_GALLERY),
                        "--n-resamples", "200", "--n-permutations", "500", "--quiet"]) == 0
    return out / "report.html"
