"""The README's and the user guide's examples run as written, on the synthetic data.

Every fenced ``python``, ``bash`` and ``console`` block of :data:`PAGES` runs, in the page's order,
in one temporary working directory per page with a temporary cache shared by all pages: python
blocks in a fresh interpreter, shell blocks through bash (``set -eo pipefail``, with this
interpreter first on ``PATH`` as ``python``). Later blocks of a page may read what earlier ones
wrote (runs, then ``compare`` on them), as a reader following the page would. The working
directory holds ``data.tsv`` and ``images/``, a small TSV data set that stands for "your own
images and captions".

The README's and getting started's examples run in the default suite; the user guide's, which
take minutes together, are marked ``heavy`` (``python -m pytest -m heavy tests/test_doc_examples.py``).

A block that cannot run here says why in a comment line right above its fence,
``<!-- skip-test: needs Flickr8K -->``; the reasons must be one of :data:`SKIP_REASONS`, and
:func:`test_skipped_example` lists each skipped block with its reason. The README's two CI blocks
(``<!-- ci:setup -->``, ``<!-- ci:test -->``) are what ``.ci/run`` executes, so they are skipped here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bad_inputs import write_tsv_dataset

REPOSITORY = Path(__file__).resolve().parents[1]
#: The pages whose examples must run: the README and getting started (the newcomer's), the user guide.
NEWCOMER_PAGES = ("README.md", "docs/getting_started.md")
GUIDE_PAGES = tuple(sorted(str(p.relative_to(REPOSITORY)) for p in (REPOSITORY / "docs" / "user_guide").glob("*.md")))
PAGES = NEWCOMER_PAGES + GUIDE_PAGES
#: Why a block may be skipped (a reason starts with one of these).
SKIP_REASONS = ("needs Flickr8K", "needs a network", "needs a GPU", "needs hours", "installs packages")
#: At most this many skipped blocks over all pages: the examples are meant to run.
MAX_SKIPPED = 8
RUNNABLE = {"python", "bash", "console"}
#: Comment lines right above a fence, then the fence with its language and body.
_BLOCK = re.compile(r"(?P<comments>(?:<!--[^\n]*-->\n)*)```(?P<lang>[^\s`]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$",
                    re.S | re.M)
_CI_MARKER = re.compile(r"<!-- ci:(setup|test) -->")
_SKIP_MARKER = re.compile(r"<!-- skip-test: (?P<reason>[^>]*?) -->")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    code: str
    skip: str | None            # the reason it does not run here, or None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    """The runnable fenced blocks of ``page``, in order."""
    text = (REPOSITORY / page).read_text()
    found = []
    for match in _BLOCK.finditer(text):
        if match["lang"] not in RUNNABLE:
            continue
        line = text.count("\n", 0, match.start("body"))       # the fence's line, 1-based
        skip = _SKIP_MARKER.search(match["comments"])
        reason = skip["reason"] if skip else ("run by .ci/run" if _CI_MARKER.search(match["comments"]) else None)
        found.append(Block(page, line, match["lang"], match["body"], reason))
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One cache for every page: later pages reuse the features and kernels of earlier ones."""
    return tmp_path_factory.mktemp("doc_examples_cache")


def _run(block: Block, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    if block.lang == "python":
        command = [sys.executable, "-c", block.code]
    else:
        code = re.sub(r"^\$ ", "", block.code, flags=re.M)
        command = ["bash", "-c", "set -eo pipefail\n" + code]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("page", [*NEWCOMER_PAGES, *(pytest.param(p, marks=pytest.mark.heavy) for p in GUIDE_PAGES)])
def test_examples_run_as_written(page, tmp_path, cache):
    write_tsv_dataset(tmp_path)
    env = {**os.environ, "KCCA_DESC_CACHE": str(cache),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("KCCA_DESC_FLICKR8K", None)     # the examples must not reach real data by accident
    for block in blocks(page):
        if block.skip is not None:
            continue
        run = _run(block, tmp_path, env)
        assert run.returncode == 0, (f"{block.id}: the {block.lang} example exits with {run.returncode}\n{block.code}\n"
                                     f"--- stdout\n{run.stdout[-3000:]}\n--- stderr\n{run.stderr[-3000:]}")


@pytest.mark.parametrize("block", [pytest.param(b, marks=pytest.mark.skip(reason=f"{b.id}: {b.skip}"), id=b.id)
                                   for b in ALL_BLOCKS if b.skip is not None])
def test_skipped_example(block):
    """Listed only: each skipped block with its reason (``pytest -rs``)."""


def test_skips_are_few_and_say_why():
    skipped = [b for b in ALL_BLOCKS if b.skip is not None and b.skip != "run by .ci/run"]
    unexplained = [f"{b.id}: {b.skip!r}" for b in skipped if not b.skip.startswith(SKIP_REASONS)]
    assert not unexplained, f"skip-test reasons must start with one of {SKIP_REASONS}: {unexplained}"
    assert len(skipped) <= MAX_SKIPPED, f"{len(skipped)} skipped examples: {[b.id for b in skipped]}"
    ci = [b for b in ALL_BLOCKS if b.skip == "run by .ci/run"]
    assert [b.page for b in ci] == ["README.md", "README.md"], "the README's two CI blocks must be found"


def test_every_page_has_an_example_that_runs():
    # A page whose examples are all skipped (or that has none) would pass the test above untested.
    runs = {b.page for b in ALL_BLOCKS if b.skip is None}
    assert not [p for p in PAGES if p not in runs and p != "docs/user_guide/index.md"]


def test_the_exit_code_table_is_the_toolkits():
    # The reliability page's table is what scripts test against: every code the toolkit exits with, no other.
    from kcca_desc._core.errors import EXIT_CODES
    from kcca_desc.cli.interrupts import INTERRUPT_EXIT_CODES

    text = (REPOSITORY / "docs" / "user_guide" / "reliability.md").read_text()
    table = re.search(r"```text\nexit  meaning\n(.*?)```", text, re.S)
    assert table, "docs/user_guide/reliability.md has no exit-code table"
    documented = {int(code) for code in re.findall(r"^(\d+) ", table[1], re.M)}   # not the continuation lines
    # 0: success; 1: a bug (the traceback); the rest are raised by the error classes and the interrupts.
    assert documented == {0, 1, *EXIT_CODES.values(), *INTERRUPT_EXIT_CODES.values()}
