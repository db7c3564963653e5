"""A file layer that fails as a full or read-only disk does, for tests and the reliability benchmark.

Mounting a small tmpfs needs privileges a test run seldom has, so :func:`faulty_disk` patches
Python's file layer instead: under one folder, a full disk (``ENOSPC``) lets files be created
but fails every write of data, and a read-only file system (``EROFS``) fails every creation of a
file or folder and every opening for writing.  It covers what the toolkit writes through:
``open`` (and :mod:`pathlib`, :func:`os.fdopen`, which use it), :func:`os.open` (so
:func:`tempfile.mkstemp`) and :func:`os.mkdir`.

From the command line, the layer wraps a module run as ``python -m``::

    python -m kcca_bench.faults ENOSPC /path/to/cache kcca_desc.fit --n-images 40
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
import runpy
import sys
from collections.abc import Iterator

__all__ = ["faulty_disk"]

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class _FullDiskFile:
    """A file opened for writing on a full disk: any write of data fails with ``ENOSPC``."""

    def __init__(self, file, path: str):
        self._file, self._path = file, path

    def write(self, data):
        if len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self._path)
        return 0

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __iter__(self):
        return iter(self._file)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._file.close()


@contextlib.contextmanager
def faulty_disk(root: str | os.PathLike, error: int = errno.ENOSPC) -> Iterator[None]:
    """Within the block, the folder ``root`` behaves as a full (``ENOSPC``) or read-only (``EROFS``) disk.

    Parameters
    ----------
    root : path-like
        The folder (existing or not) whose writes fail, and everything beneath it.
    error : {errno.ENOSPC, errno.EROFS}
        The failure.
    """
    if error not in (errno.ENOSPC, errno.EROFS):
        raise ValueError(f"faulty_disk: error must be errno.ENOSPC or errno.EROFS, got {error}")
    prefix = os.path.join(os.path.abspath(root), "")
    real_open, real_os_open, real_mkdir = io.open, os.open, os.mkdir

    def under(target) -> str | None:
        """The path of ``target`` (a path or a file descriptor) when it lies under ``root``."""
        path = os.readlink(f"/proc/self/fd/{target}") if isinstance(target, int) else os.fspath(target)
        path = os.path.abspath(os.fsdecode(path))
        return path if os.path.join(path, "").startswith(prefix) else None

    def fail(path: str):
        raise OSError(error, os.strerror(error), path)

    def open_(file, mode="r", *args, **kwargs):
        path = under(file) if isinstance(file, (int, str, bytes, os.PathLike)) else None
        writing = any(c in mode for c in "wax+")
        if path is None or not writing:
            return real_open(file, mode, *args, **kwargs)
        if error == errno.EROFS:
            fail(path)
        return _FullDiskFile(real_open(file, mode, *args, **kwargs), path)

    def os_open(path, flags, *args, **kwargs):
        if error == errno.EROFS and flags & _WRITE_FLAGS and under(path) is not None:
            fail(os.fspath(path))
        return real_os_open(path, flags, *args, **kwargs)

    def mkdir(path, *args, **kwargs):
        if error == errno.EROFS and under(path) is not None and not os.path.isdir(path):
            fail(os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    patches = [(builtins, "open", open_), (io, "open", open_), (os, "open", os_open), (os, "mkdir", mkdir)]
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    for module, name, replacement in patches:
        setattr(module, name, replacement)
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def _main(argv: list[str]) -> None:
    """``ENOSPC|EROFS ROOT MODULE [ARGS...]``: run ``python -m MODULE ARGS`` with ``ROOT`` failing so."""
    failure, root, module, *args = argv
    sys.argv = [module, *args]
    with faulty_disk(root, getattr(errno, failure)):
        runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _main(sys.argv[1:])
