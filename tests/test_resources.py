"""Memory guards: work that cannot fit is refused up front, with what it needs and what to do."""

from __future__ import annotations

import numpy as np
import pytest

from kcca_desc._core import resources
from kcca_desc._core.errors import EXIT_CODES, InsufficientMemoryError
from kcca_desc.kcca import KCCA
from kcca_desc.methods import ImageSentenceRanker
from kcca_desc._core.resources import available_memory, format_bytes, require_memory
from toys import make_dataset


@pytest.fixture
def small_machine(monkeypatch):
    """A machine with 1 MB of memory available."""
    monkeypatch.setattr(resources, "available_memory", lambda: 1_000_000)


def test_available_memory_is_read_from_the_system():
    available = available_memory()
    assert available is None or 0 < available < 1 << 50


def test_require_memory_says_what_needs_how_much_and_what_to_do(small_machine):
    require_memory(100_000, "a small step", "nothing")
    with pytest.raises(InsufficientMemoryError, match=r"a big step needs about 5\.0 MB of memory, but this machine "
                                                      r"has 1\.0 MB available: use less"):
        require_memory(5e6, "a big step", "use less")
    assert EXIT_CODES[InsufficientMemoryError] == 71 and issubclass(InsufficientMemoryError, MemoryError)


def test_format_bytes():
    assert [format_bytes(n) for n in (512, 1500, 2.5e9, 3e12)] == ["512 B", "1.5 kB", "2.5 GB", "3.0 TB"]


def test_ranker_refuses_training_kernels_that_cannot_fit_before_any_feature(small_machine, monkeypatch):
    train = make_dataset(n=400).subset("train")
    monkeypatch.setattr(train.images, "load", lambda i: pytest.fail("an image was read before the memory check"))
    with pytest.raises(InsufficientMemoryError, match="training kernels of .* images.*fewer images"):
        ImageSentenceRanker(n_components=(4,), regs=(1.0,), cache=False).fit(train)


def test_exact_kcca_refuses_what_cannot_fit_and_points_to_the_low_rank_solver(small_machine):
    K = np.eye(300)
    with pytest.raises(InsufficientMemoryError, match="exact KCCA solver on 300 items.*method='lowrank'"):
        KCCA(n_components=2, method="exact").fit(K, K)


def test_the_command_line_stops_with_one_line_and_exit_code_71(monkeypatch, capsys):
    from kcca_desc.cli.fit import main

    monkeypatch.setattr(resources, "available_memory", lambda: 1_000)  # below the Grams of 36 images

    assert main(["--n-images", "60", "--n-components", "4", "--regs", "1", "--quiet"]) == 71
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if line.startswith("error:")] == [err[-1]]
    assert "needs about" in err[-1] and "Traceback" not in "\n".join(err)
