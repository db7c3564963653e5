"""Models named by a Hugging Face hub id: loaded from a local directory or the cache, or refused at once.

The ``st``, ``hf``, ``timm`` (``@pretrained``) and ``open_clip`` (``@TAG``) families accept a hub
id where a local model is not given.  Left to themselves, the libraries retry a hub that cannot be
reached for over a minute, log every retry, and end in a traceback.  :func:`hub_model` decides
before the library is called:

* the model is in the local cache: it is loaded from there, in offline mode when the hub cannot
  be reached (no retry);
* it is not cached and ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set, or the hub does
  not answer within :data:`PROBE_TIMEOUT` seconds: one
  :class:`~kcca_desc._core.errors.ModelUnavailableError` naming the encoder and what to do (a
  local directory, or downloading it once with network);
* otherwise the library downloads it, its retry logging silenced; a hub error (no such model, a
  gated one) becomes the same one-line error.

The ``st`` and ``hf`` encoders run the same checks when they are built (:func:`check_named`), so
a command refuses such a model before it encodes the other side.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from .._core.errors import MissingModelFileError, ModelUnavailableError, first_line

__all__ = ["OFFLINE_VARIABLE", "PROBE_TIMEOUT", "is_hub_id", "local_model_path", "hub_offline",
           "repo_cached", "hub_unreachable", "require_source", "hub_model", "check_named", "load_named"]

#: The variable that puts the hub libraries in offline mode (huggingface_hub also reads
#: ``TRANSFORMERS_OFFLINE``).
OFFLINE_VARIABLE = "HF_HUB_OFFLINE"

#: Seconds the hub has to accept a connection before it is taken as unreachable.
PROBE_TIMEOUT = 3.0

# A probe's answer is reused this many seconds: an encoder is checked when built, then when loaded.
_PROBE_REUSE = 60.0
_probes: dict[tuple[str, str], tuple[float, str | None]] = {}

T = TypeVar("T")

# "name" or "org/name", as the hub spells repositories; anything else is meant as a path.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")

# The loggers that report each retry of an unreachable hub.
_NOISY_LOGGERS = ("huggingface_hub", "httpx", "urllib3")


def is_hub_id(name: str) -> bool:
    """Whether ``name`` is spelt as a hub repository (``name`` or ``org/name``) rather than a path."""
    return bool(_HUB_ID.fullmatch(name)) and ".." not in name


def local_model_path(encoder: str, name: str) -> Path | None:
    """``name`` as an existing local path; None for a hub id that is not a local path.

    Raises
    ------
    MissingModelFileError
        ``name`` is spelt as a path (``/models/x``, ``./x``, ``~/x``) that does not exist.
    """
    path = Path(name).expanduser()
    if path.exists():
        return path
    if is_hub_id(name):
        return None
    raise MissingModelFileError(f"encoder {encoder}: no model directory or file {str(path)!r}")


def hub_offline() -> bool:
    """Whether offline mode is on, by the rule huggingface_hub applies to its variables."""
    value = os.environ.get(OFFLINE_VARIABLE) or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in {"1", "ON", "YES", "TRUE"}


def _hub_cache() -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def repo_cached(repo_id: str) -> bool:
    """Whether the hub cache holds a snapshot of model ``repo_id`` (any revision)."""
    snapshots = _hub_cache() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(any(s.iterdir()) for s in snapshots.iterdir() if s.is_dir())


def _endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def hub_unreachable(timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why the hub cannot be reached (a short reason), or None when it accepts a connection.

    A TCP connection to the endpoint (``HF_ENDPOINT``), or to the proxy of ``HTTPS_PROXY`` when
    one is set; the name lookup runs in a thread too, since ``socket`` has no timeout for it.
    """
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    url = urlsplit(proxy or _endpoint())
    host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)
    outcome: list[str | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(exc.strerror or str(exc) or type(exc).__name__)

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        return f"no answer from {host} within {timeout:g} s"
    return None if outcome[0] is None else f"{host}: {outcome[0]}"


@contextlib.contextmanager
def _forced_offline() -> Iterator[None]:
    """Offline mode for the libraries while the model loads from the cache (no retry of the hub)."""
    from huggingface_hub import constants

    before_env, before_flag = os.environ.get(OFFLINE_VARIABLE), constants.HF_HUB_OFFLINE
    os.environ[OFFLINE_VARIABLE], constants.HF_HUB_OFFLINE = "1", True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before_flag
        if before_env is None:
            del os.environ[OFFLINE_VARIABLE]
        else:
            os.environ[OFFLINE_VARIABLE] = before_env


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in _NOISY_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _hub_error(exc: BaseException) -> BaseException | None:
    """The hub's own error in the chain of ``exc`` (libraries wrap it in an ``OSError`` of theirs)."""
    from huggingface_hub import errors

    kinds = (errors.HfHubHTTPError, errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled)
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kinds):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _probe() -> str | None:
    """:func:`hub_unreachable`, its answer reused for :data:`_PROBE_REUSE` seconds per endpoint and proxy."""
    key = (_endpoint(), os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy") or "")
    when, answer = _probes.get(key, (-_PROBE_REUSE, None))
    if time.monotonic() - when >= _PROBE_REUSE:
        answer = hub_unreachable()
        _probes[key] = (time.monotonic(), answer)
    return answer


def require_source(encoder: str, repo_id: str, *, cached: bool, local: str) -> str | None:
    """Refuse a model that is not cached and cannot be downloaded now; else why the hub is unreachable.

    Parameters
    ----------
    encoder : str
        The encoder's spec (``"st:all-MiniLM-L6-v2"``), for the message.
    repo_id : str
        The hub repository the library will fetch.
    cached : bool
        Whether the files are already on this machine (:func:`repo_cached`, or the library's
        own cache).
    local : str
        The spec with a local model instead (``"st:/path/to/all-MiniLM-L6-v2"``), for the message.

    Returns
    -------
    str or None
        Why the hub cannot be reached (the model is then loaded from the cache, offline); None
        when it can, or when offline mode is on.

    Raises
    ------
    ModelUnavailableError
        The model is not cached, and offline mode is on or the hub is unreachable.
    """
    todo = f"give a local model instead ({local})"
    where = f"the Hugging Face cache ({_hub_cache()})"
    offline = hub_offline()
    unreachable = None if offline else _probe()
    if not cached and offline:
        raise ModelUnavailableError(
            f"encoder {encoder}: {repo_id!r} is not in {where} and {OFFLINE_VARIABLE}=1 forbids downloading it; "
            f"{todo}, or unset {OFFLINE_VARIABLE} on a machine with network")
    if not cached and unreachable:
        raise ModelUnavailableError(
            f"encoder {encoder}: {repo_id!r} is not in {where} and the hub ({_endpoint()}) cannot be reached "
            f"({unreachable}); {todo}, or run once with network to cache it (then {OFFLINE_VARIABLE}=1 "
            "uses the cache without trying the network)")
    return unreachable


@contextlib.contextmanager
def hub_model(encoder: str, repo_id: str, *, cached: bool, local: str) -> Iterator[None]:
    """The context in which a library loads ``repo_id`` from the hub or its cache.

    Parameters are those of :func:`require_source`, which runs first.  In the context the
    libraries' retry logs are silenced, and the load is offline when the hub is unreachable.

    Raises
    ------
    ModelUnavailableError
        Before the library is called, from :func:`require_source`; after, when the hub refuses
        the model (no such repository, a gated one).
    """
    unreachable = require_source(encoder, repo_id, cached=cached, local=local)
    with _quiet(), (_forced_offline() if unreachable else contextlib.nullcontext()):
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - only the hub's errors are mapped, the rest re-raised
            hub = _hub_error(exc)
            if hub is None:
                raise
            raise ModelUnavailableError(f"encoder {encoder}: the hub cannot provide {repo_id!r}: "
                                        f"{first_line(hub)}; give a local model instead ({local}) or check "
                                        "the name") from exc


def _named_source(encoder: str, family: str, name: str, repos: Sequence[str]) -> dict | None:
    """``require_source``'s keywords for the model ``name``; None for a local path."""
    if local_model_path(encoder, name) is not None:
        return None
    return {"cached": any(repo_cached(repo) for repo in (repos or [name])),
            "local": f"{family}:/path/to/{name.rsplit('/', 1)[-1]}"}


def check_named(encoder: str, family: str, name: str, *, repos: Sequence[str] = ()) -> None:
    """The checks of :func:`load_named` without the load: run when the encoder is built, before any work.

    Raises
    ------
    MissingModelFileError, ModelUnavailableError
        As :func:`load_named` would.
    """
    source = _named_source(encoder, family, name, repos)
    if source is not None:
        require_source(encoder, name, **source)


def load_named(encoder: str, family: str, name: str, load: Callable[[], T], *, repos: Sequence[str] = ()) -> T:
    """``load()`` of the model ``name``: a local path as it is, a hub id within :func:`hub_model`.

    Parameters
    ----------
    encoder : str
        The encoder's spec, for messages.
    family : str
        The encoder family (``"st"``), for the spec with a local model the message suggests.
    name : str
        A local directory or a hub id.
    load : callable
        Loads the model (the library's ``from_pretrained`` or the like).
    repos : sequence of str, optional
        The repositories the library may fetch for ``name`` (default ``[name]``); the model is
        cached when any of them is.
    """
    source = _named_source(encoder, family, name, repos)
    if source is None:
        return load()
    with hub_model(encoder, name, **source):
        return load()
