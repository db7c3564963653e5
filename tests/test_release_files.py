"""The release files: licence, citation, changelog and the one version string."""

from __future__ import annotations

import configparser
import hashlib
import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kcca_desc

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = Path(__file__).parent / "data" / "cff_1.2.0_schema.json"
# The vendored schema as cffconvert 2.0.0 ships it (tests/data/cff_1.2.0_schema.NOTICE.md).
SCHEMA_SHA256 = "0b8d22140da702d766df318dcff3a91af2f39521298dcf36d76315fd99cc169b"


def _setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser(interpolation=None)
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    return config


def _citation() -> dict:
    yaml = pytest.importorskip("yaml", reason="PyYAML (extra test) reads CITATION.cff")
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


# ------------------------------------------------------------------ version
def test_the_version_is_written_once_and_installed():
    assert _setup_cfg()["metadata"]["version"] == "attr: kcca_desc.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", kcca_desc.__version__)
    assert importlib.metadata.version("kcca_desc") == kcca_desc.__version__


def test_the_build_reads_the_version_without_importing_the_toolkit():
    # numpy made unimportable: setuptools must read the assignment from the source, as an
    # isolated build environment (no numpy in it) needs.
    code = ("import sys; sys.modules['numpy'] = None\n"
            "from setuptools.config.setupcfg import read_configuration\n"
            "print(read_configuration('setup.cfg')['metadata']['version'])\n"
            "assert 'kcca_desc' not in sys.modules\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == kcca_desc.__version__


# ------------------------------------------------------------------ licence
def test_the_licence_file_is_the_declared_bsd_3_clause():
    metadata = _setup_cfg()["metadata"]
    assert metadata["license"] == "BSD-3-Clause" and metadata["license_files"] == "LICENSE"
    text = " ".join((ROOT / "LICENSE").read_text(encoding="utf-8").split())
    assert text.startswith("BSD 3-Clause License Copyright (c) ")
    assert "the kcca_desc developers" in text
    # The three conditions and the disclaimer of the SPDX BSD-3-Clause text.
    for clause in ("1. Redistributions of source code must retain the above copyright notice",
                   "2. Redistributions in binary form must reproduce the above copyright notice",
                   "3. Neither the name of the copyright holder nor the names of its contributors may be "
                   "used to endorse or promote products derived from this software without specific prior "
                   "written permission.",
                   'THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"'):
        assert clause in text
    assert "4." not in text  # not the four-clause licence


# ------------------------------------------------------------------ citation
def test_citation_cff_is_valid_cff_1_2():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (extra test) validates CITATION.cff")
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    citation = _citation()
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(citation)]
    assert not errors, "\n".join(errors)


def test_the_schema_rejects_a_citation_without_authors():
    # The validation above can fail: the same schema refuses a citation missing a required key.
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (extra test) validates CITATION.cff")
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    citation = {key: value for key, value in _citation().items() if key != "authors"}
    assert not jsonschema.Draft7Validator(schema).is_valid(citation)


def test_citation_cites_this_version_and_the_seed_papers():
    citation = _citation()
    assert citation["version"] == kcca_desc.__version__
    assert citation["license"] == _setup_cfg()["metadata"]["license"]
    years = {ref["authors"][0]["family-names"]: ref["year"] for ref in citation["references"]}
    assert years == {"Hodosh": 2013, "Kiros": 2014, "Merkx": 2019, "Rei": 2017, "Lopez de Lacalle": 2020}
    hodosh = citation["references"][0]
    assert hodosh["journal"] == "Journal of Artificial Intelligence Research" and hodosh["volume"] == 47


# ------------------------------------------------------------------ changelog
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_changelog_follows_keep_a_changelog():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n") and "https://keepachangelog.com/" in text
    releases = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, flags=re.MULTILINE)
    names = [name for name, _ in releases]
    assert names[0] == "Unreleased" and kcca_desc.__version__ in names
    assert all(date for name, date in releases if name != "Unreleased")
    # Every other level-2 heading is a release; every level-3 heading is a kind of change.
    assert len(re.findall(r"^## ", text, flags=re.MULTILINE)) == len(releases)
    assert set(re.findall(r"^### (.+)$", text, flags=re.MULTILINE)) <= KINDS
    # Each release has a link reference at the foot of the file.
    for name in names:
        assert re.search(rf"^\[{re.escape(name)}\]: https://", text, flags=re.MULTILINE), name
