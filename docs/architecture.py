"""Write docs/architecture.md from the code: the layers, what each package owns and imports, the error tree.

Nothing in the page is drawn by hand.  The layers are those of the import-linter contract in
``pyproject.toml``; the arrows are the imports found in the source (an ``ast`` walk of
``kcca_desc/`` and of ``kernels/``, which installs as ``kcca_desc.kernels``); each package's line is
the first line of its docstring; the "where do I add" table names registries that are imported
and checked to exist; the error tree is read from the classes themselves.

Usage::

    python docs/architecture.py           # rewrite docs/architecture.md
    python docs/architecture.py --check   # exit 1 if the page is out of date (run by the tests)
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
PACKAGE = "kcca_desc"
#: Folders of the toolkit's source and the package each is installed as.
SOURCES = {ROOT / "kcca_desc": PACKAGE, ROOT / "kernels": f"{PACKAGE}.kernels"}

#: Where a contributor adds each kind of extension: (what, module, registry or base, how).
EXTENSIONS = (
    ("a kernel function", "kcca_desc.kernels", None,
     "a function in `kernels/image/` or `kernels/text/` (Numba `parallel=True` for pairwise loops, a CuPy "
     "path where it pays); it imports nothing else of the toolkit"),
    ("a named text kernel", "kcca_desc.text.named_kernels", "TEXT_KERNELS",
     "one `TEXT_KERNELS.register(name, TextKernelSpec(...))`; `--text-kernel` offers it"),
    ("a named image kernel", "kcca_desc.image.kernel", "IMAGE_KERNELS",
     "one `IMAGE_KERNELS.register(name, ImageKernelSpec(...))`; `--image-kernel` offers it"),
    ("a base kernel of multiple-kernel KCCA", "kcca_desc.methods.base_kernels", "BASE_KERNELS",
     "a `BaseKernel` and one `BASE_KERNELS.register(name, BaseKernelSpec(side, build))` (encoder features: "
     "`register_feature_kernels(name, side, spec)`); `--method mkl --text-kernel a+b` offers it"),
    ("a system", "kcca_desc.methods.registry", "SYSTEMS",
     "an estimator in `kcca_desc/methods/` and one `SYSTEMS.register(name, System(...))`; `--method` "
     "offers it with its own options"),
    ("a trainable system", "kcca_desc.methods.trainable_systems", "TRAINABLE",
     "a model class in `kcca_desc/neural/` and one `TRAINABLE.register(name, TrainableSpec(...))` in "
     "`kcca_desc/methods/trainable_systems.py` (its settings are checked against the model's parameters "
     "there); `--method` offers it with `--train-config cpu|paper`"),
    ("an encoder family", "kcca_desc.adapters.families", "ENCODER_FAMILIES",
     "a thin wrapper in `kcca_desc/adapters/` and one `register_encoder(...)`; `--encoder FAMILY:MODEL` "
     "builds it"),
    ("a task", "kcca_desc.tasks.registry", "TASKS",
     "a module in `kcca_desc/tasks/` and one `TASKS.register(name, ...)`; `--task` runs it"),
    ("a data set", "kcca_desc.data.registry", "DATASETS",
     "a loader returning a `Dataset` and one `DATASETS.register(name, ...)`; `--data` loads it"),
    ("a metric", "kcca_desc.evaluate.ranks", "METRIC_KEYS",
     "computed from the per-query gold ranks in `kcca_desc/evaluate/ranks.py`, so every results file "
     "can recompute it"),
)


def _layers() -> list[list[str]]:
    """The layers of the package-wide layers contract, top first, each a list of sibling packages."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers" and contract.get("containers") == [PACKAGE]:
            return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]
    raise SystemExit("pyproject.toml has no layers contract over kcca_desc")


def _module_name(path: Path, folder: Path, package: str) -> str:
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def _imports() -> dict[str, set[str]]:
    """Module -> the toolkit modules it imports (at any depth of its code), relative imports resolved."""
    found: dict[str, set[str]] = defaultdict(set)
    for folder, package in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            module = _module_name(path, folder, package)
            is_package = path.name == "__init__.py"
            base = module.split(".") if is_package else module.split(".")[:-1]
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found[module].update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                    else:
                        target = node.module or ""
                    if target.split(".")[0] == PACKAGE:
                        # "from . import x" may import a submodule: count the package it names.
                        found[module].add(target)
    return found


