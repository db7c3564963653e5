"""On-disk cache for features and kernel matrices.

Entries are NumPy ``.npz`` archives (or pickles) named by a SHA-1 of every
parameter that determines them, so a changed parameter can never return a
stale entry.  Writes go to a temporary file in the same directory followed by
:func:`os.replace`, which is atomic on POSIX: an interrupted run leaves either
the old entry or none, never a truncated one; the file gets the mode the umask gives a new
file.  Temporary files carry the writer's process id, so that a supervisor can remove those of a
killed writer (:func:`remove_temporaries`), and a later run those of a writer that no longer runs
(:func:`remove_stale_temporaries`, when it first reads a directory).

Safety of the entries (``docs/design.md``, "Cache safety"):

* every entry starts with a SHA-256 digest of its contents, checked on reading: an entry
  damaged on disk (truncated, overwritten with garbage) is discarded with a
  :class:`CacheWarning` and recomputed, never trusted, and nothing is parsed before its checksum
  is verified (``.npz`` entries written before checksums were added are read as before: the
  CRC-32 of each member still guards them; a pickle without a checksum is never loaded);
* an entry that cannot be written (full disk, read-only directory) warns once and the run
  goes on without writing to the cache; its results are unaffected;
* :meth:`NpzCache.get_or_compute` computes a missing entry under a lock file
  (``fcntl.flock`` through :mod:`filelock`), so concurrent runs sharing the cache compute it
  once: the others wait and read it back.  The kernel releases such a lock when its process
  dies, so no lock outlives a killed run.

The cache lives in ``$KCCA_DESC_CACHE`` (default ``~/.cache/kcca_desc``).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import os
import pickle
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator

import numpy as np
from filelock import FileLock

from .errors import CacheError, KccaDescError, ParameterError, warn_user

__all__ = ["cache_root", "cache_dir", "cache_key", "cache_keys", "atomic_write_bytes", "atomic_write_text", "NpzCache",
           "PickleCache", "ChunkCache", "CacheWarning", "DamagedEntryError", "open_checked", "discard_damaged",
           "write_entry", "read_json_entry", "write_json_entry", "cache_write_failed", "entry_lock", "written_since", "remove_temporaries",
           "remove_stale_temporaries"]

# Header of a checksummed entry: a magic string, then the SHA-256 digest of everything after it.
_MAGIC = b"KCCA-DESC-SHA256"
_HEADER = len(_MAGIC) + hashlib.sha256().digest_size
# Cache directories whose failed writes were already reported (one warning per run and directory).
_unwritable_reported: set[Path] = set()
# Directories already swept of stale temporary files by this process (see remove_stale_temporaries).
_swept: set[Path] = set()
# When this run began: a temporary file older than that is not being written by it.
_RUN_STARTED = time.time()
#: Age beyond which a temporary file is stale even if a process of its writer's id runs (a reused
#: process id, or a writer on another machine sharing the cache).
STALE_AFTER_S = 24 * 3600


class CacheWarning(UserWarning):
    """An entry was damaged (and is recomputed) or the cache cannot be written (the run goes on)."""


def cache_root() -> Path:
    """The cache directory, ``$KCCA_DESC_CACHE`` or ``~/.cache/kcca_desc`` (not created)."""
    return Path(os.environ.get("KCCA_DESC_CACHE", Path.home() / ".cache" / "kcca_desc"))


def cache_dir(subdir: str = "") -> Path:
    """The cache directory (created on demand), optionally a sub-directory of it."""
    path = cache_root() / subdir if subdir else cache_root()
    path.mkdir(parents=True, exist_ok=True)
    return path


#: Types that JSON encodes as they are (exactly these: a subclass, np.float64 say, is converted).
_PLAIN_TYPES = frozenset({str, int, float, bool, type(None)})


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        contiguous = np.ascontiguousarray(obj)
        # Hashed in place (the same digest as of its bytes): a training kernel is not copied.
        data = contiguous.tobytes() if contiguous.dtype.hasobject else contiguous.data
        return {"__ndarray__": hashlib.sha1(data).hexdigest(),
                "shape": list(obj.shape), "dtype": str(obj.dtype)}
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        # A list of plain values (the tokens of a caption) is JSON as it stands: converting it
        # without a call per value keys the 30,000 training captions of Flickr8K in a tenth of the time.
        if set(map(type, obj)) <= _PLAIN_TYPES:
            return list(obj)
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, Path):
        return str(obj)
    raise ParameterError(f"cache_key: cannot key on a value of type {type(obj).__name__}")


def cache_key(**params: Any) -> str:
    """SHA-1 hex digest of ``params`` (nested dicts, lists, scalars, arrays)."""
    return cache_keys([{}], **params)[0]


def cache_keys(variants: Iterable[dict[str, Any]], **common: Any) -> list[str]:
    """``cache_key(**common, **variant)`` of each of ``variants``, converting ``common`` once.

    For many keys that share large parts (the data of a trained model, say) and differ in a
    few small ones.
    """
    shared = _jsonable(common)
    out = []
    for variant in variants:
        if clash := shared.keys() & variant.keys():
            raise ParameterError(f"cache_keys: {sorted(clash)} given both in common and in a variant")
        blob = json.dumps({**shared, **_jsonable(variant)}, sort_keys=True, separators=(",", ":"))
        out.append(hashlib.sha1(blob.encode()).hexdigest())
    return out


def _payload_digest(f: BinaryIO) -> bytes:
    """SHA-256 of an entry's payload (everything after the header), read in blocks."""
    f.seek(_HEADER)
    digest = hashlib.sha256()
    while block := f.read(1 << 20):
        digest.update(block)
    return digest.digest()


