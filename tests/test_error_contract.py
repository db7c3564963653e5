"""One error contract: every ``raise`` of the toolkit raises a class of the ``KccaDescError`` tree.

The test reads the source of ``kcca_desc/`` and ``kernels/`` (installed as ``kcca_desc.kernels``)
with :mod:`ast`, resolves each raised name through the module's imports and class definitions,
and follows the bases of each class to :class:`kcca_desc.kernels.errors.KccaDescError`.  The only
other classes allowed are the Python protocols listed in :mod:`kcca_desc._core.errors`.
"""

from __future__ import annotations

import ast
import builtins
from functools import cached_property
from pathlib import Path

import pytest
import sklearn.exceptions

import kcca_desc
from kcca_desc._core.errors import (KccaDescError, MissingDependencyError, NotFittedError, ParameterError,
                                    import_optional)
from kcca_desc.kernels.errors import KccaDescError as KernelsRoot

ROOT = Path(__file__).resolve().parents[1]
ROOT_CLASS = "kcca_desc.kernels.errors.KccaDescError"

#: Classes a ``raise`` may name outside the tree, by where they are allowed.
ANYWHERE = {
    # argparse's protocol: an option's type function raises it and argparse turns it into a usage
    # error (exit 2).  Those functions are being moved into kcca_desc/cli/ (issue 44).
    "argparse.ArgumentTypeError",
    # A broken invariant (a library returning what its contract excludes) is a bug, not a user
    # error: it keeps its traceback.
    "builtins.RuntimeError",
}
IN_METHOD = {
    # A module's __getattr__ (PEP 562) and a sequence's __getitem__ follow Python's protocols.
    "__getattr__": {"builtins.AttributeError"},
    "__getitem__": {"builtins.IndexError", "builtins.KeyError"},
}
# NotImplementedError is allowed as the whole body (after a docstring) of a hook subclasses override.
STUB = "builtins.NotImplementedError"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "kernels":
        parts.insert(0, "kcca_desc")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class Source:
    """The parsed modules of ``kcca_desc/`` and ``kernels/``, with their top-level names resolved.

    Parameters
    ----------
    trees : dict
        Module name -> its parsed source.
    packages : set of str
        The module names that are packages (``__init__.py``), for relative imports.
    """

    def __init__(self, trees: dict[str, ast.Module], packages: set[str]):
        self.trees = trees
        self.packages = packages

    @classmethod
    def of_repository(cls) -> "Source":
        paths = [path for folder in ("kcca_desc", "kernels") for path in sorted((ROOT / folder).rglob("*.py"))]
        return cls({_module_name(path): ast.parse(path.read_text(encoding="utf-8")) for path in paths},
                   {_module_name(path) for path in paths if path.name == "__init__.py"})

    def injected(self, module: str, code: str) -> "Source":
        """A copy with ``code`` appended to ``module``."""
        text = ast.unparse(self.trees[module]) + "\n\n" + code
        return Source({**self.trees, module: ast.parse(text)}, self.packages)

    @cached_property
    def scopes(self) -> dict[str, dict[str, str]]:
        """Per module, each top-level name -> the qualified name it stands for."""
        scopes = {}
        for module, tree in self.trees.items():
            package = module if module in self.packages else module.rpartition(".")[0]
            scope = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            scope[alias.asname] = alias.name
                        else:
                            scope[alias.name.partition(".")[0]] = alias.name.partition(".")[0]
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        anchor = package.split(".")
                        anchor = anchor[:len(anchor) - node.level + 1]
                        base = ".".join(anchor + ([base] if base else []))
                    for alias in node.names:
                        scope[alias.asname or alias.name] = f"{base}.{alias.name}"
            for node in tree.body:
                if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                    scope[node.name] = f"{module}.{node.name}"
            scopes[module] = scope
        return scopes

    def canonical(self, qualified: str, seen: frozenset = frozenset()) -> str:
        """``qualified`` with re-exports followed to the definition (``kcca_desc.DataError`` -> its module's)."""
        module, _, name = qualified.rpartition(".")
        target = self.scopes.get(module, {}).get(name)
        if target is None or target == qualified or qualified in seen:
            return qualified
        return self.canonical(target, seen | {qualified})

    def resolve(self, module: str, expr: ast.expr) -> str | None:
        """The qualified name of a name or attribute chain in ``module``; None if it is not one."""
        if isinstance(expr, ast.Name):
            if expr.id in self.scopes[module]:
                return self.canonical(self.scopes[module][expr.id])
            return f"builtins.{expr.id}" if hasattr(builtins, expr.id) else None
        if isinstance(expr, ast.Attribute):
            base = self.resolve(module, expr.value)
            return None if base is None else self.canonical(f"{base}.{expr.attr}")
        return None

    def definition(self, qualified: str) -> ast.ClassDef | ast.FunctionDef | None:
        module, _, name = qualified.rpartition(".")
        for node in self.trees.get(module, ast.Module(body=[])).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
                return node
        return None

    def in_tree(self, qualified: str) -> bool:
        """Whether the class ``qualified`` is :data:`ROOT_CLASS` or derives from it (through our source)."""
        if qualified == ROOT_CLASS:
            return True
        node = self.definition(qualified)
        if not isinstance(node, ast.ClassDef):
            return False
        module = qualified.rpartition(".")[0]
        return any(self.in_tree(base) for base in map(lambda b: self.resolve(module, b), node.bases) if base)

    def methods_named(self, name: str) -> list[tuple[str, ast.FunctionDef]]:
        return [(module, node) for module, tree in self.trees.items() for node in ast.walk(tree)
                if isinstance(node, ast.FunctionDef) and node.name == name]


