"""Logs that speak at the right moments: the PSD warning's threshold, watched stages, counts that
add up, no print in the library, the encoder libraries' bars switched off, the user's level."""

import ast
import io
import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from test_progress import loud  # noqa: F401  (the fixture)

import kcca_desc
from kcca_desc._core import progress as progress_module
from kcca_desc._core.progress import progress, watched_stage
from kcca_desc.data import ArrayImages
from kcca_desc.image.features import ImageFeaturizer
from kcca_desc.kcca.spectral import INDEFINITE_SHARE_TOLERANCE, spectrum_from_kernel

PACKAGE = Path(kcca_desc.__file__).parent


def _kernel_with_negative_share(share: float, n: int = 30, seed: int = 0) -> np.ndarray:
    """A symmetric kernel whose two negative eigenvalues hold ``share`` of its absolute eigenvalue mass."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    positive = np.linspace(1.0, 10.0, n - 2)
    negative = -share / (1 - share) * positive.sum() / 2 * np.ones(2)
    return (U * np.concatenate([positive, negative])) @ U.T


def _psd_warnings(K):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        spectrum = spectrum_from_kernel(K.copy(), name="the test kernel")
    return spectrum, [str(w.message) for w in record if "positive semi-definite" in str(w.message)]


def test_a_negligible_negative_part_is_only_logged(caplog):
    with caplog.at_level(logging.DEBUG, logger="kcca_desc.kcca"):
        spectrum, shown = _psd_warnings(_kernel_with_negative_share(INDEFINITE_SHARE_TOLERANCE / 10))
    assert spectrum.n_negative == 2  # detected, within the tolerance
    assert spectrum.negative_share == pytest.approx(INDEFINITE_SHARE_TOLERANCE / 10)
    assert shown == []
    assert any("the test kernel" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)


def test_a_real_negative_mass_warns_once_naming_the_kernel():
    _, shown = _psd_warnings(_kernel_with_negative_share(INDEFINITE_SHARE_TOLERANCE * 10))
    assert len(shown) == 1
    assert shown[0].startswith("the test kernel is not positive semi-definite: 2 of its eigenvalues")


def test_a_watched_stage_speaks_only_when_long(loud, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "_WATCH_POLL", 0.01)
    with watched_stage("instant step", after=0.5):
        pass
    assert capsys.readouterr().err == ""
    with watched_stage("long step", after=0.05):
        time.sleep(0.3)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert "long step: running, 0 s so far ..." in err[0] and "long step: done in 0." in err[1]


def test_the_innermost_watched_stage_speaks(loud, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "_WATCH_POLL", 0.01)
    with watched_stage("outer", after=0.05):
        with watched_stage("inner", after=0.05):
            time.sleep(0.3)
    err = capsys.readouterr().err
    assert "inner: running" in err and "inner: done in" in err and "outer" not in err


def _bar_inside_a_stage(capsys, n: int, pause: float, after: float) -> str:
    """Standard error of a loop of ``n`` items of ``pause`` seconds, shown by a bar, in a watched stage."""
    with watched_stage("outer", after=after):
        for _ in progress(range(n), desc="inner", unit="row"):
            time.sleep(pause)
    return capsys.readouterr().err


def test_a_watched_stage_stays_quiet_while_a_bar_shows_its_loop(loud, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "_WATCH_POLL", 0.01)
    err = _bar_inside_a_stage(capsys, 10, 0.03, after=0.05)
    assert "inner: done, 10 rows" in err and "outer" not in err
    # A bar whose items finish speaks alone, a line per interval ...
    monkeypatch.setattr(progress_module, "_LOG_INTERVAL", 0.1)
    err = _bar_inside_a_stage(capsys, 20, 0.02, after=0.5)
    assert "/20 rows" in err and "outer" not in err
    # ... a bar stuck on one long item gets the stage's line after the interval and ``after``.
    err = _bar_inside_a_stage(capsys, 1, 0.4, after=0.05)
    assert "outer: running" in err and "outer: done in" in err

def test_the_kcca_desc_level_chosen_by_the_user_silences_progress(loud, capsys):
    parent = logging.getLogger("kcca_desc")
    before = parent.level
    parent.setLevel(logging.WARNING)
    try:
        list(progress(range(3), desc="hidden"))
    finally:
        parent.setLevel(before)
    list(progress(range(3), desc="shown"))
    err = capsys.readouterr().err
    assert "hidden" not in err and "shown: done, 3 its" in err


def test_the_image_count_adds_up_over_chunks(loud, caplog):
    rng = np.random.default_rng(0)
    images = ArrayImages(
        [rng.integers(0, 256, (24, 24, 3), dtype=np.uint8) for _ in range(7)], [f"i{k}" for k in range(7)])
    featurizer = ImageFeaturizer(feature_types=("colour",), n_words={"colour": 4}, levels=1, pixel_step=4,
                                 max_samples=20, max_iter=5, n_jobs=1, chunk_size=3, cache=False)
    with caplog.at_level(logging.INFO, logger="kcca_desc.progress"):
        featurizer.fit_transform(images)
    done = [r.getMessage() for r in caplog.records if ": done, " in r.getMessage()]
    assert any(m.startswith("image features (colour): done, 7 images") for m in done), done
    assert any(m.startswith("codebook k-means: done, 1 codebook") for m in done), done


def _prints(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), str(path))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"]


def test_no_print_in_the_library_outside_the_command_line():
    sources = [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts]
    sources += list((PACKAGE.parent / "kernels").rglob("*.py"))
    assert len(sources) > 50
    assert {str(p): lines for p in sources if (lines := _prints(p))} == {}


def test_the_encoder_libraries_bars_are_off_while_an_encoder_runs(capfd):
    hub = pytest.importorskip("huggingface_hub.utils")
    from kcca_desc.adapters.torch_base import third_party_bars_off

    def fake_download():
        for _ in hub.tqdm(range(3), desc="fake download", mininterval=0):
            pass

    assert not hub.are_progress_bars_disabled()
    with third_party_bars_off():
        fake_download()
    assert "fake download" not in capfd.readouterr().err
    assert not hub.are_progress_bars_disabled()  # restored
    fake_download()
    assert "fake download" in capfd.readouterr().err


def test_a_bar_another_library_left_open_does_not_silence_a_watched_stage(loud, capsys, monkeypatch):
    from tqdm import tqdm

    monkeypatch.setattr(progress_module, "_WATCH_POLL", 0.01)
    leaked = tqdm(total=3, disable=False, file=io.StringIO())  # never closed, as a careless library leaves it
    try:
        with watched_stage("long step", after=0.05):
            time.sleep(0.3)
        assert "long step: running" in capsys.readouterr().err
    finally:
        leaked.close()


def test_a_bar_left_open_and_idle_does_not_silence_a_watched_stage(loud, capsys, monkeypatch):
    monkeypatch.setattr(progress_module, "_WATCH_POLL", 0.01)
    monkeypatch.setattr(progress_module, "_LOG_INTERVAL", 0.1)
    idle = progress_module.progress_bar(total=5, desc="left open", unit="row")  # never advanced nor closed
    time.sleep(0.15)  # idle longer than a bar's interval: stuck, or forgotten
    capsys.readouterr()
    with watched_stage("long step", after=0.05):
        time.sleep(0.3)
    assert "long step: running" in capsys.readouterr().err
    idle.close()


def test_the_verbose_log_has_one_format(tmp_path):
    # -v mixed "2026-11-30 20:06:56,679 kcca_desc.stages: stage: ..." with "20:06:59 KCCA solves ...".
    import os
    import re
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "kcca_desc.fit", "--n-images", "40", "--method", "nn", "--nn-text",
                           "f1", "--levels", "1", "--colour-words", "8", "--texture-words", "8", "--sift-words", "8",
                           "--no-cache", "-v"], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)})
    assert done.returncode == 0, done.stderr
    stamped = [line for line in done.stderr.splitlines() if re.match(r"\d", line)]
    assert any(line.endswith("stage: data loading") for line in stamped)  # a log line of the stages
    assert any("image features" in line and "started" in line for line in stamped)  # a progress line
    # The profile table's rows start with a stage name: every line that starts with a digit is a timestamp.
    assert all(re.match(r"\d\d:\d\d:\d\d [^\d]", line) for line in stamped), stamped