def _umask() -> int:
    """The process's file mode creation mask, read without changing it where the system allows."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    # Elsewhere the mask can only be read by setting it: set it back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, write: Callable[[Any], None], checksum: bool = False) -> None:
    """Call ``write(fileobj)`` on a temporary file, then move it to ``path`` atomically.

    The file gets the mode that the umask gives a new file (``0o666 & ~umask``), and is never
    seen half-written: a failure (or a kill) leaves the old ``path`` or none.

    With ``checksum``, the file starts with a header holding the SHA-256 digest of what
    ``write`` wrote (read back with :func:`open_checked`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp")
    try:
        # mkstemp creates the file 0600 whatever the umask; the file renamed into place must be
        # readable as a plain ``open(path, "w")`` would have made it (a report in a shared folder).
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w+b") as f:
            if checksum:
                f.write(bytes(_HEADER))
            write(f)
            f.flush()
            if checksum:
                digest = _payload_digest(f)
                f.seek(0)
                f.write(_MAGIC + digest)
                f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, as :func:`atomic_write_bytes`."""
    data = text.encode("utf-8")
    atomic_write_bytes(path, lambda f: f.write(data))


class DamagedEntryError(KccaDescError, ValueError):
    """A cache entry's contents do not match the checksum stored with it."""

    exit_code = CacheError.exit_code


@contextlib.contextmanager
def open_checked(path: str | os.PathLike, legacy_magic: bytes | None = None) -> Iterator[BinaryIO]:
    """``path`` opened for reading at the start of its payload, its checksum verified.

    Parameters
    ----------
    path : path-like
        An entry written by :func:`atomic_write_bytes` with ``checksum=True``.
    legacy_magic : bytes or None
        A file without the checksum header is still read (from its first byte) when it starts
        with these bytes: entries of a format that checks itself, written before entries
        carried checksums (``.npz`` archives, whose members carry a CRC-32).  None: every entry
        must carry a checksum, so that nothing unverified is ever parsed (a pickle, say).

    Raises
    ------
    DamagedEntryError
        The payload does not match the stored digest (truncated or overwritten on disk), or the
        file has no checksum header (and is not a legacy entry).
    """
    with open(path, "rb") as f:
        header = f.read(_HEADER)
        if header[:len(_MAGIC)] == _MAGIC:
            if len(header) < _HEADER or _payload_digest(f) != header[len(_MAGIC):]:
                raise DamagedEntryError("its contents do not match their checksum")
            f.seek(_HEADER)
        elif legacy_magic is not None and header.startswith(legacy_magic):
            f.seek(0)
        else:
            # Said in the cache's terms: a parser's guess at random bytes (numpy's "allow_pickle",
            # pickle's opcodes) would only mislead.
            raise DamagedEntryError("it does not start with the cache's checksum header")
        yield f


def discard_damaged(path: Path, reason: BaseException) -> None:
    """Warn that the entry ``path`` is damaged and delete it, so that it is recomputed."""
    # One line: a parser's message (pickle's, say) can span several.
    detail = " ".join(str(reason).split())
    warn_user(f"cache entry {path} is damaged ({type(reason).__name__}: {detail}); "
              "it is discarded and recomputed", CacheWarning)
    with contextlib.suppress(OSError):
        path.unlink()


def cache_write_failed(path: Path, exc: OSError) -> None:
    """Warn, once per cache directory, that an entry could not be written; the run goes on.

    Later entries are still tried (a full disk may get room again); each failed write has
    already removed its temporary file.
    """
    root = cache_root()
    if root not in _unwritable_reported:
        _unwritable_reported.add(root)
        warn_user(f"cannot write the cache entry {path} ({exc.strerror or exc}); this run goes on "
                  "without caching what it cannot write: its results are unaffected, but a later run "
                  "recomputes those entries", CacheWarning)


def write_entry(path: str | os.PathLike, write: Callable[[Any], None], checksum: bool = True) -> bool:
    """Write a cache entry as :func:`atomic_write_bytes` does; on a full or read-only disk, warn and go on.

    The cache only saves time: an ``OSError`` (``ENOSPC``, ``EROFS``, a permission) leaves no
    file, warns once per run (:class:`CacheWarning`) and returns False, and the run goes on.
    """
    try:
        atomic_write_bytes(path, write, checksum=checksum)
    except OSError as exc:
        cache_write_failed(Path(path), exc)
        return False
    return True


def read_json_entry(path: str | os.PathLike, legacy: bool = False) -> Any | None:
    """The JSON document of the checksummed entry ``path``; None when there is none or it is damaged.

    A damaged entry (its checksum does not match, it has none, or it is no JSON) is named in one
    :class:`CacheWarning` and deleted (:func:`discard_damaged`), so that its writer writes it again.
    With ``legacy``, a document written before such entries carried checksums (it starts with
    ``{``) is still read, its parse its only check.
    """
    try:
        with open_checked(path, legacy_magic=b"{" if legacy else None) as f:
            return json.loads(f.read())
    except FileNotFoundError:
        return None
    except ValueError as exc:  # the checksum's, UTF-8's or JSON's
        discard_damaged(Path(path), exc)
        return None


def write_json_entry(path: str | os.PathLike, value: Any) -> bool:
    """Write ``value`` as the JSON document of a checksummed entry (:func:`write_entry`)."""
    data = json.dumps(value).encode()
    return write_entry(path, lambda f: f.write(data))


@contextlib.contextmanager
def entry_lock(entry: str | os.PathLike) -> Iterator[None]:
    """Hold the exclusive lock of the cache entry ``entry`` (a path) for the block.

    The lock is a file in the cache's ``.locks`` directory, named by a digest of ``entry``, held
    with ``fcntl.flock`` on Unix (:mod:`filelock`): the kernel releases it when the holding
    process dies.  Where no lock file can be created (a read-only cache) the block runs unlocked.
    """
    name = hashlib.sha1(os.fsencode(os.path.abspath(entry))).hexdigest()
    try:
        path = cache_root() / ".locks" / f"{name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(os.fspath(path))
        lock.acquire()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        lock.release()


def _cache_files(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != ".locks"]
        for name in files:
            path = Path(directory, name)
            with contextlib.suppress(OSError):
                yield path, path.stat()


def written_since(start: float) -> dict[str, int]:
    """Entries of the cache written since ``start`` (a ``time.time()``), counted per sub-directory."""
    counts: collections.Counter[str] = collections.Counter()
    root = cache_root()
    if root.is_dir():
        for path, stat in _cache_files(root):
            if stat.st_mtime >= start - 1 and not path.name.startswith("."):
                counts[path.relative_to(root).parts[0]] += 1
    return dict(counts)


def _written_by(path: Path, pid: int) -> bool:
    """Whether ``path`` is a temporary file of :func:`atomic_write_bytes` in process ``pid``."""
    name = path.name
    return (name.startswith(".") and name.endswith(".tmp")
            and name[:-len(".tmp")].rsplit(".", 2)[1:2] == [str(pid)])


def remove_temporaries(pid: int, *directories: str | os.PathLike) -> int:
    """Delete the temporary files that the (killed) process ``pid`` left.

    Searched: the whole cache and the files directly in ``directories`` (e.g. the output's).
    Returns how many were removed.
    """
    root = cache_root()
    candidates = [path for path, _ in _cache_files(root)] if root.is_dir() else []
    for directory in map(Path, directories):
        candidates += [path for path in directory.glob(".*.tmp")]
    removed = 0
    for path in candidates:
        if _written_by(path, pid):
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
    return removed


def _writer_running(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (it may be a later one reusing the id)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, under another user
        return True
    return True


def remove_stale_temporaries(directory: str | os.PathLike) -> int:
    """Delete the temporary files of :func:`atomic_write_bytes` that no writer will finish.

    A temporary file in ``directory`` (not its sub-directories) is stale when it is older than
    this run and its writer, named by the process id in its name, no longer runs (a writer killed
    by SIGKILL, which no handler can clean up after), or when it is older than
    :data:`STALE_AFTER_S` whatever runs.  A file being written now is never removed: its writer
    is alive, or it is this run's own.  Each directory is swept once per process; returns how
    many files were removed.
    """
    directory = Path(directory)
    if directory in _swept:
        return 0
    _swept.add(directory)
    removed = 0
    now = time.time()
    with contextlib.suppress(OSError):
        for path in directory.glob(".*.tmp"):
            fields = path.name[:-len(".tmp")].rsplit(".", 2)
            try:
                mtime = path.stat().st_mtime
                pid = int(fields[1]) if len(fields) == 3 else None
            except (OSError, ValueError):
                continue
            if pid is None or mtime >= _RUN_STARTED:
                continue
            if now - mtime > STALE_AFTER_S or not _writer_running(pid):
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed += 1
    return removed


class _RecentEntries:
    """The entries this process read or wrote last, verified, kept in memory up to a byte budget.

    A table of systems reads the same large entries once per system (the image Gram, its
    spectrum, the pyramid histograms: about 1 GB on Flickr8K); from memory each read is a copy
    instead of a read and a SHA-256 of the file.  An entry is found only while its file is the
    one it came from (same inode, size and modification time), so a file replaced or damaged since
    is read, and checked, again.  The arrays kept are read-only, and callers get them as they are
    rather than copies (copying the Grams and spectra of one run took seconds): a caller that
    tried to modify one would get numpy's ``ValueError``, never change the entry.  The budget is
    :data:`RECENT_ENTRIES_SHARE` of the memory available when the first entry comes.
    """

    def __init__(self):
        self._entries: collections.OrderedDict[Path, tuple[tuple, dict[str, np.ndarray], int]] = \
            collections.OrderedDict()
        self._budget: int | None = None
        self._bytes = 0
        # Worker threads (feature extraction, Dask's local workers) read entries too.
        self._lock = threading.Lock()

    @staticmethod
    def _signature(path: Path) -> tuple | None:
        try:
            st = path.stat()
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def get(self, path: Path) -> dict[str, np.ndarray] | None:
        with self._lock:
            found = self._entries.get(path)
            if found is None:
                return None
            if found[0] != self._signature(path):
                self._drop(path)
                return None
            self._entries.move_to_end(path)
        return dict(found[1])

    def put(self, path: Path, arrays: Any, *, owned: bool) -> None:
        """Keep the entry ``path``'s ``arrays``, read-only: as they are when ``owned``, else copies.

        ``owned``: the arrays were just read from the file and no one else can write them (they
        are made read-only in place); otherwise (arrays a caller computed and keeps) copies are kept.
        """
        if not _plain_arrays(arrays):
            return
        signature = self._signature(path)
        size = sum(a.nbytes for a in arrays.values())
        if self._budget is None:
            from .resources import available_memory
            available = available_memory()
            self._budget = int(RECENT_ENTRIES_SHARE * available) if available else 0
        if signature is None or size > self._budget:
            return
        kept = arrays if owned else {name: _read_only(a.copy()) for name, a in arrays.items()}
        with self._lock:
            self._drop(path)
            while self._entries and self._bytes + size > self._budget:
                self._drop(next(iter(self._entries)))
            self._entries[path] = (signature, kept, size)
            self._bytes += size

    def _drop(self, path: Path) -> None:
        entry = self._entries.pop(path, None)
        if entry is not None:
            self._bytes -= entry[2]


def _plain_arrays(value: Any) -> bool:
    """Whether ``value`` is an entry of plain arrays (a dict of ndarrays), which memory can keep."""
    return isinstance(value, dict) and all(isinstance(a, np.ndarray) for a in value.values())


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


#: Share of the available memory that the entries kept in memory may take (see ``_RecentEntries``).
RECENT_ENTRIES_SHARE = 0.1
_recent = _RecentEntries()


class NpzCache:
    """A directory of ``.npz`` entries keyed by parameters.

    The entries read or written last are also kept in memory, within a tenth of the memory
    available, so that the systems of one run that share an entry read and verify its file once.
    The arrays of an entry read (:meth:`load`, or :meth:`get_or_compute` finding it) are therefore
    read-only, shared by every caller; an entry just computed is returned as ``compute`` made it.

    Examples
    --------
    >>> cache = NpzCache("demo")
    >>> cache.get_or_compute(lambda: {"x": np.arange(3)}, kind="demo", n=3)["x"]  # computed, or read back
    array([0, 1, 2])
    >>> cache.path(cache_key(kind="demo", n=3)).is_file()
    True
    """

    #: File suffix of the entries.
    suffix = ".npz"
    #: Entries without a checksum header that are still read (see :func:`open_checked`).
    legacy_magic: bytes | None = b"PK\x03\x04"
    #: Whether entries are also kept in memory (plain arrays only; see ``_RecentEntries``).
    remembered = True

    def __init__(self, subdir: str, enabled: bool = True, *, root: str | os.PathLike | None = None):
        self.subdir = subdir
        self.enabled = enabled
        self.root = root

    @property
    def directory(self) -> Path:
        """Where the entries are: ``root/subdir`` (``root`` defaults to :func:`cache_root`)."""
        # Not created here: reading a cache that cannot be written must still work.
        return (cache_root() if self.root is None else Path(self.root)) / self.subdir

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{self.suffix}"

    def load(self, key: str) -> Any | None:
        """The entry ``key``, or None when caching is off or the entry is missing or damaged.

        A damaged entry (checksum mismatch, unreadable format) is deleted with a
        :class:`CacheWarning`: it is recomputed, not trusted.
        """
        if not self.enabled:
            return None
        path = self.path(key)
        remembered = _recent.get(path) if self.remembered else None
        if remembered is not None:
            return remembered
        remove_stale_temporaries(path.parent)
        try:
            with open_checked(path, self.legacy_magic) as f:
                value = self._read(f)
            if self.remembered and _plain_arrays(value):
                # Read-only whether memory keeps them or not, so that callers see one behaviour.
                value = {name: _read_only(a) for name, a in value.items()}
                _recent.put(path, value, owned=True)
            return value
        except FileNotFoundError:
            return None
        except MemoryError:
            raise
        except Exception as exc:  # any failure to parse: the format's own errors vary widely
            discard_damaged(path, exc)
            return None

    def save(self, key: str, value: Any) -> None:
        """Write the entry ``key`` atomically, with its checksum; warn and go on when it cannot be."""
        if self.enabled and write_entry(self.path(key), lambda f: self._write(f, value)) and self.remembered:
            _recent.put(self.path(key), value, owned=False)

    def lock(self, key: str):
        """Context manager: the lock of entry ``key`` across processes (see :func:`entry_lock`)."""
        return entry_lock(self.path(key)) if self.enabled else contextlib.nullcontext()

    @staticmethod
    def _read(f: BinaryIO) -> dict[str, np.ndarray]:
        with np.load(f, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}

    @staticmethod
    def _write(f, arrays: dict[str, np.ndarray]) -> None:
        np.savez(f, **arrays)

    def get_or_compute(self, compute: Callable[[], dict[str, np.ndarray]], **params: Any) -> dict[str, np.ndarray]:
        """The entry keyed by ``params``, computed by ``compute()`` and saved when missing.

        A missing entry is computed under its lock: a concurrent run that needs the same entry
        waits, then reads it back instead of computing it again.
        """
        key = cache_key(**params)
        hit = self.load(key)
        if hit is not None:
            return hit
        with self.lock(key):
            hit = self.load(key)  # computed by another run while this one waited
            if hit is None:
                hit = compute()
                self.save(key, hit)
        return hit


class PickleCache(NpzCache):
    """Like :class:`NpzCache` for arbitrary picklable Python objects."""

    suffix = ".pkl"
    # Nothing is unpickled before its checksum is verified.
    legacy_magic = None
    # Python objects cannot be copied as cheaply and safely as arrays.
    remembered = False

    @staticmethod
    def _read(f: BinaryIO) -> Any:
        return pickle.load(f)

    @staticmethod
    def _write(f, obj: Any) -> None:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)


class ChunkCache(NpzCache):
    """A directory of ``.npz`` chunks that together make one store (of histograms, embeddings...).

    Runs add chunks side by side (each its own entry, named by its contents) instead of
    rewriting one file, so that concurrent runs merge rather than overwrite each other's work,
    and an interrupted run keeps the chunks it finished.  :meth:`unread` yields the chunks
    written since its last call, by this run or another.
    """

    def __init__(self, subdir: str, enabled: bool = True, *, root: str | os.PathLike | None = None):
        super().__init__(subdir, enabled, root=root)
        self._seen: set[str] = set()

    def unread(self) -> Iterator[dict[str, np.ndarray]]:
        """The chunks not yet read (damaged ones are discarded with a warning and skipped)."""
        directory = self.directory
        if not self.enabled or not directory.is_dir():
            return
        for path in sorted(directory.glob(f"*{self.suffix}")):
            if path.stem not in self._seen:
                self._seen.add(path.stem)
                chunk = self.load(path.stem)
                if chunk is not None:
                    yield chunk

    def save(self, key: str, value: Any) -> None:
        self._seen.add(key)
        super().save(key, value)

    def clear(self) -> None:
        """Delete every chunk (the store served its purpose), and the emptied directory."""
        directory = self.directory
        for path in directory.glob(f"*{self.suffix}"):
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            directory.rmdir()
