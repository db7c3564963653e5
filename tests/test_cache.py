"""The on-disk cache and the atomic writers every output file goes through."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from kcca_desc.cache import NpzCache, PickleCache, atomic_write_bytes, atomic_write_text, cache_key


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("KCCA_DESC_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_atomic_write_text_round_trips_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "sub" / "table.md"
    atomic_write_text(path, "κ = 0.1 — ρ₁\n")
    assert path.read_text(encoding="utf-8") == "κ = 0.1 — ρ₁\n"
    atomic_write_text(path, "second")
    assert path.read_text() == "second"
    assert [p.name for p in path.parent.iterdir()] == ["table.md"]


def test_interrupted_write_keeps_the_previous_file(tmp_path):
    path = tmp_path / "figures.json"
    atomic_write_text(path, '{"old": 1}')

    def write_half_then_fail(f):
        f.write(b'{"new": ')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(path, write_half_then_fail)
    assert json.loads(path.read_text()) == {"old": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["figures.json"]


def test_npz_cache_hits_and_keys_on_every_parameter(cache_root):
    cache = NpzCache("demo")
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(3.0)}

    first = cache.get_or_compute(compute, kind="demo", n=3)
    again = cache.get_or_compute(compute, kind="demo", n=3)
    other = cache.get_or_compute(compute, kind="demo", n=4)
    assert len(calls) == 2
    np.testing.assert_array_equal(first["x"], again["x"])
    np.testing.assert_array_equal(other["x"], first["x"])
    assert cache_key(kind="demo", n=3) != cache_key(kind="demo", n=4)
    assert cache_key(a=np.ones(2)) != cache_key(a=np.array([1.0, 2.0]))


def test_damaged_entries_are_recomputed(cache_root):
    for cache, value in ((NpzCache("demo"), {"x": np.ones(2)}), (PickleCache("demo"), {"x": [1, 2]})):
        key = cache_key(kind=type(cache).__name__)
        cache.path(key).write_bytes(b"truncated")
        assert cache.load(key) is None
        cache.save(key, value)
        assert cache.load(key) is not None


def test_benchmark_results_are_written_atomically_as_json(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from _results import RESULTS_DIR, results_path, write_results

    assert results_path("kcca") == RESULTS_DIR / "kcca.json"
    path = tmp_path / "bench.json"
    write_results(path, {"seconds": 1.5, "shape": (2, 3)}, indent=1)
    assert json.loads(path.read_text()) == {"seconds": 1.5, "shape": [2, 3]}
    assert path.read_text().endswith("\n")
    assert f"wrote {path}" in capsys.readouterr().out
    with pytest.raises(TypeError):
        write_results(path, {"bad": object()})
    assert json.loads(path.read_text())["seconds"] == 1.5
    sys.modules.pop("_results", None)


def test_benchmark_machine_info_names_the_blas_kernel_and_its_overrides(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from _results import machine_info

    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    info = machine_info()
    # The variable is recorded as set, whatever kernel the already-loaded library chose.
    assert info["blas_env"] == {"OPENBLAS_CORETYPE": "Haswell"}
    assert info["cpus"] >= 1 and len(info["load_average_at_start"]) == 3
    np.ones((4, 4)) @ np.ones((4, 4))  # numpy's BLAS is loaded, so it must be listed
    blas = machine_info()["blas"]
    assert blas and all(set(b) == {"internal_api", "version", "architecture", "num_threads"} for b in blas)
    json.dumps(info)
    sys.modules.pop("_results", None)
