"""Cache safety: checksummed entries, damaged entries recomputed, unwritable caches, killed
writers, locks across processes, and feature stores written in chunks that concurrent runs merge."""

from __future__ import annotations

import errno
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import numpy as np
import pytest

from kcca_desc._core import cache as cache_module
from kcca_bench.cli import figures, run_cli
from kcca_desc._core.cache import (
    CacheWarning,
    ChunkCache,
    NpzCache,
    PickleCache,
    cache_key,
    discard_damaged,
    entry_lock,
    remove_temporaries,
    written_since,
)
from kcca_desc.data.images import ArrayImages
from kcca_desc.image.features import ImageFeaturizer

SMALL = dict(n_words={"colour": 6, "texture": 5, "sift": 4}, levels=1, pixel_step=3, sift_step=8,
             max_samples=40, max_iter=20, n_jobs=2, progress=False)


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    """A fresh cache per test (warnings about an unwritable cache are given once per cache)."""
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _scenes(n, seed=0, size=32):
    rng = np.random.default_rng(seed)
    images = [np.kron(rng.integers(0, 256, (4, 4, 3), dtype=np.uint8), np.ones((size // 4, size // 4, 1), np.uint8))
              for _ in range(n)]
    return ArrayImages(images, [f"scene{seed}_{i}.png" for i in range(n)])


class CountingImages(ArrayImages):
    """ArrayImages that count loads and can stop (as an interrupt would) at the ``stop_at``-th load."""

    def __init__(self, source: ArrayImages, stop_at: int | None = None):
        super().__init__(source.arrays, source.ids)
        self.loads, self.stop_at = 0, stop_at

    def load(self, index):
        self.loads += 1
        if self.stop_at is not None and self.loads >= self.stop_at:
            raise KeyboardInterrupt
        return super().load(index)


# ----------------------------------------------------------------------------- checksums
DAMAGES = {
    "truncated": lambda data: data[: len(data) // 2],
    # Seeded: random bytes once made pickle's multi-line message, now every run sees the same ones.
    "garbage": lambda data: np.random.default_rng(0).bytes(len(data)),
    "zero bytes": lambda data: b"",
    # One flipped byte deep in an array: parsing alone might not notice, the checksum does.
    "one byte flipped": lambda data: data[:-200] + bytes([data[-200] ^ 0xFF]) + data[-199:],
}


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("kind", [NpzCache, PickleCache])
def test_damaged_entry_is_detected_discarded_and_recomputed(cache_root, kind, damage):
    cache = kind("safety")
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(400.0)}

    first = cache.get_or_compute(compute, n=1)
    path = cache.path(cache_key(n=1))
    assert path.read_bytes().startswith(b"KCCA-DESC-SHA256")
    path.write_bytes(DAMAGES[damage](path.read_bytes()))
    with pytest.warns(CacheWarning, match="damaged.*recomputed"):
        again = cache.get_or_compute(compute, n=1)
    assert len(calls) == 2
    np.testing.assert_array_equal(again["x"], first["x"])
    assert cache.load(cache_key(n=1)) is not None  # rewritten whole


def test_entries_without_checksum_are_still_read(cache_root):
    # Entries written before checksums existed: the user's cache is not thrown away.
    cache = NpzCache("legacy")
    path = cache.path("old")
    path.parent.mkdir(parents=True)
    with open(path, "wb") as f:
        np.savez(f, x=np.arange(3))
    np.testing.assert_array_equal(cache.load("old")["x"], np.arange(3))


# --------------------------------------------------------------------- unwritable caches
@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_unwritable_cache_warns_once_and_the_run_goes_on(cache_root, monkeypatch, error):
    real_savez = np.savez

    def failing_savez(f, **arrays):
        real_savez(f, **arrays)  # half the work done, then the disk is full
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(np, "savez", failing_savez)
    cache = NpzCache("full")
    with pytest.warns(CacheWarning, match="cannot write the cache entry") as record:
        values = [cache.get_or_compute(lambda: {"x": np.ones(3) * i}, i=i)["x"] for i in range(3)]
    assert len([w for w in record if issubclass(w.category, CacheWarning)]) == 1
    assert [v[0] for v in values] == [0.0, 1.0, 2.0]
    # Never a half-written file: neither an entry nor a temporary.
    assert not [p for p in (cache_root / "full").rglob("*") if p.is_file()]


def test_read_only_cache_directory_is_read_but_never_written(cache_root, monkeypatch):
    cache = NpzCache("ro")
    cache.save("kept", {"x": np.arange(2)})

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    np.testing.assert_array_equal(cache.load("kept")["x"], np.arange(2))
    with pytest.warns(CacheWarning, match="Read-only file system"):
        assert cache.get_or_compute(lambda: {"x": np.zeros(1)}, k="new")["x"].tolist() == [0.0]


# ----------------------------------------------------------------------- killed writers
_WRITER = textwrap.dedent("""
    import sys, time
    import numpy as np
    from kcca_desc._core.cache import atomic_write_bytes

    def slow(f):
        f.write(b"x" * 1000)
        f.flush()
        print("writing", flush=True)
        time.sleep(60)

    atomic_write_bytes(sys.argv[1], slow, checksum=True)
""")


def test_killed_writer_leaves_no_file_a_reader_could_take(cache_root):
    target = cache_root / "entries" / "big.npz"
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "writing"
    finally:
        writer.kill()
        writer.wait()
    assert not target.exists()
    leftovers = list(target.parent.glob(".*.tmp"))
    assert len(leftovers) == 1 and f".{writer.pid}." in leftovers[0].name
    assert remove_temporaries(writer.pid) == 1
    assert not list(target.parent.iterdir())


# ----------------------------------------------------------------------------- locks
_HOLDER = textwrap.dedent("""
    import sys, time
    from kcca_desc._core.cache import entry_lock

    with entry_lock(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(60)
""")


def test_no_lock_outlives_a_killed_process(cache_root):
    entry = cache_root / "x" / "entry.npz"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(entry)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        waited = multiprocessing.get_context("fork").Process(target=_take_lock, args=(str(entry),))
        waited.start()
        waited.join(1.0)
        assert waited.is_alive(), "the lock was not held"
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        waited.join(5.0)
        assert waited.exitcode == 0, "the lock outlived its killed holder"
    finally:
        holder.kill()
        holder.wait()


def _take_lock(entry: str) -> None:
    with entry_lock(entry):
        pass


def _compute_entry(root: str, results) -> None:
    os.environ["KCCA_DESC_CACHE"] = root

    def compute():
        time.sleep(0.5)
        return {"x": np.arange(5.0), "pid": np.array(os.getpid())}

    results.put((os.getpid(), int(NpzCache("shared").get_or_compute(compute, entry="same")["pid"])))


@pytest.mark.parametrize("n_processes", [2, 4])
def test_concurrent_runs_compute_an_entry_once(cache_root, n_processes):
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [context.Process(target=_compute_entry, args=(str(cache_root), results)) for _ in range(n_processes)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    computed_by = {results.get(timeout=5)[1] for _ in workers}
    assert len(computed_by) == 1  # one computed it, the others read it back


# ------------------------------------------------------- chunked feature stores and resume
def test_interrupted_featurisation_resumes_from_the_last_chunk_byte_for_byte(cache_root, tmp_path, monkeypatch):
    images = _scenes(13)
    featurizer = ImageFeaturizer(**SMALL, chunk_size=4).fit(_scenes(6, seed=9))
    interrupted = CountingImages(images, stop_at=10)  # dies inside the third chunk
    with pytest.raises(KeyboardInterrupt):
        featurizer.transform(interrupted)
    resumed = CountingImages(images)
    out = featurizer.transform(resumed)
    assert resumed.loads == 13 - 8  # two chunks of four were kept

    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "fresh"))
    reference = ImageFeaturizer(**SMALL, chunk_size=4).fit(_scenes(6, seed=9)).transform(images)
    for name in reference:
        assert out[name].tobytes() == reference[name].tobytes()


def test_interrupted_codebook_fit_resumes_from_the_last_chunk(cache_root, tmp_path, monkeypatch):
    train = _scenes(10, seed=9)
    with pytest.raises(KeyboardInterrupt):
        ImageFeaturizer(**SMALL, chunk_size=3).fit(CountingImages(train, stop_at=8))  # in the third chunk
    resumed = CountingImages(train)
    fitted = ImageFeaturizer(**SMALL, chunk_size=3).fit(resumed)
    assert resumed.loads == 10 - 6
    assert not list((cache_root / "codebook_samples").rglob("*.npz"))  # removed once the codebooks are stored
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "fresh"))
    reference = ImageFeaturizer(**SMALL, chunk_size=3).fit(train)
    for name, codebook in reference.codebooks_.items():
        assert fitted.codebooks_[name].cluster_centers_.tobytes() == codebook.cluster_centers_.tobytes()


