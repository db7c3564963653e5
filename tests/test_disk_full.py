"""A full (``ENOSPC``) or read-only (``EROFS``) disk, through a fault-injecting file layer
(:mod:`kcca_bench.faults`): the cache, the checkpoints and the chunk stores degrade to no cache
with one warning and the run goes on with the same results; an output that cannot be written is
exit 73, with no partial file and the outputs kept in a folder the error names."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from kcca_bench.faults import faulty_disk

import kcca_desc._core.cache as cache
import kcca_desc.cli.fit as fit_module
from kcca_desc._core.cache import CacheWarning, NpzCache, PickleCache

FAILURES = pytest.mark.parametrize("failure", [errno.ENOSPC, errno.EROFS], ids=["ENOSPC", "EROFS"])
#: The cheapest run of the command line: nearest neighbours over small codebooks.
SMALL = ["--method", "nn", "--colour-words", "16", "--texture-words", "16", "--sift-words", "16", "--levels", "1",
         "--pixel-step", "4", "-q"]


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("KCCA_DESC_CACHE", str(root))
    # One warning per run and cache: each test is a run.
    monkeypatch.setattr(cache, "_unwritable_reported", set())
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return root


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@FAILURES
def test_the_fault_layer_fails_as_the_disk_would_and_only_under_its_folder(tmp_path, failure):
    disk, elsewhere = tmp_path / "disk", tmp_path / "elsewhere.txt"
    disk.mkdir()
    (disk / "old.txt").write_text("kept")
    with faulty_disk(disk, failure):
        with pytest.raises(OSError) as raised:
            (disk / "new.txt").write_text("data")
        assert raised.value.errno == failure
        with pytest.raises(OSError):
            fd, _ = tempfile.mkstemp(dir=disk)
            with os.fdopen(fd, "wb") as f:
                f.write(b"data")
        assert (disk / "old.txt").read_text() == "kept"
        elsewhere.write_text("fine")
    assert elsewhere.read_text() == "fine"
    (disk / "after.txt").write_text("fine again")


@FAILURES
@pytest.mark.parametrize("kind", [NpzCache, PickleCache])
def test_a_cache_that_cannot_be_written_warns_once_and_computes(cache_root, failure, kind):
    store = kind("things")
    value = {"x": np.arange(5.0)}
    cache_root.mkdir()
    with faulty_disk(cache_root, failure), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(3):
            got = store.get_or_compute(lambda: value, kind="test", n=n)
            np.testing.assert_array_equal(got["x"], value["x"])
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == 1 and "cannot write the cache entry" in said[0] and os.strerror(failure) in said[0]
    assert [p for p in files_under(cache_root) if ".locks" not in p.parts] == []


def test_a_checkpoint_on_a_full_disk_warns_and_training_goes_on(cache_root):
    pytest.importorskip("torch")
    from kcca_desc.neural.checkpoints import read_checkpoint, write_checkpoint

    path = cache_root / "checkpoints" / "run" / "state.pt"
    path.parent.mkdir(parents=True)
    with faulty_disk(cache_root, errno.ENOSPC), pytest.warns(CacheWarning, match="No space left on device"):
        write_checkpoint(path, {"format": 2})
    assert files_under(cache_root) == [] and read_checkpoint(path) is None
    write_checkpoint(path, {"format": 2})
    assert read_checkpoint(path) == {"format": 2}


@FAILURES
def test_a_chunk_store_that_cannot_be_written_gives_the_same_arrays_in_memory(cache_root, failure):
    pytest.importorskip("zarr")
    from kcca_desc.scale.chunked import map_chunks
    from kcca_desc.scale.engine import LocalEngine
    from kcca_desc.scale.store import ChunkStore

    payloads = [np.arange(i * 4, min(i * 4 + 4, 10), dtype=float) for i in range(3)]
    compute = lambda rows, scale: {"y": np.outer(rows, [1.0, scale])}  # noqa: E731
    expected = map_chunks(LocalEngine(), compute, payloads, 10, 4, scale=2.0)
    root = cache_root / "scale"
    root.mkdir(parents=True)
    with faulty_disk(root, failure), pytest.warns(CacheWarning, match=os.strerror(failure)):
        got = map_chunks(LocalEngine(), compute, payloads, 10, 4, store=ChunkStore("k", root), scale=2.0)
    np.testing.assert_array_equal(np.asarray(got["y"]), expected["y"])


def test_fit_with_a_full_cache_and_an_out_disk_that_fills_up_keeps_its_results(cache_root, tmp_path, capsys,
                                                                               monkeypatch):
    """The cache is full from the start (one warning, no cache), and the --out disk fills up while the
    run evaluates: exit 73, nothing half-written at --out, every output in the folder the error names."""
    out_disk = tmp_path / "out"
    out_disk.mkdir()
    cache_root.mkdir()
    real_table = fit_module.format_table
    with contextlib.ExitStack() as disks:
        disks.enter_context(faulty_disk(cache_root, errno.ENOSPC))

        def table_then_fill_the_disk(results, **options):
            disks.enter_context(faulty_disk(out_disk, errno.ENOSPC))
            return real_table(results, **options)

        monkeypatch.setattr(fit_module, "format_table", table_then_fill_the_disk)
        code = fit_module.main(["--n-images", "40", *SMALL, "--out", str(out_disk / "results.json")])
    err = capsys.readouterr().err
    assert code == 73 and "Traceback" not in err, err
    warned = [line for line in err.splitlines() if line.startswith("warning")]
    assert len(warned) == 1 and f"the cache {cache_root} cannot be written (No space left on device)" in warned[0]
    error = [line for line in err.splitlines() if line.startswith("error:")]
    assert error[0].startswith(f"error: cannot write {out_disk / 'results.json'}: No space left on device; "
                               "the outputs were written to ")
    kept = Path(error[0].split("written to ")[1].split(" instead")[0])
    assert sorted(p.name for p in kept.parent.iterdir()) == ["results.csv", "results.json", "results.md",
                                                             "results.tex"]
    assert json.loads(kept.read_text())[0]["system"]
    assert list(out_disk.iterdir()) == []
    assert files_under(cache_root) == []

