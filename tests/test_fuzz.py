"""Fuzzing the data a user brings: every input gives a data set or a clear toolkit error, never a crash.

Random and adversarial TSV files (random bytes, latin-1, UTF-16, BOM, CRLF, NUL, very long lines,
missing and extra columns), Flickr8K caption files, Karpathy-style JSON (wrong types, duplicate
ids, captions that are numbers, deep nesting) and random bytes as images.  The accepted outcomes:
a :class:`~kcca_desc.data.Dataset` whose every caption is a non-empty string, or a
:class:`~kcca_desc._core.errors.DataError` (which the command line prints as one line); any other
exception fails the test.  Each test counts its cases, and the session's terminal summary states
how many were tried (``fuzz: N cases tried``).  The ``long`` variants (``-m heavy``) try 30 times
as many.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcca_desc.data import FileImages, decode_image_file, load_flickr8k, load_karpathy_json, load_tsv
from kcca_desc.data.checks import check_dataset, settle_problems
from kcca_desc.data.flickr8k import CAPTION_FILES, SPLIT_FILES
from kcca_desc.data.problems import ProblemLog
from kcca_desc._core.errors import DataError

VARIANTS = [pytest.param(60, id="quick"), pytest.param(1800, id="long", marks=pytest.mark.heavy)]


def fuzz(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def accepted(load, *args, **kwargs):
    """Run a loader: a well-formed data set or a DataError; anything else propagates and fails."""
    try:
        data = load(*args, **kwargs)
    except DataError as exc:
        assert str(exc).strip(), "an error must say what is wrong"
        return None
    for captions in data.captions:
        assert captions and all(isinstance(c, str) and c.strip() for c in captions)
    return data


# Characters that break naive parsers: separators, line ends of every kind, NUL, BOM, emoji, CJK, markup.
NASTY = st.sampled_from(["\t", "\n", "\r", "\r\n", "\x00", "\ufeff", "\u2028", "\x85", "\x0c", "#", "é", "😀",
                         "中文", "<b>", "&amp;", "'", '"', "\\", " ", "0", "train", "dev", "test", "val", "x.png"])
FIELD = st.one_of(st.text(max_size=12), st.lists(NASTY, max_size=6).map("".join),
                  st.integers(1, 5000).map(lambda n: "word " * n))
LINE = st.lists(FIELD, min_size=0, max_size=5).map("\t".join)
ENCODING = st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16", "cp1252"])
NEWLINE = st.sampled_from(["\n", "\r\n", "\r"])


def _write(folder: Path, name: str, data: bytes) -> Path:
    (folder / name).write_bytes(data)
    return folder / name


def _encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


@pytest.mark.parametrize("examples", VARIANTS)
def test_random_bytes_as_a_tsv_file(examples, fuzz_cases):
    @fuzz(examples)
    @given(st.binary(max_size=2000))
    def run(blob):
        fuzz_cases["tsv random bytes"] += 1
        with tempfile.TemporaryDirectory() as folder:
            accepted(load_tsv, _write(Path(folder), "d.tsv", blob))

    run()


@pytest.mark.parametrize("examples", VARIANTS)
def test_tsv_lines_in_odd_encodings_columns_and_line_ends(examples, fuzz_cases):
    @fuzz(examples)
    @given(st.lists(LINE, max_size=8), ENCODING, NEWLINE, st.booleans())
    def run(lines, encoding, newline, header):
        fuzz_cases["tsv lines"] += 1
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            (folder / "x.png").write_bytes(b"any bytes: the loader does not decode")
            text = newline.join((["image_path\tcaption\tsplit"] if header else []) + lines)
            data = accepted(load_tsv, _write(folder, "d.tsv", _encode(text, encoding)))
            if data is not None:
                assert all(path.is_file() for path in data.images.paths)

    run()


@pytest.mark.parametrize("examples", VARIANTS)
def test_well_formed_tsv_with_odd_captions_loads_them_as_written(examples, fuzz_cases):
    """Emoji, CJK, markup, digits, 2,000-word captions: kept exactly (less surrounding spaces)."""
    caption = st.one_of(st.lists(NASTY.filter(lambda c: c not in "\t\n\r\r\n\x85\u2028\x0c"), min_size=1,
                                 max_size=8).map("".join),
                        st.integers(1, 2000).map(lambda n: " ".join(["word"] * n)),
                        st.integers().map(str)).filter(lambda c: c.strip())

    @fuzz(examples)
    @given(st.lists(caption, min_size=1, max_size=6))
    def run(captions):
        fuzz_cases["tsv odd captions"] += 1
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            (folder / "x.png").write_bytes(b"x")
            path = _write(folder, "d.tsv", "".join(f"x.png\t{c}\ttrain\n" for c in captions).encode("utf-8"))
            data = load_tsv(path)
            assert data.captions == ((*(c.strip() for c in captions),),)

    run()


@pytest.mark.parametrize("examples", VARIANTS)
def test_random_flickr8k_caption_and_split_files(examples, fuzz_cases):
    token = st.lists(st.one_of(LINE, st.tuples(st.sampled_from(["a.jpg", "b.jpg", "zz.jpg"]), st.integers(-1, 6),
                                                FIELD).map(lambda t: f"{t[0]}#{t[1]}\t{t[2]}")), max_size=12)
    split = st.lists(st.sampled_from(["a.jpg", "b.jpg", "zz.jpg", "", "a.jpg b.jpg"]), max_size=3)

    @fuzz(examples)
    @given(token, split, split, ENCODING)
    def run(lines, train, test, encoding):
        fuzz_cases["flickr8k files"] += 1
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / "images").mkdir()
            for name in ("a.jpg", "b.jpg"):
                (root / "images" / name).write_bytes(b"x")
            _write(root, CAPTION_FILES["raw"], _encode("\n".join(lines), encoding))
            for name, listed in (("train", train), ("dev", []), ("test", test)):
                _write(root, SPLIT_FILES[name], "\n".join(listed).encode())
            accepted(load_flickr8k, root)

    run()


JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | FIELD,
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(FIELD, inner, max_size=4),
                          max_leaves=20)
ITEM = st.one_of(
    JSON_VALUE,
    st.fixed_dictionaries(
        {"filename": st.one_of(st.sampled_from(["a.jpg", "b.jpg", "zz.jpg", "", "/a.jpg"]), JSON_VALUE)},
        optional={"filepath": st.one_of(st.just(""), JSON_VALUE),
                  "split": st.one_of(st.sampled_from(["train", "restval", "val", "test", "holdout"]), JSON_VALUE),
                  "sentences": st.one_of(st.lists(st.one_of(st.fixed_dictionaries({"raw": FIELD}),
                                                            st.fixed_dictionaries({"raw": JSON_VALUE}), JSON_VALUE),
                                                  max_size=4), JSON_VALUE),
                  "imgid": JSON_VALUE}),
)


@pytest.mark.parametrize("examples", VARIANTS)
def test_adversarial_karpathy_json(examples, fuzz_cases):
    document = st.one_of(st.fixed_dictionaries({"images": st.lists(ITEM, max_size=6)},
                                               optional={"dataset": JSON_VALUE}), JSON_VALUE)

    @fuzz(examples)
    @given(document)
    def run(doc):
        fuzz_cases["karpathy json"] += 1
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            for name in ("a.jpg", "b.jpg"):
                (folder / name).write_bytes(b"x")
            accepted(load_karpathy_json, _write(folder, "d.json", json.dumps(doc).encode()), folder)

    run()


@pytest.mark.parametrize("depth", [50, 10_000, 200_000])
def test_deeply_nested_and_broken_json_is_a_clear_error(tmp_path, fuzz_cases, depth):
    fuzz_cases["karpathy json"] += 1
    path = _write(tmp_path, "deep.json", ("[" * depth + "]" * depth).encode())
    with pytest.raises(DataError, match='expected an object with an "images" list|nested too deeply'):
        load_karpathy_json(path, tmp_path)


@pytest.mark.filterwarnings("ignore:.*skipped the bad items")
@pytest.mark.parametrize("examples", VARIANTS)
def test_random_bytes_as_images(examples, fuzz_cases):
    """The check before any work and the decoder agree on every file; the checked run then settles."""
    header = st.sampled_from([b"", b"\xff\xd8\xff\xe0", b"\x89PNG\r\n\x1a\n", b"GIF89a", b"BM", b"RIFF"])

    @fuzz(examples)
    @given(header, st.binary(max_size=600), st.booleans())
    def run(start, blob, skip):
        fuzz_cases["image bytes"] += 1
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            image = _write(folder, "x.img", start + blob)
            problem = FileImages([image]).check(0)
            try:
                decode_image_file(image)
                decoded = True
            except DataError:
                decoded = False
            assert decoded == (problem is None), problem
            tsv = _write(folder, "d.tsv", b"x.img\ta caption\ttrain\n")
            problems = ProblemLog()
            data = load_tsv(tsv, problems=problems)
            check_dataset(data, problems, splits={"train": "fit"})
            try:
                kept = settle_problems(data, problems, skip_bad_items=skip)
                assert len(kept) == int(decoded)
            except DataError:
                assert not decoded and not skip

    run()