def test_runs_on_different_splits_merge_their_rows(cache_root):
    images = _scenes(10)
    featurizer = ImageFeaturizer(**SMALL, chunk_size=3).fit(_scenes(6, seed=9))
    featurizer.transform(images.subset(range(0, 5)))   # one split
    featurizer.transform(images.subset(range(5, 10)))  # another: adds chunks, overwrites none
    counting = CountingImages(images)
    featurizer.transform(counting)
    assert counting.loads == 0


def test_damaged_chunk_costs_only_its_own_images(cache_root):
    images = _scenes(9)
    featurizer = ImageFeaturizer(**SMALL, chunk_size=3).fit(_scenes(6, seed=9))
    reference = featurizer.transform(images)
    chunk = sorted((cache_root / "pyramid_histograms").rglob("*.npz"))[0]
    chunk.write_bytes(chunk.read_bytes()[:100])
    counting = CountingImages(images)
    with pytest.warns(CacheWarning, match="damaged"):
        again = featurizer.transform(counting)
    assert counting.loads == 3
    for name in reference:
        np.testing.assert_array_equal(again[name], reference[name])


def _featurise(root: str, indices, results=None):
    os.environ["KCCA_DESC_CACHE"] = root
    images = CountingImages(_scenes(12).subset(indices))
    out = ImageFeaturizer(**SMALL, chunk_size=3).fit(_scenes(6, seed=9)).transform(images)
    got = (tuple(indices), images.loads, {k: v.tobytes() for k, v in out.items()})
    if results is None:
        return got
    results.put(got)


