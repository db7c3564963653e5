"""Sphinx extension: a reference to an object by where it is defined resolves to its public page.

The docstrings name objects by the module that defines them (``kcca_desc.kernels.image.pyramid_kernel``,
:func:`~kcca_desc.methods.fusion.borda_fuse`) or relative to their own module (``registry``,
:meth:`fit`), while the API reference documents each under the package that exports it
(``kcca_desc.kernels.pyramid_kernel``). When the Python domain cannot resolve a reference, this
imports what it names and, when that is a public object (or a member of one, or a module inside a
documented package), links to the object's page (or the package's section) instead. A reference to
an object that exists but is not documented (a private helper) shows as its name without a link; a
name that imports as nothing stays a warning, so a reference left behind by a rename fails the build.

A constant a package exports is documented by the ``#:`` comment above it in its defining module.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import types

from docutils import nodes
from sphinx import addnodes
from sphinx.pycode import ModuleAnalyzer
from sphinx.errors import PycodeError

import kcca_desc
from kcca_desc import __version__

#: The packages whose ``__all__`` the API reference documents (docs/api/index.rst).
PACKAGES = ("data", "text", "image", "kernels", "kcca", "scale", "adapters", "neural", "methods", "evaluate",
            "tasks", "report")


@functools.cache
def public_names() -> dict[int, str]:
    """The documented name of each public object, by ``id``: packages, their exports, the errors.

    Numbers and strings are left out: another module's equal constant may be the same object.
    """
    names: dict[int, str] = {}
    for module in [importlib.import_module(f"kcca_desc.{package}") for package in PACKAGES] + [kcca_desc]:
        names.setdefault(id(module), module.__name__)
        for name in module.__all__:
            obj = getattr(module, name)
            if not isinstance(obj, (str, int, float)):
                names.setdefault(id(obj), f"{module.__name__}.{name}")
    return names


def _lookup(dotted: str):
    """The object ``dotted`` names (a module, or attributes of one), or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except (ImportError, ValueError):  # no such module, or not a module name at all ("a..b")
            continue
        try:
            for attribute in parts[cut:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return None
        return obj
    return None


def _context(node) -> str | None:
    """The full name of the object whose text holds the reference: the docstring it was read from
    ("kernels/image/pyramid.py:docstring of kcca_desc.kernels.image.pyramid.image_kernel"), or the
    object an autosummary row summarises (its first cell, linked before the summary is resolved)."""
    source = str(node.source or "")
    if ":docstring of " in source:
        return source.split(":docstring of ", 1)[1]
    row = node.parent
    while row is not None and not isinstance(row, nodes.row):
        row = row.parent
    if row is None:
        return None
    first = next(iter(row.findall(lambda n: isinstance(n, (nodes.reference, addnodes.pending_xref)))), None)
    if first is None:
        return None
    return first.get("reftitle") or first.get("reftarget")


def _candidates(node) -> list[str]:
    """The full names a reference may mean: as written, then relative to the object whose text holds
    it (the object, its class, its module, outwards), then to the page's class and module."""
    target = node["reftarget"].lstrip("~.")
    names = [target]
    context = _context(node)
    if context:
        parts = context.split(".")
        names += [".".join(parts[:cut] + [target]) for cut in range(len(parts), 0, -1)]
    module, cls = node.get("py:module"), node.get("py:class")
    if module and cls:
        names.append(f"{module}.{cls}.{target}")
    if module:
        names.append(f"{module}.{target}")
    return names


def _resolve(node, names: dict[int, str]) -> tuple[bool, str | None]:
    """Whether the reference names an object of the toolkit, and its documented name if it has one."""
    exists = False
    for candidate in _candidates(node):
        obj = _lookup(candidate)
        if obj is None:
            # An instance attribute (``fitted_``, ``problems``) cannot be imported: its class can.
            owner = _lookup(candidate.rpartition(".")[0])
            exists = exists or (node["reftype"] == "attr" and isinstance(owner, type))
            continue
        exists = True
        if id(obj) in names:
            return True, names[id(obj)]
        owner, _, member = candidate.rpartition(".")
        owner_obj = _lookup(owner)
        if isinstance(owner_obj, type) and id(owner_obj) in names:
            return True, f"{names[id(owner_obj)]}.{member}"
        if isinstance(obj, types.ModuleType):
            # A module inside a documented package: its public names are in the package's section.
            package = ".".join(obj.__name__.split(".")[:2])
            if package in names.values():
                return True, package
    return exists, None


def _missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    exists, target = _resolve(node, public_names())
    if target is not None:
        domain = env.get_domain("py")
        for role in (node["reftype"], "obj", "mod"):
            found = domain.resolve_xref(env, node["refdoc"], app.builder, role, target, node, contnode)
            if found is not None:
                return found
    # A private helper that exists is named, not linked; a name that exists nowhere stays a warning.
    return contnode if exists else None


_ROLE = re.compile(r":(?P<role>[\w:]+):`~?(?P<target>[A-Za-z_][\w.]*)`")


def _defining_comment(name: str, obj) -> list[str] | None:
    """The ``#:`` comment above the assignment of constant ``name`` in the module that defines it, its
    references to that module's names made absolute (the comment is read in the package's context)."""
    package, _, attribute = name.rpartition(".")
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith(package + ".") or getattr(module, attribute, None) is not obj:
            continue
        try:
            comments = ModuleAnalyzer.for_module(module_name).find_attr_docs()
        except PycodeError:
            continue
        if ("", attribute) not in comments:
            continue

        def absolute(match: re.Match) -> str:
            target = match["target"]
            if not hasattr(module, target.split(".")[0]):
                return match[0]
            return f":{match['role']}:`~{module_name}.{target}`"

        return [_ROLE.sub(absolute, line) for line in comments["", attribute]]
    return None


def _constant_docstring(app, what, name, obj, options, lines) -> None:
    """A constant exported by a package is documented by its ``#:`` comment where it is defined,
    which autodoc, looking in the package's ``__init__``, would miss (showing its type's docstring,
    "Built-in immutable sequence" for a tuple)."""
    if what != "data":
        return
    comment = _defining_comment(name, obj)
    if comment is not None:
        lines[:] = comment


def setup(app) -> dict:
    app.connect("missing-reference", _missing_reference)
    app.connect("autodoc-process-docstring", _constant_docstring)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
