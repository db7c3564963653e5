"""Data-problem warnings: once per data set and process, and only logged where a step re-reads a data set."""

import logging
import warnings

from test_data_flickr8k import SPURIOUS, mini_captions, write_flickr8k

from kcca_desc.data import load_flickr8k
from kcca_desc.data.problems import data_warnings_to_debug, forget_data_warnings


def _spurious_root(path):
    extra = tuple(f"{SPURIOUS}#{k}\tpeople waiting {k}" for k in range(5))
    return write_flickr8k(path, mini_captions(3), {"train": ["0000_ab.jpg"]}, extra)


def _warnings_of(load):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")  # Python's own once-per-location filter must not hide a repeat
        load()
    return [str(w.message) for w in record]


def test_a_data_set_loaded_twice_warns_once(tmp_path):
    root = _spurious_root(tmp_path / "a")
    assert [SPURIOUS in m for m in _warnings_of(lambda: load_flickr8k(root))] == [True]
    assert _warnings_of(lambda: load_flickr8k(root)) == []
    # Another data set with the same problem is warned about in its turn.
    other = _spurious_root(tmp_path / "b")
    assert len(_warnings_of(lambda: load_flickr8k(other))) == 1


def test_forgotten_warnings_are_shown_again(tmp_path):
    root = _spurious_root(tmp_path / "f8k")
    assert len(_warnings_of(lambda: load_flickr8k(root))) == 1
    forget_data_warnings()
    assert [SPURIOUS in m for m in _warnings_of(lambda: load_flickr8k(root))] == [True]


def test_a_step_that_only_rereads_the_data_logs_at_debug_level(tmp_path, caplog):
    root = _spurious_root(tmp_path / "f8k")
    with caplog.at_level(logging.DEBUG, logger="kcca_desc.data"), data_warnings_to_debug():
        assert _warnings_of(lambda: load_flickr8k(root)) == []
    assert [r.levelno for r in caplog.records if SPURIOUS in r.getMessage()] == [logging.DEBUG]
    # Outside, the data set's first ordinary load still warns.
    assert len(_warnings_of(lambda: load_flickr8k(root))) == 1
