"""The library imports neither the command line's parser nor Dask.

Every module of ``kcca_desc`` (and ``kcca_desc.kernels``) outside the command line
(:mod:`kcca_desc.cli` and the ``python -m`` shims) is imported in a fresh interpreter, with an
import hook recording which module executes each ``import argparse`` / ``import dask``.

argparse is in ``sys.modules`` after the walk all the same: NumPy imports it on first access to
``numpy.f2py`` (``numpy.f2py.f2py2e``; SciPy's bundled ``array_api_compat`` touches it when
``scipy`` is imported) and ``unittest`` (``numpy.testing``) imports it too.  So the test is on
the importers: none may be a module of the toolkit.  Dask is imported by no dependency at all,
and only when the Dask engine is used, so it must be absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kcca_desc

PACKAGE = Path(kcca_desc.__file__).parent

# The import hook's own check: a module of the toolkit's name that imports argparse, made at the end.
_SELF_CHECK = "kcca_desc._import_probe"

_PROBE = f"""
import builtins, importlib, json, pkgutil, sys, types

WATCHED = ("argparse", "dask", "distributed")
importers = {{name: set() for name in WATCHED}}
real_import = builtins.__import__

def recording_import(name, globals=None, locals=None, fromlist=(), level=0):
    top = name.partition(".")[0]
    if level == 0 and top in importers:
        importers[top].add((globals or {{}}).get("__name__", "?"))
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = recording_import

COMMAND_LINE = ("kcca_desc.cli", "kcca_desc.fit", "kcca_desc.compare", "kcca_desc.report.__main__")

def walk(package):
    # pkgutil.walk_packages would import every package it meets, the command line's included.
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if any(info.name == c or info.name.startswith(c + ".") for c in COMMAND_LINE):
            continue
        module = importlib.import_module(info.name)
        yield info.name
        if info.ispkg:
            yield from walk(module)

import kcca_desc, kcca_desc.kernels
imported = [*walk(kcca_desc), *walk(kcca_desc.kernels)]
loaded = sorted(name for name in WATCHED if name in sys.modules)
exec("import argparse", types.ModuleType({_SELF_CHECK!r}).__dict__)
print(json.dumps({{"imported": imported, "loaded": loaded,
                  "importers": {{name: sorted(found) for name, found in importers.items()}}}}))
"""


def _probe() -> dict:
    run = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def test_the_library_imports_neither_argparse_nor_dask():
    found = _probe()
    assert "kcca_desc.methods.registry" in found["imported"] and "kcca_desc.scale.engine" in found["imported"]
    assert "kcca_desc.kernels.text" in found["imported"]
    assert not any(name.startswith("kcca_desc.cli") for name in found["imported"])
    # The hook sees an import of argparse by a module of the toolkit's name.
    assert _SELF_CHECK in found["importers"]["argparse"]
    toolkit = [name for name in found["importers"]["argparse"] if name.split(".")[0] == "kcca_desc"]
    assert toolkit == [_SELF_CHECK], f"library modules import argparse: {toolkit}"
    assert not {"dask", "distributed"} & set(found["loaded"]), found["importers"]


def test_only_the_command_line_names_argparse():
    # Also catches an import the hook cannot see (importlib.import_module, an import inside a function).
    outside = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
               if path.relative_to(PACKAGE).parts[0] != "cli" and "argparse" in path.read_text(encoding="utf-8")]
    assert outside == []


_REGISTRY_PROBE = """
import contextlib, io, json, logging, os, signal, sys, threading

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGTSTP)

def state():
    root = logging.getLogger()
    return {"signals": [repr(signal.getsignal(s)) for s in SIGNALS], "log_handlers": len(root.handlers),
            "log_level": root.level, "threads": threading.active_count(),
            "cache_created": os.path.exists(os.environ["KCCA_DESC_CACHE"])}

sys.argv = ["probe", "--no-such-option"]   # an import that parsed the command line would stop here
before = state()
printed = io.StringIO()
with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
    from kcca_desc.methods.registry import SYSTEMS
print(json.dumps({"before": before, "after": state(), "printed": printed.getvalue(), "systems": list(SYSTEMS)}))
"""


def test_importing_the_system_registry_does_nothing_a_command_does(tmp_path):
    env = {**os.environ, "KCCA_DESC_CACHE": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-c", _REGISTRY_PROBE], capture_output=True, text=True, timeout=600,
                         check=False, env=env)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.splitlines()[-1])
    assert found["after"] == found["before"]
    assert found["printed"] == ""
    assert {"kcca", "nn", "encoder", "cca", "vse"} <= set(found["systems"])
