"""Flickr8K loader: the real data (when present) and every bad-input case on small files."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc._core.errors import MissingDataFileError
from kcca_desc.data import DataFormatError, load_flickr8k, problems
from kcca_desc.data.flickr8k import CAPTION_FILES, FLICKR8K_ENV, SPLIT_FILES

SPURIOUS = "2258277193_586949ec62.jpg.1"


def write_flickr8k(root: Path, captions: dict[str, list[str]], splits: dict[str, list[str]],
                   extra_token_lines: tuple[str, ...] = ()) -> Path:
    """Write a miniature Flickr8K directory (image files are placeholders: loading never decodes)."""
    (root / "images").mkdir(parents=True, exist_ok=True)
    for image_id in captions:
        (root / "images" / image_id).write_bytes(b"not decoded by the loader")
    lines = [f"{image_id}#{k}\t{c}" for image_id, caps in captions.items() for k, c in enumerate(caps)]
    lines += extra_token_lines
    for file_name in CAPTION_FILES.values():
        (root / file_name).write_text("\n".join(lines) + "\n")
    for split, file_name in SPLIT_FILES.items():
        (root / file_name).write_text("".join(f"{image_id}\n" for image_id in splits.get(split, [])))
    return root


def mini_captions(n: int = 6) -> dict[str, list[str]]:
    return {f"{i:04d}_ab.jpg": [f"caption {k} of image {i} ." for k in range(5)] for i in range(n)}


MINI_SPLITS = {"train": ["0001_ab.jpg", "0000_ab.jpg"], "dev": ["0002_ab.jpg", "0003_ab.jpg"], "test": ["0004_ab.jpg"]}


@pytest.fixture
def mini(tmp_path) -> Path:
    return write_flickr8k(tmp_path / "f8k", mini_captions(), MINI_SPLITS)


# ---------------------------------------------------------------- good input
def test_mini_loads_sorted_with_splits_and_unsplit_image(mini):
    data = load_flickr8k(mini)
    assert data.name == "flickr8k"
    assert data.image_ids == tuple(sorted(mini_captions()))
    assert data.captions[3] == tuple(f"caption {k} of image 3 ." for k in range(5))
    assert [data.image_ids[i] for i in data.splits["train"]] == MINI_SPLITS["train"]
    assert [data.image_ids[i] for i in data.splits["dev"]] == MINI_SPLITS["dev"]
    in_split = {int(i) for idx in data.splits.values() for i in idx}
    assert set(range(len(data))) - in_split == {data.index_of("0005_ab.jpg")}
    assert data.hodosh_caption == 2
    assert data.images.paths[0] == mini / "images" / "0000_ab.jpg"


def test_captions_may_appear_in_any_order(tmp_path):
    root = write_flickr8k(tmp_path, mini_captions(2), {"train": ["0000_ab.jpg"]})
    token = root / CAPTION_FILES["raw"]
    token.write_text("\n".join(reversed(token.read_text().splitlines())))
    assert load_flickr8k(root).captions[0][0] == "caption 0 of image 0 ."


def test_lemma_file_is_read_when_asked(mini):
    (mini / CAPTION_FILES["lemma"]).write_text(
        "\n".join(f"{i:04d}_ab.jpg#{k}\tlemma {k}" for i in range(6) for k in range(5))
    )
    assert load_flickr8k(mini, captions="lemma").captions[0][1] == "lemma 1"
    assert load_flickr8k(mini, captions="raw").captions[0][1] == "caption 1 of image 0 ."


def test_root_from_environment(mini, monkeypatch):
    monkeypatch.setenv(FLICKR8K_ENV, str(mini))
    assert len(load_flickr8k()) == 6


def test_spurious_entry_is_skipped_with_a_warning(tmp_path):
    extra = tuple(f"{SPURIOUS}#{k}\tpeople waiting {k}" for k in range(5))
    root = write_flickr8k(tmp_path, mini_captions(3), {"train": ["0000_ab.jpg"]}, extra)
    with pytest.warns(UserWarning, match=SPURIOUS.replace(".", r"\.")):
        data = load_flickr8k(root)
    assert SPURIOUS not in data.image_ids and len(data) == 3


def test_no_warning_without_the_spurious_entry(mini):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_flickr8k(mini)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1)
                         .filter(lambda s: s.strip() == s and s), min_size=1, max_size=5),
                min_size=1, max_size=4))
def test_captions_round_trip(tmp_path_factory, caption_lists):
    captions = {f"img{i}.jpg": caps for i, caps in enumerate(caption_lists)}
    root = write_flickr8k(tmp_path_factory.mktemp("rt"), captions, {"train": list(captions)})
    data = load_flickr8k(root)
    assert data.captions == tuple(tuple(captions[i]) for i in data.image_ids)


# ---------------------------------------------------------------- bad input
def test_no_root_says_how_to_point_at_the_data(monkeypatch):
    monkeypatch.delenv(FLICKR8K_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match=FLICKR8K_ENV):
        load_flickr8k()


def test_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_flickr8k(tmp_path / "nowhere")


def test_a_file_for_the_directory_names_the_folder_to_give(mini):
    token = mini / CAPTION_FILES["raw"]
    with pytest.raises(MissingDataFileError, match=rf"{re.escape(str(token))} is a file, not a directory: give the "
                                                   rf"directory holding .* \(for this file, {re.escape(str(mini))}\)"):
        load_flickr8k(token)


def test_a_directory_without_the_release_says_what_belongs_in_it(mini):
    # The folder above the data: the first file missed ("images/ not found") would not say why.
    with pytest.raises(MissingDataFileError, match=rf"{re.escape(str(mini.parent))} is not a Flickr8K directory: "
                                                   rf"none of {re.escape(CAPTION_FILES['raw'])}, .* and images/"):
        load_flickr8k(mini.parent)


@pytest.mark.parametrize("file_name", [CAPTION_FILES["raw"], SPLIT_FILES["dev"], "images"])
def test_missing_file(mini, file_name):
    path = mini / file_name
    if path.is_dir():
        for f in path.iterdir():
            f.unlink()
        path.rmdir()
    else:
        path.unlink()
    with pytest.raises(FileNotFoundError, match=file_name.replace(".", r"\.")):
        load_flickr8k(mini)


def test_unknown_captions_option(mini):
    with pytest.raises(ValueError, match="captions must be one of"):
        load_flickr8k(mini, captions="stemmed")


def _corrupt_token_line(root: Path, line_number: int, new_line: str) -> None:
    token = root / CAPTION_FILES["raw"]
    lines = token.read_text().splitlines()
    lines[line_number - 1] = new_line
    token.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("bad_line, message", [
    ("0000_ab.jpg#2 no tab here", "expected 2 tab-separated fields"),
    ("0000_ab.jpg#2\ta\tb", "expected 2 tab-separated fields"),
    ("0000_ab.jpg\tno caption number", "not of the form IMAGE#N"),
    ("0000_ab.jpg#two\tword number", "not of the form IMAGE#N"),
    ("0000_ab.jpg#\u00b2\tnon-ASCII digit", "not of the form IMAGE#N"),
    ("0000_ab.jpg#2\t   ", "caption 0000_ab.jpg#2 is empty"),
    ("0000_ab.jpg#0\tsecond caption #0", r"duplicate caption id 0000_ab.jpg#0 \(first seen on line 1\)"),
    ("0000_ab.jpg#00\tsame number", r"duplicate caption id 0000_ab.jpg#00 \(first seen on line 1\)"),
    ("9999_zz.jpg#0\tno such image", "image '9999_zz.jpg' has no file"),
])
def test_malformed_caption_line_names_file_and_line(mini, bad_line, message):
    _corrupt_token_line(mini, 3, bad_line)
    with pytest.raises(DataFormatError, match=message) as info:
        load_flickr8k(mini)
    # The bad line is the first problem reported (a line that names no image also leaves a gap in
    # some image's caption numbers, reported after it).
    first = info.value.problems[0] if info.value.problems else str(info.value)
    assert f"{CAPTION_FILES['raw']}, line 3: " in first and re.search(message, first)
    assert info.value.line == (None if info.value.problems else 3)


def test_caption_numbers_with_a_gap(mini):
    _corrupt_token_line(mini, 5, "0000_ab.jpg#7\tseven")
    with pytest.raises(DataFormatError, match=r"'0000_ab.jpg' has captions numbered \[0, 1, 2, 3, 7\]"):
        load_flickr8k(mini)


def test_invalid_utf8_names_the_line(mini):
    token = mini / CAPTION_FILES["raw"]
    token.write_bytes(token.read_bytes().replace(b"caption 1 of image 1", b"caption \xff of image 1"))
    with pytest.raises(DataFormatError, match=r"line 7: not valid UTF-8"):
        load_flickr8k(mini)


@pytest.mark.parametrize("split_lines, message, line", [
    (["0004_ab.jpg", "9999_zz.jpg"], "unknown image '9999_zz.jpg'", 2),
    (["0004_ab.jpg", "", "0004_ab.jpg"], r"listed twice \(first on line 1\)", 3),
    (["0004_ab.jpg two names"], "expected 1 white-space-separated fields", 1),
    (["0002_ab.jpg"], "'0002_ab.jpg' is also in split 'dev'", 1),
])
def test_bad_split_file_names_file_and_line(mini, split_lines, message, line):
    (mini / SPLIT_FILES["test"]).write_text("\n".join(split_lines) + "\n")
    with pytest.raises(DataFormatError, match=message) as info:
        load_flickr8k(mini)
    assert f"{SPLIT_FILES['test']}, line {line}:" in str(info.value)


# ---------------------------------------------------------------- the real data
@pytest.fixture(scope="module")
def flickr8k(flickr8k_root):
    problems.forget_data_warnings()  # module-scoped: set up before conftest's per-test reset of shown warnings
    with pytest.warns(UserWarning, match=SPURIOUS.replace(".", r"\.")):
        return load_flickr8k(flickr8k_root)


@pytest.mark.flickr8k
def test_real_counts(flickr8k):
    assert len(flickr8k) == 8091
    assert {s: len(i) for s, i in flickr8k.splits.items()} == {"train": 6000, "dev": 1000, "test": 1000}
    in_split = {int(i) for idx in flickr8k.splits.values() for i in idx}
    assert len(in_split) == 8000 and len(flickr8k) - len(in_split) == 91
    assert all(len(c) == 5 for c in flickr8k.captions)
    assert SPURIOUS not in flickr8k.image_ids


@pytest.mark.flickr8k
def test_real_lemma_captions_align_with_raw(flickr8k_root, flickr8k):
    lemma = load_flickr8k(flickr8k_root, captions="lemma")  # this copy lacks the spurious entry
    assert lemma.image_ids == flickr8k.image_ids
    i = flickr8k.index_of("1000268201_693b08cb0e.jpg")
    assert flickr8k.captions[i][0].startswith("A child in a pink dress is climbing")
    assert lemma.captions[i][0].startswith("A child in a pink dress be climb")
