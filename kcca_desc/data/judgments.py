"""Human relevance judgments of Flickr8K image–caption pairs.

The expert judgments are those of Hodosh, Young & Hockenmaier (2013), Section 4.2.1, the
crowd judgments those of its Section 4.3.2.

Both files hold one judged pair per line, ``image<TAB>caption_id<TAB>...``,
with ``caption_id`` of the form ``IMAGE#N`` (the test-split ``#2`` captions on
Flickr8K):

``ExpertAnnotations.txt``
    Three expert scores from 1 to 4 (4: describes the image without errors,
    3: minor errors, 2: somewhat related, 1: unrelated).  5,822 pairs.
``CrowdFlowerAnnotations.txt``
    The share of "yes" answers, the number of yes and the number of no answers
    of at least three crowd workers.  47,830 pairs.

On the Flickr8K files, the crowd judged the original (image, own caption)
pair of 721 of the 1,000 test images, and put 21 of those below 2/3: the
metrics count the original pair as relevant whatever its judgment, as the paper
adds its crowd judgments to the test images paired with their original caption
(Section 4.3.2).

The loaders return plain dictionaries keyed by ``(image_id, caption_id)``,
the shapes the judgment-based metrics consume.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ._textfiles import iter_fields, read_lines
from .flickr8k import resolve_flickr8k_root
from .problems import DataFormatError

__all__ = [
    "EXPERT_FILE",
    "CROWDFLOWER_FILE",
    "Flickr8kJudgments",
    "load_expert_annotations",
    "load_crowdflower_annotations",
    "load_flickr8k_judgments",
]

EXPERT_FILE = "ExpertAnnotations.txt"
CROWDFLOWER_FILE = "CrowdFlowerAnnotations.txt"

ExpertScores = dict[tuple[str, str], tuple[int, int, int]]
CrowdScores = dict[tuple[str, str], tuple[float, int, int]]

# pct_yes is written with 15 significant digits; allow that rounding and no more.
_PCT_TOLERANCE = 1e-6


def _pair(path: Path, number: int, image_id: str, caption_id: str) -> tuple[str, str]:
    stem, hash_sign, k = caption_id.rpartition("#")
    if not hash_sign or not stem or not (k.isascii() and k.isdigit()):
        raise DataFormatError(path, number, f"caption id {caption_id!r} is not of the form IMAGE#N")
    return image_id, caption_id


def _integer(path: Path, number: int, name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise DataFormatError(path, number, f"{name} {text!r} is not an integer") from None


def _check_new(path: Path, number: int, pair: tuple[str, str], first_line: dict) -> None:
    if pair in first_line:
        raise DataFormatError(
            path, number, f"duplicate judgment of pair {pair} (first on line {first_line[pair]})"
        )
    first_line[pair] = number


def _read_judgments(path: str | os.PathLike, what: str, parse: Callable[[Path, int, list[str]], tuple]) -> dict:
    """``(image_id, caption_id) -> parse(path, line, scores)`` of each line ``image caption_id s1 s2 s3``.

    The fields are separated by tabs or white space; each caption id is checked to be of the form
    ``IMAGE#N`` before its scores are parsed, and each pair to be judged once after.
    """
    path = Path(path)
    judgments = {}
    first_line: dict[tuple[str, str], int] = {}
    lines = read_lines(path, what)
    for number, (image_id, caption_id, *scores) in iter_fields(path, lines, 5, sep=None):
        pair = _pair(path, number, image_id, caption_id)
        values = parse(path, number, scores)
        _check_new(path, number, pair, first_line)
        judgments[pair] = values
    return judgments


def _expert_scores(path: Path, number: int, scores: list[str]) -> tuple[int, int, int]:
    values = tuple(_integer(path, number, f"expert score e{k + 1}", v) for k, v in enumerate(scores))
    bad = [v for v in values if not 1 <= v <= 4]
    if bad:
        raise DataFormatError(path, number, f"expert score {bad[0]} outside 1..4")
    return values


def _crowd_scores(path: Path, number: int, scores: list[str]) -> tuple[float, int, int]:
    pct_text, yes_text, no_text = scores
    try:
        pct_yes = float(pct_text)
    except ValueError:
        raise DataFormatError(path, number, f"pct_yes {pct_text!r} is not a number") from None
    n_yes = _integer(path, number, "n_yes", yes_text)
    n_no = _integer(path, number, "n_no", no_text)
    if n_yes < 0 or n_no < 0 or n_yes + n_no == 0:
        raise DataFormatError(path, number, f"counts n_yes={n_yes}, n_no={n_no} must be >= 0 with a positive sum")
    if not 0.0 <= pct_yes <= 1.0:
        raise DataFormatError(path, number, f"pct_yes {pct_text} outside [0, 1]")
    if abs(pct_yes - n_yes / (n_yes + n_no)) > _PCT_TOLERANCE:
        raise DataFormatError(
            path, number, f"pct_yes {pct_text} disagrees with n_yes / (n_yes + n_no) = {n_yes}/{n_yes + n_no}"
        )
    return pct_yes, n_yes, n_no


def load_expert_annotations(path: str | os.PathLike) -> ExpertScores:
    """Read expert judgments: ``(image_id, caption_id) -> (e1, e2, e3)``.

    Parameters
    ----------
    path : path-like
        A file of lines ``image  caption_id  e1  e2  e3`` (tab or white-space
        separated), scores integers in 1..4.

    Returns
    -------
    dict
        In file order.

    Raises
    ------
    FileNotFoundError
        When the file is missing.
    DataFormatError
        Naming the line: wrong number of fields, a caption id not of the form
        ``IMAGE#N``, a score that is not an integer in 1..4, a pair judged twice.
    """
    return _read_judgments(path, "expert annotation file", _expert_scores)


def load_crowdflower_annotations(path: str | os.PathLike) -> CrowdScores:
    """Read crowd judgments: ``(image_id, caption_id) -> (pct_yes, n_yes, n_no)``.

    Parameters
    ----------
    path : path-like
        A file of lines ``image  caption_id  pct_yes  n_yes  n_no`` (tab or
        white-space separated); ``pct_yes`` is the share of yes answers in
        [0, 1] and must equal ``n_yes / (n_yes + n_no)``.

    Returns
    -------
    dict
        In file order.  A pair counts as relevant when ``pct_yes >= 2/3``
        (Hodosh et al. 2013, Section 4.3.2); that decision is left to the metrics.

    Raises
    ------
    FileNotFoundError
        When the file is missing.
    DataFormatError
        Naming the line: wrong number of fields, a caption id not of the form
        ``IMAGE#N``, negative or non-integer counts, no answers at all, a
        ``pct_yes`` outside [0, 1] or inconsistent with the counts, a pair
        judged twice.
    """
    return _read_judgments(path, "CrowdFlower annotation file", _crowd_scores)


class Flickr8kJudgments(NamedTuple):
    """Both judgment sets of Flickr8K (see :func:`load_flickr8k_judgments`)."""

    expert: ExpertScores
    crowdflower: CrowdScores


def load_flickr8k_judgments(root: str | os.PathLike | None = None) -> Flickr8kJudgments:
    """Read ``ExpertAnnotations.txt`` and ``CrowdFlowerAnnotations.txt`` from the Flickr8K directory.

    Parameters
    ----------
    root : path-like, optional
        The Flickr8K directory; defaults to ``$KCCA_DESC_FLICKR8K``.

    Returns
    -------
    Flickr8kJudgments
        ``(expert, crowdflower)``, as returned by
        :func:`load_expert_annotations` and :func:`load_crowdflower_annotations`.
    """
    root = resolve_flickr8k_root(root)
    return Flickr8kJudgments(
        expert=load_expert_annotations(root / EXPERT_FILE),
        crowdflower=load_crowdflower_annotations(root / CROWDFLOWER_FILE),
    )