def _package_of(module: str, packages: list[str]) -> str | None:
    """The top-level package (a name of ``packages``) that ``module`` belongs to, or None (the root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in packages else None


def package_graph() -> tuple[list[str], dict[str, set[str]]]:
    """The packages under ``kcca_desc`` (layer order, then kernels) and which import which."""
    packages = [name for layer in _layers() for name in layer] + ["kernels"]
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in _imports().items():
        if module.endswith(".__main__"):
            continue  # a python -m shim, which only calls into the command line
        source = _package_of(module, packages)
        for target in targets:
            imported = _package_of(target, packages)
            if source and imported and imported != source:
                edges[source].add(imported)
    return packages, edges


def _summary(package: str) -> str:
    module = importlib.import_module(f"{PACKAGE}.{package}")
    lines = inspect.cleandoc(module.__doc__ or "").split("\n\n")[0].split("\n")
    return " ".join(line.strip() for line in lines).rstrip(".")


def _mermaid(layers: list[list[str]], edges: dict[str, set[str]]) -> list[str]:
    """The layer diagram as a Mermaid flowchart, which GitHub draws.

    The documentation site draws the same block with ``docs/_ext/layer_diagram.py``, which reads
    exactly this grammar (and fails the build on any other): change the two together.
    """
    out = ["```mermaid", "flowchart TB"]
    for i, layer in enumerate(layers + [["kernels"]]):
        out.append(f'    subgraph L{i}[" "]')
        out.append("        direction LR")
        out += [f'        p{name}["{name}"]' for name in layer]
        out.append("    end")
    out += [f"    p{source} --> p{target}" for source in sorted(edges) for target in sorted(edges[source])]
    out.append("```")
    return out


def _allowed_below(layers: list[list[str]]) -> dict[str, list[str]]:
    allowed = {}
    for i, layer in enumerate(layers):
        below = [name for lower in layers[i + 1:] for name in lower]
        for name in layer:
            allowed[name] = below + ["kernels"]
    allowed["kernels"] = []
    return allowed


def _extension_rows() -> list[str]:
    rows = ["| to add | where | how |", "|---|---|---|"]
    for what, module_name, registry, how in EXTENSIONS:
        module = importlib.import_module(module_name)
        if registry is not None and not hasattr(module, registry):
            raise SystemExit(f"{module_name} has no {registry}: update EXTENSIONS in {Path(__file__).name}")
        where = f"`{module_name}.{registry}`" if registry else f"`{module_name}`"
        rows.append(f"| {what} | {where} | {how} |")
    return rows


def _import_all() -> None:
    """Import every module, so that every exception class of the toolkit is defined."""
    for folder, package in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            name = _module_name(path, folder, package)
            if name.endswith("__main__") or name in (f"{PACKAGE}.fit", f"{PACKAGE}.compare"):
                continue
            try:
                importlib.import_module(name)
            except ImportError:  # a module of an optional extra that is not installed
                continue


def _error_tree() -> list[str]:
    _import_all()
    root = importlib.import_module(PACKAGE).KccaDescError
    builtin = tuple(vars(__builtins__).values()) if isinstance(__builtins__, type(sys)) else tuple(__builtins__.values())
    lines = []

    def walk(cls: type, depth: int) -> None:
        bases = [b for b in cls.__mro__[1:] if b in builtin and b not in (Exception, BaseException, object)]
        # The most derived built-in types only (FileNotFoundError, not also OSError).
        bases = [b.__name__ for b in bases if not any(o is not b and issubclass(o, b) for o in bases)]
        also = f" (also {', '.join(bases)})" if bases else ""
        code = f", exit {cls.exit_code}" if "exit_code" in vars(cls) else ""
        lines.append(f"{'  ' * depth}- `{cls.__module__}.{cls.__qualname__}`{also}{code}")
        for sub in sorted(cls.__subclasses__(), key=lambda c: (c.__module__, c.__qualname__)):
            if sub.__module__.startswith(PACKAGE):
                walk(sub, depth + 1)

    walk(root, 0)
    return lines


def render() -> str:
    layers = _layers()
    packages, edges = package_graph()
    allowed = _allowed_below(layers)
    rows = ["| package | owns | may import | imports |", "|---|---|---|---|"]
    for name in packages:
        may = ", ".join(allowed[name]) or "nothing of the toolkit"
        now = ", ".join(sorted(edges.get(name, ()), key=packages.index)) or "nothing of the toolkit"
        rows.append(f"| `{name}` | {_summary(name)} | {may} | {now} |")
    lines = [
        "# Architecture",
        "",
        "<!-- Generated by docs/architecture.py from the code; do not edit by hand. -->",
        "",
        "Data flows one way: data set → preprocessing → features → kernels → solver → systems → scores →",
        "evaluation → reports.  Each package below is usable alone and imports only from the layers",
        "beneath its own: the import-linter contract in `pyproject.toml` lists the layers, and the test",
        "suite (`tests/test_layout.py`) breaks on an import that goes up.  `kernels/` (installed as",
        "`kcca_desc.kernels`) imports nothing else of the toolkit; the command line (`cli`) is the only",
        "package that imports argparse.",
        "",
        "## Layers",
        "",
        "Top to bottom, one row per layer; an arrow is an import found in the source.",
        "",
        *_mermaid(layers, edges),
        "",
        "## Packages",
        "",
        *rows,
        "",
        "## Where do I add…",
        "",
        *_extension_rows(),
        "",
        "## Errors",
        "",
        "Every problem a user can fix raises a class of this tree (each also the built-in type a caller",
        "would catch); the command line prints it as one `error:` line and exits with its code.",
        "",
        *_error_tree(),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/architecture.md is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is out of date: run python docs/architecture.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
