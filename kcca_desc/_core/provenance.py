"""What a results file records of where it was made: toolkit, commit, Python, libraries, machine.

A figure in a paper is only reproducible with the software that made it. :func:`environment`
gathers, cheaply and without importing anything new, the facts that decide a run's figures:
the toolkit's version and (when it runs from a git checkout) its commit and whether the
working tree had changes, the Python version, the versions of the numerical libraries, and
the machine (platform, processor, CPU count).
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["environment", "LIBRARIES", "library_version", "library_versions"]

#: Distributions whose versions are recorded (those installed; torch and friends only when present).
LIBRARIES = ("numpy", "scipy", "scikit-learn", "numba", "scikit-image", "opencv-python-headless", "nltk",
             "torch", "onnxruntime", "transformers", "sentence-transformers", "open-clip-torch", "timm",
             "dask", "zarr", "cupy-cuda12x")

# The repository root when the package runs from a checkout (kcca_desc/_core/ -> the root).
_ROOT = Path(__file__).resolve().parents[2]


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(_ROOT), *args], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def _commit() -> dict | None:
    """The checkout's commit and whether tracked files differ from it; None outside a checkout."""
    if not (_ROOT / ".git").exists():
        return None
    commit = _git("rev-parse", "HEAD")
    if commit is None:
        return None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


@functools.lru_cache(maxsize=None)
def library_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (None when it is not installed), read once per process.

    From the installed metadata, so that a cache key that names the libraries making a value
    imports none of them.
    """
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def library_versions(distributions) -> dict[str, str | None]:
    """``{distribution: library_version(distribution)}`` of each of ``distributions``, in order."""
    return {name: library_version(name) for name in distributions}


def _versions() -> dict[str, str]:
    return {name: version for name, version in library_versions(LIBRARIES).items() if version is not None}


def environment() -> dict:
    """The software and machine of this run, as JSON-ready values.

    Returns
    -------
    dict
        ``kcca_desc`` (version), ``git`` (``{"commit", "dirty"}`` from a checkout, else None),
        ``python``, ``libraries`` (distribution -> version, installed ones of :data:`LIBRARIES`),
        ``machine`` (``platform``, ``processor``, ``cpus``).
    """
    return {
        # The installed distribution's version (= kcca_desc.__version__, which the build reads):
        # importing the package root from here would import every layer above _core.
        "kcca_desc": library_version("kcca_desc"),
        "git": _commit(),
        "python": sys.version.split()[0],
        "libraries": _versions(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count()},
    }
