"""The on-disk cache and the atomic writers every output file goes through."""

import json

import numpy as np
import pytest

from kcca_desc._core.cache import (CacheWarning, NpzCache, PickleCache, atomic_write_bytes, atomic_write_text, cache_key,
                             cache_keys)


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


def test_cache_keys_equal_one_cache_key_per_variant():
    common = {"data": {"captions": [["a dog", "Ünïcode"]], "features": np.arange(6.0).reshape(2, 3)}, "format": 2}
    variants = [{"params": {"max_epochs": m, "lr": 1e-3}} for m in (1, 2, 32)]
    keys = cache_keys(variants, **common)
    assert keys == [cache_key(**common, **v) for v in variants] and len(set(keys)) == 3
    assert cache_keys([{}], **common) == [cache_key(**common)]
    with pytest.raises(ValueError, match="'format'"):
        cache_keys([{"format": 3}], **common)


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
        cache.path(key).parent.mkdir(parents=True, exist_ok=True)
        cache.path(key).write_bytes(b"truncated")
        with pytest.warns(CacheWarning, match="damaged"):
            assert cache.load(key) is None
        cache.save(key, value)
        assert cache.load(key) is not None


def test_entries_read_again_come_from_memory_read_only(cache_root, monkeypatch):
    from kcca_desc._core import cache as cache_module

    store = NpzCache("recent")
    value = {"x": np.arange(5.0)}
    store.save("k", value)
    value["x"][0] = 99.0  # the writer's arrays stay its own: memory kept a copy
    opened = []
    real_open = cache_module.open_checked
    monkeypatch.setattr(cache_module, "open_checked", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    first = store.load("k")
    with pytest.raises(ValueError, match="read-only"):
        first["x"][0] = 99.0  # a caller cannot change the entry others are handed
    second = store.load("k")
    np.testing.assert_array_equal(second["x"], np.arange(5.0))
    assert second["x"] is first["x"]  # shared, not copied
    assert opened == []  # both served from memory: the entry was written by this process
    # Python objects are not kept: they are read from the file each time.
    pickles = PickleCache("recent_pickles")
    pickles.save("p", {"a": [1, 2]})
    assert pickles.load("p") == {"a": [1, 2]} and len(opened) == 1


def test_entries_read_from_disk_are_read_only_whether_remembered_or_not(cache_root, monkeypatch):
    from kcca_desc._core import cache as cache_module

    for budget in (0, 1 << 20):
        recent = cache_module._RecentEntries()
        recent._budget = budget
        monkeypatch.setattr(cache_module, "_recent", recent)
        NpzCache("fresh").save(f"k{budget}", {"x": np.arange(5.0)})
        recent._entries.clear()  # as in a later run: read from the file
        read = NpzCache("fresh").load(f"k{budget}")
        assert not read["x"].flags.writeable
        np.testing.assert_array_equal(read["x"], np.arange(5.0))
        assert (len(recent._entries) == 1) == bool(budget)


def test_an_entry_changed_on_disk_after_it_was_remembered_is_checked_again(cache_root):
    store = NpzCache("recent")
    store.save("k", {"x": np.arange(1000.0)})
    assert store.load("k") is not None
    path = store.path("k")
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(CacheWarning):
        assert store.load("k") is None
    assert not path.exists()


def test_remembered_entries_stay_within_their_budget(cache_root, monkeypatch):
    from kcca_desc._core import cache as cache_module

    recent = cache_module._RecentEntries()
    recent._budget = 3 * 800
    monkeypatch.setattr(cache_module, "_recent", recent)
    store = NpzCache("recent")
    for i in range(5):
        store.save(f"k{i}", {"x": np.full(100, float(i))})  # 800 bytes each
    assert recent._bytes <= recent._budget and len(recent._entries) == 3
    assert sorted(p.stem for p in recent._entries) == ["k2", "k3", "k4"]  # the oldest went first
