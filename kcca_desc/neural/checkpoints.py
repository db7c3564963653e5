"""Checkpoint files of the trainable models: one ``state.pt`` per run, written atomically.

A checkpoint is an entry of the toolkit's cache: written with its SHA-256 digest
(:func:`kcca_desc._core.cache.atomic_write_bytes`), verified before ``torch.load`` unpickles
anything; a damaged one is named in one :class:`~kcca_desc._core.cache.CacheWarning`, deleted and
retrained.

A checkpoint is a dict (``torch.save``) with the keys ``format`` (:data:`CHECKPOINT_FORMAT`),
``finished``, ``feature_dim``, ``vocabulary``, ``network``, ``optimiser`` and ``schedule``
(state dicts), ``torch_rng``, ``cuda_rng`` and ``numpy_rng`` (generator states) and ``run``: the
run's ``history``, kept ``snapshots``, early-stopping state (``best_rsum``, ``waited``),
training ``seconds`` and ``stopped_by``.
"""

from __future__ import annotations

import io
from pathlib import Path

from .._core.cache import discard_damaged, open_checked, remove_stale_temporaries, write_entry
from .._core.progress import LOGGER
from ._torch import torch_module

__all__ = ["CHECKPOINT_FORMAT", "write_checkpoint", "read_checkpoint"]

#: Bumped when the checkpoint layout or the rule that ends a run changes, so an old checkpoint is
#: never misread (2: dev patience waits for the last learning-rate phase).
CHECKPOINT_FORMAT = 2


def write_checkpoint(path: Path, state: dict) -> None:
    """Save ``state`` at ``path`` atomically (serialised first, so the temporary file lives briefly).

    A checkpoint is a cache entry: on a full or read-only disk the training goes on without it,
    with one warning (:func:`kcca_desc._core.cache.write_entry`).
    """
    buffer = io.BytesIO()
    torch_module().save(state, buffer)
    write_entry(path, lambda f: f.write(buffer.getvalue()), checksum=True)


def read_checkpoint(path: Path | None) -> dict | None:
    """The checkpoint at ``path``, or None when there is none (or it is of another format).

    A damaged checkpoint (its checksum does not match, it has none, or it cannot be parsed) is
    deleted with a warning naming it, and the model is trained afresh.
    """
    if path is None or not path.is_file():
        return None
    remove_stale_temporaries(path.parent)
    torch = torch_module()
    try:
        with open_checked(path) as f:
            payload = io.BytesIO(f.read())
        # Our own pickle (vocabulary, history, generator states), its checksum verified.
        state = torch.load(payload, map_location="cpu", weights_only=False)
    except FileNotFoundError:
        return None
    except MemoryError:
        raise
    except Exception as exc:  # any failure to parse: torch's and pickle's errors vary widely
        # Writes are atomic, so this is damage from outside: retrain rather than trust it.
        discard_damaged(path, exc)
        return None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        LOGGER.info("checkpoint %s is not of format %d: training afresh", path, CHECKPOINT_FORMAT)
        return None
    return state
