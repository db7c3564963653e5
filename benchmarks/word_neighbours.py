"""Nearest neighbours of words under each word similarity (Hodosh et al. 2013, Figure 6).

``python -m kcca_desc.text.neighbours rider swim [--k 5] [--data-root DIR]``
fits the four similarity sources on the Flickr8K training captions (the
distributional D_ext on the default external corpus) and prints the top-k
neighbours of each word under A, D_ic, D_ext and Lin, as in the paper's
"rider"/"swim" comparison.

Text preparation here is a stop-gap until the toolkit's preprocessor
(``kcca_desc.text.preprocess``) lands: captions are the lowercased lemmas of
``Flickr8k.lemma.token.txt``; POS tags come from textblob's offline
``PatternTagger`` run on the original caption (on the lemmas where the two
files tokenise a caption differently); the external corpus is tagged the same
way and lemmatised with WordNet's morphy; punctuation and scikit-learn's
English stop words are removed after tagging.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from kcca_desc.kernels.text.similarity import (
    neighbour_table,
    top_neighbours,
    AlignmentSimilarity,
    DistributionalSimilarity,
    LinSimilarity,
    WordSimilarity,
    default_external_corpus,
    load_wordnet,
)

__all__ = ["fit_flickr8k_sources"]


# ------------------------------------------------------------------ stop-gap text preparation

def _content(tokens: Sequence[str], tags: Sequence[str]) -> tuple[list[str], list[str]]:
    """Drop punctuation and stop words after tagging, keeping tokens and tags aligned."""
    kept = [(w, t) for w, t in zip(tokens, tags) if w.isalpha() and w not in ENGLISH_STOP_WORDS]
    return [w for w, _ in kept], [t for _, t in kept]


def _read_captions(path: Path) -> dict[str, list[str]]:
    captions: dict[str, list[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            if "\t" not in line:
                raise ValueError(f"{path}:{number}: expected '<image>#<k>\\t<caption>'")
            caption_id, text = line.split("\t", 1)
            captions[caption_id] = text.split()
    return captions


def _flickr8k_training_text(root: Path) -> tuple[list[list[list[str]]], list[list[list[str]]]]:
    """Lemmatised, tagged, stop-word-free captions of each Flickr8K training image."""
    from textblob.en.taggers import PatternTagger

    tagger = PatternTagger()
    originals = _read_captions(root / "Flickr8k.token.txt")
    lemmas = _read_captions(root / "Flickr8k.lemma.token.txt")
    by_image: dict[str, list[str]] = {}
    for caption_id in sorted(lemmas):
        by_image.setdefault(caption_id.split("#")[0], []).append(caption_id)
    items, item_tags = [], []
    for image in (root / "Flickr_8k.trainImages.txt").read_text().split():
        captions, tags = [], []
        for caption_id in by_image.get(image, []):
            lemma_tokens = [w.lower() for w in lemmas[caption_id]]
            source = originals.get(caption_id, lemmas[caption_id])
            if len(source) != len(lemma_tokens):  # the two files tokenise ~2% of captions differently
                source = lemmas[caption_id]
            caption_tags = [t for _, t in tagger.tag(" ".join(source), tokenize=False)]
            tokens, content_tags = _content(lemma_tokens, caption_tags)
            captions.append(tokens)
            tags.append(content_tags)
        if captions:
            items.append(captions)
            item_tags.append(tags)
    if not items:
        raise ValueError(f"no training captions found under {root}")
    return items, item_tags


_WORDNET_POS = {"N": "n", "V": "v", "J": "a", "R": "r"}


def _external_sentences(sentences: Sequence[str]) -> list[list[str]]:
    """Tag, lemmatise (WordNet morphy by tag), lowercase and filter raw corpus sentences."""
    from textblob.en.taggers import PatternTagger

    tagger, wordnet = PatternTagger(), load_wordnet()
    lemma_cache: dict[tuple[str, str], str] = {}

    def lemma(word: str, tag: str) -> str:
        key = (word.lower(), _WORDNET_POS.get(tag[:1], ""))
        if key not in lemma_cache:
            lemma_cache[key] = (wordnet.morphy(key[0], key[1]) if key[1] else None) or key[0]
        return lemma_cache[key]

    prepared = []
    for sentence in sentences:
        tagged = tagger.tag(sentence)
        tokens, _ = _content([lemma(w, t) for w, t in tagged], [t for _, t in tagged])
        prepared.append(tokens)
    return prepared


def fit_flickr8k_sources(
    root: str | os.PathLike, min_count: int = 5
) -> tuple[dict[str, WordSimilarity], list[str], dict[str, float]]:
    """Fit A, D_ic, D_ext and Lin on Flickr8K training captions.

    Returns
    -------
    similarities : dict of str to WordSimilarity
    vocabulary : list of str
        Training-caption words occurring at least ``min_count`` times (the neighbour candidates).
    fit_seconds : dict of str to float
        Wall time of each ``fit`` (and of the text preparation).
    """
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    items, tags = _flickr8k_training_text(Path(root))
    sentences = [caption for item in items for caption in item]
    seconds["prepare captions"] = time.perf_counter() - start
    start = time.perf_counter()
    external = _external_sentences(default_external_corpus())
    seconds["prepare external corpus"] = time.perf_counter() - start

    sources = {
        "A": (AlignmentSimilarity(), (items, tags)),
        "D_ic": (DistributionalSimilarity(min_count=min_count), (sentences,)),
        "D_ext": (DistributionalSimilarity(min_count=min_count), (external,)),
        "Lin": (LinSimilarity(), (sentences,)),
    }
    similarities = {}
    for name, (similarity, data) in sources.items():
        start = time.perf_counter()
        similarities[name] = similarity.fit(*data)
        seconds[name] = time.perf_counter() - start
    counts = Counter(w for s in sentences for w in s)
    vocabulary = sorted(w for w, c in counts.items() if c >= min_count)
    return similarities, vocabulary, seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kcca_desc.text.neighbours",
        description="Top-k neighbours of words under the A, D_ic, D_ext and Lin similarities "
        "fitted on Flickr8K training captions (Hodosh et al. 2013, Figure 6).",
    )
    parser.add_argument("words", nargs="+", help="query words (lemmas), e.g. rider swim")
    parser.add_argument("--k", type=int, default=5, help="neighbours per word (default 5)")
    parser.add_argument("--min-count", type=int, default=5,
                        help="minimum corpus count of a vocabulary word (default 5)")
    parser.add_argument("--data-root", default=os.environ.get("KCCA_DESC_FLICKR8K"),
                        help="Flickr8K directory (default $KCCA_DESC_FLICKR8K)")
    args = parser.parse_args(argv)
    if args.data_root is None or not (Path(args.data_root) / "Flickr8k.lemma.token.txt").is_file():
        parser.error(f"--data-root must be a Flickr8K directory with Flickr8k.lemma.token.txt (got {args.data_root!r})")
    if args.k < 1:
        parser.error("--k must be >= 1")
    similarities, vocabulary, seconds = fit_flickr8k_sources(args.data_root, args.min_count)
    print(neighbour_table(similarities, args.words, vocabulary, args.k))
    print("fit seconds: " + ", ".join(f"{name} {s:.1f}" for name, s in seconds.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