def _returns(source: Source, module: str, function: ast.FunctionDef) -> str | None:
    """The class named by ``function``'s return annotation (None without one)."""
    annotation = function.returns
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    return None if annotation is None else source.resolve(module, annotation)


def _raised_classes(source: Source, module: str, exc: ast.expr, function: ast.FunctionDef | None) -> list[str | None]:
    """The classes ``raise exc`` may raise, as qualified names (None where they cannot be told)."""
    target = exc.func if isinstance(exc, ast.Call) else exc
    qualified = source.resolve(module, target)
    if qualified is not None:
        node = source.definition(qualified)
        # A class, or a function that builds the error (``invalid_parameter``): its return annotation.
        return [_returns(source, qualified.rpartition(".")[0], node) if isinstance(node, ast.FunctionDef)
                else qualified]
    if isinstance(exc, ast.Call) and isinstance(target, ast.Attribute):
        # A method that builds the error (``problems.error(source)``): every method of that name,
        # less those that never return (argparse's ``error`` hook of the command line's parser).
        built = [_returns(source, mod, method) for mod, method in source.methods_named(target.attr)]
        return [name for name in built if name != "typing.NoReturn"] or [None]
    # A parameter, or an item of a list parameter (``raise errors[0]``): its annotation.
    name = exc.value if isinstance(exc, ast.Subscript) else exc
    for arg in (function.args.args + function.args.kwonlyargs if function else []):
        if isinstance(name, ast.Name) and arg.arg == name.id and arg.annotation is not None:
            annotation = arg.annotation
            if isinstance(exc, ast.Subscript) and isinstance(annotation, ast.Subscript):
                annotation = annotation.slice
            return [source.resolve(module, annotation)]
    return [None]


