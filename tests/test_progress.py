"""Progress: bars on a terminal, one line per stage otherwise, nothing when quiet."""

import io
import logging

import pytest

from kcca_desc._core import progress as progress_module
from kcca_desc._core.progress import is_quiet, progress, progress_bar, set_quiet, stage
from kcca_desc.data.problems import ProblemLog
from kcca_desc.methods.trainable_systems import TRAINING_SETTINGS


@pytest.fixture
def loud():
    before = is_quiet()
    set_quiet(False)
    yield
    set_quiet(before)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_lines_when_not_a_terminal(loud, capsys):
    assert list(progress(range(5), desc="Gram rows", unit="row")) == [0, 1, 2, 3, 4]
    with stage("factorisation"):
        pass
    err = capsys.readouterr().err
    assert "Gram rows: started (5 rows)" in err
    assert "Gram rows: done, 5 rows in" in err and "row/s" in err
    assert "factorisation ..." in err and "factorisation: done in" in err
    assert "\r" not in err  # no bar redrawing in a log file


def test_intermediate_lines_of_long_loops(loud, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "_LOG_INTERVAL", 0.0)
    bar = progress_bar(3, desc="pivots", unit="pivot")
    for _ in range(3):
        bar.update()
    bar.close()
    bar.close()  # closing twice logs once
    err = capsys.readouterr().err
    assert "pivots: 2/3 pivots, about" in err and err.count("pivots: done") == 1


def test_quiet_shows_nothing_and_returns_the_iterable(loud, capsys):
    set_quiet(True)
    items = [1, 2]
    assert progress(items, desc="x") is items
    with stage("y"):
        pass
    progress_bar(2, "z").update()
    assert capsys.readouterr().err == ""


def test_a_tqdm_bar_on_a_terminal(loud, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert sum(progress(range(4), desc="images", unit="image")) == 6
    drawn = terminal.getvalue()
    # A bar redrawn in place (carriage returns) with the count and rate, cleared when done (inner loops).
    assert drawn.startswith("\rimages:") and "0/4 [" in drawn and "image/s]" in drawn


def test_quiet_switch_of_the_command_line(capsys, tmp_path):
    from kcca_desc.cli.fit import main

    before = is_quiet()
    try:
        assert main(["--method", "nn", "--n-images", "60", "--quiet"]) == 0
        assert is_quiet()
        captured = capsys.readouterr()
        assert "started" not in captured.err and "image features" not in captured.err
        assert "R@1" in captured.out
    finally:
        set_quiet(before)


def test_progress_lines_go_through_their_own_logger(loud):
    handler_types = [type(h).__name__ for h in logging.getLogger("kcca_desc.progress").handlers]
    assert "_StderrHandler" in handler_types
    assert not logging.getLogger("kcca_desc.progress").propagate


@pytest.mark.parametrize(("count", "unit", "of", "text"), [
    (1, "epoch", None, "1 epoch"), (3, "epoch", None, "3 epochs"), (2, "batch", None, "2 batches"),
    (0, "image", None, "0 images"), (1, "epoch", 5, "1/5 epochs"), (1, "pass", 1, "1/1 pass")])
def test_counts_read_as_english(count, unit, of, text):
    assert progress_module.counted(count, unit, of) == text


def test_messages_that_count_one_thing_use_the_singular():
    log = ProblemLog()
    log.add("data.tsv", 3, "empty caption", item="a.jpg")
    log.add("data.tsv", 4, "empty caption", item="a.jpg")
    assert "2 problems, spoiling 1 image;" in str(log.error("data.tsv"))
    epochs = next(s for s in TRAINING_SETTINGS if s.name == "train_epochs")
    assert (epochs.label(1), epochs.label(3)) == ("1 epoch", "3 epochs")
