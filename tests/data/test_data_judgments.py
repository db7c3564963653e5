"""Expert and CrowdFlower judgment loaders: round trips, every bad-input case, the real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcca_desc.data import (
    DataFormatError,
    load_crowdflower_annotations,
    load_expert_annotations,
    load_flickr8k,
    load_flickr8k_judgments,
)

GOOD_EXPERT = "a.jpg\ta.jpg#2\t4\t4\t3\na.jpg\tb.jpg#2\t1\t1\t2\n\nb.jpg\ta.jpg#2\t2\t1\t1\n"
GOOD_CROWD = "a.jpg\ta.jpg#2\t1\t3\t0\na.jpg\tb.jpg#2\t0.333333333333333\t1\t2\nb.jpg\tb.jpg#2\t0.75\t3\t1\n"


def write(tmp_path: Path, text: str, name: str = "judgments.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_expert_good_file(tmp_path):
    scores = load_expert_annotations(write(tmp_path, GOOD_EXPERT))
    assert scores == {
        ("a.jpg", "a.jpg#2"): (4, 4, 3),
        ("a.jpg", "b.jpg#2"): (1, 1, 2),
        ("b.jpg", "a.jpg#2"): (2, 1, 1),
    }
    assert all(type(v) is int for values in scores.values() for v in values)


def test_crowdflower_good_file(tmp_path):
    scores = load_crowdflower_annotations(write(tmp_path, GOOD_CROWD))
    assert list(scores) == [("a.jpg", "a.jpg#2"), ("a.jpg", "b.jpg#2"), ("b.jpg", "b.jpg#2")]
    assert scores[("a.jpg", "a.jpg#2")] == (1.0, 3, 0)
    pct, n_yes, n_no = scores[("a.jpg", "b.jpg#2")]
    assert (n_yes, n_no) == (1, 2) and pct == pytest.approx(1 / 3)


pairs = st.tuples(st.from_regex(r"[a-z0-9_]{1,8}\.jpg", fullmatch=True),
                  st.from_regex(r"[a-z0-9_]{1,8}\.jpg#[0-4]", fullmatch=True))


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(pairs, st.tuples(*[st.integers(1, 4)] * 3), max_size=20))
def test_expert_round_trip(tmp_path_factory, expected):
    text = "".join(f"{i}\t{c}\t{a}\t{b}\t{d}\n" for (i, c), (a, b, d) in expected.items())
    assert load_expert_annotations(write(tmp_path_factory.mktemp("e"), text)) == expected


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(pairs, st.tuples(st.integers(0, 9), st.integers(0, 9)).filter(sum), max_size=20))
def test_crowdflower_round_trip(tmp_path_factory, counts):
    text = "".join(f"{i}\t{c}\t{y / (y + n)!r}\t{y}\t{n}\n" for (i, c), (y, n) in counts.items())
    loaded = load_crowdflower_annotations(write(tmp_path_factory.mktemp("c"), text))
    assert loaded == {pair: (y / (y + n), y, n) for pair, (y, n) in counts.items()}


@pytest.mark.parametrize("bad_line, message", [
    ("a.jpg\tc.jpg#2\t4\t4", "expected 5 white-space-separated fields, found 4"),
    ("a.jpg\tc.jpg\t4\t4\t4", "caption id 'c.jpg' is not of the form IMAGE#N"),
    ("a.jpg\tc.jpg#2\t4\t5\t4", "expert score 5 outside 1..4"),
    ("a.jpg\tc.jpg#2\t0\t1\t1", "expert score 0 outside 1..4"),
    ("a.jpg\tc.jpg#2\t4\t3.5\t4", "expert score e2 '3.5' is not an integer"),
    ("a.jpg\tb.jpg#2\t4\t4\t4", r"duplicate judgment of pair \('a.jpg', 'b.jpg#2'\) \(first on line 2\)"),
])
def test_bad_expert_line(tmp_path, bad_line, message):
    path = write(tmp_path, GOOD_EXPERT + bad_line + "\n", "ExpertAnnotations.txt")
    with pytest.raises(DataFormatError, match=message) as info:
        load_expert_annotations(path)
    assert "ExpertAnnotations.txt, line 5:" in str(info.value)


@pytest.mark.parametrize("bad_line, message", [
    ("a.jpg\tc.jpg#2\t1\t3", "expected 5 white-space-separated fields, found 4"),
    ("a.jpg\tc.jpg#x\t1\t3\t0", "not of the form IMAGE#N"),
    ("a.jpg\tc.jpg#2\tyes\t3\t0", "pct_yes 'yes' is not a number"),
    ("a.jpg\tc.jpg#2\t1\t3.0\t0", "n_yes '3.0' is not an integer"),
    ("a.jpg\tc.jpg#2\t0\t0\t0", "must be >= 0 with a positive sum"),
    ("a.jpg\tc.jpg#2\t0\t-1\t3", "must be >= 0 with a positive sum"),
    ("a.jpg\tc.jpg#2\t66.7\t2\t1", r"pct_yes 66.7 outside \[0, 1\]"),
    ("a.jpg\tc.jpg#2\tnan\t2\t1", r"pct_yes nan outside \[0, 1\]"),
    ("a.jpg\tc.jpg#2\t0.5\t2\t1", "disagrees with n_yes / \\(n_yes \\+ n_no\\) = 2/3"),
    ("b.jpg\tb.jpg#2\t0.75\t3\t1", "duplicate judgment"),
])
def test_bad_crowdflower_line(tmp_path, bad_line, message):
    path = write(tmp_path, GOOD_CROWD + "\n" + bad_line + "\n", "CrowdFlowerAnnotations.txt")
    with pytest.raises(DataFormatError, match=message) as info:
        load_crowdflower_annotations(path)
    assert "CrowdFlowerAnnotations.txt, line 5:" in str(info.value)


@pytest.mark.parametrize("loader", [load_expert_annotations, load_crowdflower_annotations])
def test_missing_file(tmp_path, loader):
    with pytest.raises(FileNotFoundError, match="absent.txt"):
        loader(tmp_path / "absent.txt")


def test_flickr8k_judgments_need_both_files(tmp_path):
    write(tmp_path, GOOD_EXPERT, "ExpertAnnotations.txt")
    with pytest.raises(FileNotFoundError, match="CrowdFlowerAnnotations.txt"):
        load_flickr8k_judgments(tmp_path)
    write(tmp_path, GOOD_CROWD, "CrowdFlowerAnnotations.txt")
    expert, crowd = load_flickr8k_judgments(tmp_path)
    assert len(expert) == 3 and len(crowd) == 3


@pytest.mark.flickr8k
def test_real_judgments_match_the_test_split(flickr8k_root):
    expert, crowd = load_flickr8k_judgments(flickr8k_root)
    assert len(expert) == 5822 and len(crowd) == 47830
    with pytest.warns(UserWarning):
        view = load_flickr8k(flickr8k_root).view("test", "hodosh")
    test_images, test_captions = set(view.images.ids), set(view.caption_ids)
    for judged in (expert, crowd):
        assert {image for image, _ in judged} <= test_images
        assert {caption for _, caption in judged} <= test_captions
    # Pairs of an image with its own caption are nearly all judged relevant; with
    # misaligned ids they would be as rarely relevant as random pairs.
    own = [crowd[(image, f"{image}#2")] for image in test_images if (image, f"{image}#2") in crowd]
    relevant = [pct >= 2 / 3 for pct, _, _ in own]
    assert len(own) > 500 and sum(relevant) > 0.9 * len(own)
    assert sum(pct >= 2 / 3 for pct, _, _ in crowd.values()) < 0.2 * len(crowd)
