"""Shared fixtures: the real Flickr8K data (skipped when absent) and an isolated cache."""

import os
import tempfile
from pathlib import Path

import pytest

# Tests never touch the user's cache.
os.environ["KCCA_DESC_CACHE"] = tempfile.mkdtemp(prefix="kcca_desc_test_cache_")

_DEFAULT_FLICKR8K = Path(__file__).resolve().parents[2] / "shared" / "flickr8k"


def flickr8k_path() -> Path | None:
    root = Path(os.environ.get("KCCA_DESC_FLICKR8K", _DEFAULT_FLICKR8K))
    return root if (root / "Flickr8k.token.txt").is_file() else None


@pytest.fixture(scope="session")
def flickr8k_root() -> Path:
    """Directory of the real Flickr8K files; the test is skipped when it is absent."""
    root = flickr8k_path()
    if root is None:
        pytest.skip("Flickr8K data not found (set KCCA_DESC_FLICKR8K)")
    return root