def _is_stub(function: ast.FunctionDef) -> bool:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def violations(source: Source) -> list[str]:
    """One line per ``raise`` of a class outside the tree and the allowed protocols."""
    found = []
    for module, tree in source.trees.items():
        functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        enclosing = {id(raise_): function for function in functions for raise_ in ast.walk(function)
                     if isinstance(raise_, ast.Raise)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or node.exc is None:  # a bare raise re-raises
                continue
            function = enclosing.get(id(node))
            allowed = set(ANYWHERE) | IN_METHOD.get(getattr(function, "name", ""), set())
            if function is not None and _is_stub(function):
                allowed.add(STUB)
            for qualified in _raised_classes(source, module, node.exc, function):
                if qualified is None or not (qualified in allowed or source.in_tree(qualified)):
                    found.append(f"{module}:{node.lineno}: raise {ast.unparse(node.exc)[:80]} ({qualified})")
    return found


@pytest.fixture(scope="module")
def source() -> Source:
    return Source.of_repository()


def test_every_raise_is_of_the_tree(source):
    assert violations(source) == []


#: scikit-learn's input checks, whose errors are scikit-learn's own classes.
SKLEARN_CHECKS = ("sklearn.utils.validation", "sklearn.utils.check_array", "sklearn.utils.check_X_y",
                  "sklearn.utils.validate_data")
VALIDATION = "kcca_desc.kernels._validation"


def sklearn_checks_outside_the_wrappers(source: Source) -> list[str]:
    """The modules other than the wrappers' that import scikit-learn's input checks themselves."""
    return sorted(f"{module}: {name} = {target}" for module, scope in source.scopes.items() if module != VALIDATION
                  for name, target in scope.items() if target.startswith(SKLEARN_CHECKS))


def test_input_checks_raise_the_toolkits_errors(source):
    # check_array's ValueError, check_is_fitted's NotFittedError: scikit-learn's classes, which
    # `except KccaDescError` would miss; the wrappers re-raise them as DataError / NotFittedError.
    assert sklearn_checks_outside_the_wrappers(source) == []
    injected = source.injected("kcca_desc.kcca.linear", "from sklearn.utils.validation import check_is_fitted\n")
    assert sklearn_checks_outside_the_wrappers(injected) == [
        "kcca_desc.kcca.linear: check_is_fitted = sklearn.utils.validation.check_is_fitted"]


MODULE = "kcca_desc.kcca.linear"


@pytest.mark.parametrize("line, why", [
    ("raise ValueError('bad')", "a built-in ValueError"),
    ("raise TypeError", "a built-in class, not called"),
    ("raise KeyError(name) from None", "a built-in KeyError"),
    ("raise sklearn.exceptions.NotFittedError('x')", "an outside library's class"),
    ("raise NotImplementedError\n    x = 1", "NotImplementedError in a function that is more than a stub"),
    ("raise something_unknown()", "a name that cannot be resolved"),
    ("raise name", "a variable of unknown class"),
])
def test_an_injected_raise_is_caught(source, line, why):
    injected = source.injected(MODULE, f"def _injected(name):\n    import sklearn.exceptions\n    {line}\n")
    found = violations(injected)
    assert len(found) == 1 and found[0].startswith(f"{MODULE}:"), why


@pytest.mark.parametrize("line", [
    "raise ParameterError('bad')",          # the tree, imported in the module
    "raise DataError",
    "raise NotImplementedError",            # the whole body of a hook (after the docstring)
    "raise",                                # a re-raise
    "raise errors[0]",                      # an item of a list annotated with a class of the tree
])
def test_an_injected_raise_of_the_tree_passes(source, line):
    code = ("from .._core.errors import DataError, ParameterError\n\n"
            f"def _injected(errors: list[ParameterError]):\n    \"\"\"Doc.\"\"\"\n    {line}\n")
    assert violations(source.injected(MODULE, code)) == []


def test_the_tree_has_one_root_shared_with_kernels():
    assert KccaDescError is KernelsRoot is kcca_desc.KccaDescError
    from kcca_desc.kernels.image.codebook import TooFewDescriptorsError
    from kcca_desc.kernels.text.similarity import WordNetUnavailableError

    assert issubclass(TooFewDescriptorsError, KccaDescError) and issubclass(TooFewDescriptorsError, ValueError)
    assert issubclass(WordNetUnavailableError, MissingDependencyError)
    assert issubclass(WordNetUnavailableError, RuntimeError)
    assert issubclass(NotFittedError, sklearn.exceptions.NotFittedError)


def test_errors_keep_their_built_in_bases():
    from kcca_desc._core.cache import DamagedEntryError
    from kcca_desc._core.registry import UnknownNameError
    from kcca_desc.report.gallery import ReportDataError

    for cls, base in [(DamagedEntryError, ValueError), (UnknownNameError, KeyError), (UnknownNameError, ValueError),
                      (ReportDataError, ValueError)]:
        assert issubclass(cls, KccaDescError) and issubclass(cls, base), cls
    assert str(UnknownNameError("unknown shape 'x'")) == "unknown shape 'x'"
    assert issubclass(ParameterError, TypeError)


def test_import_optional_names_the_extra():
    assert import_optional("json", None, "a test").loads("1") == 1
    with pytest.raises(MissingDependencyError, match=r"^the Dask engine needs the optional package 'no_such_module_xyz', "
                                                     r"which is not installed; install it with "
                                                     r"`pip install \"kcca_desc\[dask\]\"` \(from a clone of kcca_desc: "
                                                     r"`pip install -e \"\.\[dask\]\"`\)$") as info:
        import_optional("no_such_module_xyz", "dask", "the Dask engine")
    assert info.value.name == "no_such_module_xyz" and info.value.extra == "dask"
    # The extra as the package metadata names it (setuptools normalises "_" to "-", PEP 685).
    with pytest.raises(MissingDependencyError, match=r"`pip install \"kcca_desc\[open-clip\]\"`"):
        import_optional("no_such_module_xyz", "open_clip", "the OpenCLIP encoder")
    with pytest.raises(MissingDependencyError, match=r"`pip install no_such_module_xyz`"):
        import_optional("no_such_module_xyz", None, "a test")