@pytest.mark.parametrize("n_processes", [2, pytest.param(4, marks=pytest.mark.heavy)])
def test_concurrent_featurisation_shares_the_store(cache_root, tmp_path, monkeypatch, n_processes):
    # Spawned, not forked: this process has run thread pools, which a fork does not copy safely.
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    # Half the runs featurise the whole set, the others one split of it each.
    requests = [list(range(12)) if i % 2 == 0 else list(range(6 * (i // 2 % 2), 6 * (i // 2 % 2) + 6))
                for i in range(n_processes)]
    workers = [context.Process(target=_featurise, args=(str(cache_root), r, results)) for r in requests]
    for w in workers:
        w.start()
    got = [results.get(timeout=120) for _ in workers]
    for w in workers:
        w.join(30)
    # The figures each run gives alone (a fresh cache each).
    for indices, _, out in got:
        assert _featurise(str(tmp_path / f"alone{indices[0]}-{len(indices)}"), list(indices))[2] == out
    # Identical requests share chunks: the whole set was computed once between its runs.
    assert sum(loads for indices, loads, _ in got if len(indices) == 12) <= 12 + 6 * (n_processes // 2)
    monkeypatch.setenv("KCCA_DESC_CACHE", str(cache_root))
    counting = CountingImages(_scenes(12))
    ImageFeaturizer(**SMALL, chunk_size=3).fit(_scenes(6, seed=9)).transform(counting)
    assert counting.loads == 0  # nothing any run stored was lost


def test_written_since_counts_new_entries_per_stage(cache_root):
    start = time.time()
    NpzCache("codebooks").save("a", {"x": np.ones(1)})
    ChunkCache("pyramid_histograms/k").save("b", {"x": np.ones(1)})
    with entry_lock(cache_root / "codebooks" / "a.npz"):
        pass
    assert written_since(start) == {"codebooks": 1, "pyramid_histograms": 1}
    assert cache_module.cache_root() == cache_root


@pytest.mark.heavy
@pytest.mark.parametrize("n_runs", [2, 4])
def test_concurrent_command_line_runs_give_the_figures_they_give_alone(tmp_path, n_runs):
    light = ["--n-images", "60", "--n-components", "4,8", "--regs", "0.1,1", "--n-select", "2", "--levels", "1",
             "--pixel-step", "4", "--text-kernel", "bow5"]
    configurations = [light, light + ["--split", "dev"], light + ["--text-kernel", "tri5"], light + ["--power", "2"]]

    outcomes = {}

    def run(i, cache):
        outcomes[(i, cache.name)] = run_cli(configurations[i] + ["--out", str(tmp_path / f"{cache.name}{i}.json")],
                                           cache)

    threads = [threading.Thread(target=run, args=(i, tmp_path / "shared")) for i in range(n_runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(n_runs):
        run(i, tmp_path / f"alone{i}")
        assert outcomes[(i, "shared")]["rc"] == outcomes[(i, f"alone{i}")]["rc"] == 0
        assert figures(tmp_path / f"shared{i}.json") == figures(tmp_path / f"alone{i}{i}.json")
    assert not list((tmp_path / "shared").rglob("*.tmp"))


def test_damage_is_reported_on_one_line(tmp_path):
    path = tmp_path / "entry.pkl"
    path.write_bytes(b"x")
    with pytest.warns(CacheWarning, match=r"damaged \(UnpicklingError: first line second line\); it is") as seen:
        discard_damaged(path, pickle.UnpicklingError("first line\nsecond line"))
    assert "\n" not in str(seen[0].message) and not path.exists()


# ------------------------------------------------------------------------- file modes
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_honour_the_umask(tmp_path, umask):
    from matplotlib.figure import Figure

    from kcca_desc._core.cache import atomic_write_text
    from kcca_desc.report.figures import save_figure

    previous = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "results.json", "{}\n")
        atomic_write_text(tmp_path / "results.json", "{}\n")  # replacing a file: the same mode
        NpzCache("modes", root=tmp_path).save("entry", {"x": np.ones(2)})
        save_figure(Figure(), tmp_path / "figures", "empty")
    finally:
        os.umask(previous)
    written = [tmp_path / "results.json", tmp_path / "modes" / "entry.npz",
               tmp_path / "figures" / "empty.png", tmp_path / "figures" / "empty.pdf"]
    # What open(path, "w") would give: mkstemp alone made every one 0600.
    assert {path.name: oct(path.stat().st_mode & 0o777) for path in written} == \
        {path.name: oct(0o666 & ~umask) for path in written}
    assert not list(tmp_path.rglob("*.tmp"))


# ------------------------------------------------------------------ orphan temporaries
def test_orphan_temporaries_of_dead_writers_are_swept_when_the_cache_is_opened(cache_root):
    directory = cache_root / "swept"
    directory.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    dead_pid = int(dead.stdout)
    old = time.time() - 3600
    orphans = {
        "killed writer": (directory / f".a.npz.{dead_pid}.x1.tmp", old),
        "alive but a day old": (directory / f".b.npz.{os.getppid()}.x2.tmp", time.time() - 2 * 86400),
    }
    kept = {
        "alive writer": (directory / f".c.npz.{os.getppid()}.x3.tmp", old),
        "this run's": (directory / f".d.npz.{dead_pid}.x4.tmp", time.time() + 1),
        "not a temporary": (directory / "e.npz.tmp", old),
    }
    for path, mtime in [*orphans.values(), *kept.values()]:
        path.write_bytes(b"x" * 100)
        os.utime(path, (mtime, mtime))
    assert NpzCache("swept").load("missing") is None
    assert {name for name, (path, _) in {**orphans, **kept}.items() if path.exists()} == set(kept)
