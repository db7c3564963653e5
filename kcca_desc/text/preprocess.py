"""Caption preprocessing: tokens and Penn Treebank tags (Hodosh et al. 2013, Section 4.1.1).

The paper spell-checks, normalises compound words, removes stop words and lemmatises, and tags
parts of speech before lemmatisation for its alignment similarity (Section 3.5.4); the offline
tools used here in place of its Linux ``spell`` and OpenNLP tagger are named in the steps below
(see also ``docs/design.md``).

The pipeline, in order, each step a switch of :class:`Preprocessor`:

1. lowercase;
2. normalise compound spellings (:data:`COMPOUNDS`, e.g. ``t shirt`` / ``tee-shirt`` -> ``tshirt``),
   before hyphens are split so that ``t-shirt`` is still recognised;
3. split hyphenated words (``snow-covered`` -> ``snow covered``);
4. tokenise (words, clitics such as ``'s`` and single punctuation marks);
5. strip punctuation (tokens without a letter or digit, and clitics);
6. optional spelling correction (``pyspellchecker``);
7. part-of-speech tags (textblob's offline ``PatternTagger``, Penn Treebank tag set), computed on the
   full sentence so that the tagger sees the stop words; tags stay aligned with tokens afterwards;
8. lemmatisation (``lemminflect``, lemma chosen by the tag);
9. stop-word removal (scikit-learn's ``ENGLISH_STOP_WORDS`` minus :data:`KEPT_WORDS`).

Results are cached per caption in memory and per batch on disk (``kcca_desc._core.cache``); within
a run, each distinct token is tagged once, and each tagged token lemmatised and tested against
the stop list once (the tagger tags a token alone: see ``_token_tags``).
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Sequence
from functools import lru_cache

from sklearn.base import BaseEstimator
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from kcca_desc._core.cache import PickleCache
from kcca_desc._core.errors import ParameterError, import_optional, warn_user
# Under this name so that a test can stand in for an upgrade (it reads no module when called).
from kcca_desc._core.provenance import library_version as _library_version
from kcca_desc._core.validation import ValidatedParams


__all__ = ["Preprocessor", "COMPOUNDS", "KEPT_WORDS", "STOP_WORDS"]

#: Spelling variants of true compounds in Flickr8K captions, mapped to one token. Each key is a
#: regular expression on the lowercased caption; variants differ only by a space or a hyphen.
#: Counts in Flickr8k.token.txt: t-shirt 153, wetsuit 80 (+wet-suit 4), four-wheeler 15.
COMPOUNDS: dict[str, str] = {
    r"\b(?:t|tee)[\s-]?shirt(s?)\b": r"tshirt\1",
    r"\bwet[\s-]suit(s?)\b": r"wetsuit\1",
    r"\bsweat[\s-]shirt(s?)\b": r"sweatshirt\1",
    r"\bfour[\s-]wheeler(s?)\b": r"fourwheeler\1",
    r"\bhalf[\s-]pipe(s?)\b": r"halfpipe\1",
    r"\bhula[\s-]hoop(s?)\b": r"hulahoop\1",
    r"\bmerry[\s-]go[\s-]round(s?)\b": r"merrygoround\1",
    r"\bspider[\s-]man\b": "spiderman",
    r"\bskate[\s-]board(s?|ers?|ing)\b": r"skateboard\1",
    r"\bsnow[\s-]board(s?|ers?|ing)\b": r"snowboard\1",
    r"\bsurf[\s-]board(s?)\b": r"surfboard\1",
    r"\bspeed[\s-]boat(s?)\b": r"speedboat\1",
    r"\bbow[\s-]tie(s?)\b": r"bowtie\1",
}

#: Words of scikit-learn's stop list that carry image content in captions (positions, parts of
#: a scene, counts, states) and are therefore kept: "a man in front of a fire" must keep
#: "front" and "fire"; "two dogs" vs "three dogs" and "walking up" vs "down" are visible
#: differences. Function words (articles, pronouns, auxiliaries, other prepositions) still go.
KEPT_WORDS: frozenset[str] = frozenset({
    "back", "front", "top", "bottom", "side", "behind", "fire", "full", "empty", "thick", "thin",
    "up", "down", "off", "over", "under", "together",
    "two", "three", "four", "five", "six", "eight", "nine", "ten", "eleven", "twelve", "twenty",
    "hundred",
})

#: The stop list applied by ``stop_words=True``.
STOP_WORDS: frozenset[str] = frozenset(ENGLISH_STOP_WORDS) - KEPT_WORDS

#: Switch -> the distribution whose output its step produces (its dictionaries, lexicon, lemma
#: tables or stop list): an upgrade of one can change tokens or tags, so the version of each
#: library a preprocessing uses keys its cached results and the Grams made from them.
_LIBRARIES = {"spelling": "pyspellchecker", "pos_tags": "textblob", "lemmatise": "lemminflect",
              "stop_words": "scikit-learn"}


# Words (hyphenated ones whole, split later if asked), clitics ("dog's" -> "dog", "'s") and
# single punctuation marks.
_WORD = r"[^\W_]+(?:-[^\W_]+)*"
_TOKEN = re.compile(rf"{_WORD}|'[^\W_]+|[^\w\s]|_")
# The same tokens, the words captured and the others empty. The words are the tokens that
# strip_punctuation keeps: each holds a letter or a digit, and no other token does but a clitic,
# which it drops too. Empty strings are dropped faster than each token is searched.
_WORDS_ONLY = re.compile(rf"({_WORD})|'[^\W_]+|[^\w\s]|_")
_HYPHEN = re.compile(r"(?<=[^\W_])-(?=[^\W_])")
_COMPOUND_PATTERNS = [(re.compile(pattern), replacement) for pattern, replacement in COMPOUNDS.items()]
# Whether any compound occurs, in one search: most texts have none, and a substitution per entry
# on every sentence of the external corpus costs a sixth of its preprocessing.
_ANY_COMPOUND = re.compile("|".join(f"(?:{pattern})" for pattern in COMPOUNDS))


def _normalise_compounds(text: str) -> str:
    """``text`` with each spelling of :data:`COMPOUNDS` replaced, the entries in order."""
    if _ANY_COMPOUND.search(text) is None:
        return text  # no entry matches, so no substitution would change it
    for pattern, replacement in _COMPOUND_PATTERNS:
        text = pattern.sub(replacement, text)
    return text

# Penn Treebank tag prefixes -> the universal tags lemminflect chooses lemmas by.
_UPOS = (("NNP", "PROPN"), ("NN", "NOUN"), ("VB", "VERB"), ("MD", "AUX"), ("JJ", "ADJ"), ("RB", "ADV"))


def _universal_tag(penn_tag: str) -> str | None:
    for prefix, upos in _UPOS:
        if penn_tag.startswith(prefix):
            return upos
    return None


@lru_cache(maxsize=None)
def _lemma(word: str, penn_tag: str | None) -> str:
    from lemminflect import getAllLemmas, getLemma

    if penn_tag is None:
        # Without a tag the noun reading wins, then verb, adjective and adverb: captions
        # are mostly noun phrases.
        lemmas = getAllLemmas(word)
        for upos in ("NOUN", "VERB", "ADJ", "ADV"):
            if upos in lemmas:
                return lemmas[upos][0]
        return word
    upos = _universal_tag(penn_tag)
    if upos is None:
        return word
    lemmas = getLemma(word, upos, lemmatize_oov=True)
    return lemmas[0] if lemmas and lemmas[0] else word


class _Words(dict):
    """``(token, tag)`` -> what the last two steps make of it, each worked out on its first lookup.

    The value is the token (lemmatised by its tag under ``lemmatise``) and the tag, or None for a
    stop word (under ``stop_words``, tested after lemmatisation so that "is" -> "be" goes too).
    """

    def __init__(self, *, lemmatise: bool, stop_words: bool):
        super().__init__()
        self.lemmatise, self.stop_words = lemmatise, stop_words

    def __missing__(self, key: tuple[str, str | None]) -> tuple[str, str | None] | None:
        token, tag = key
        if self.lemmatise:
            token = _lemma(token, tag)
        value = self[key] = None if self.stop_words and token.lower() in STOP_WORDS else (token, tag)
        return value


def _warn_empty(texts: list[str], tokens: list[list[str]]) -> None:
    """One warning counting the captions that preprocessing left without a word (they match nothing)."""
    empty = [text for text, t in zip(texts, tokens) if not t]
    if empty:
        shown = ", ".join(repr(t[:40]) for t in empty[:5]) + (", ..." if len(empty) > 5 else "")
        warn_user(f"{len(empty)} of {len(texts)} captions have no word left after preprocessing (only stop "
                  f"words, punctuation or symbols: {shown}); they are kept, but match no other caption")


class Preprocessor(ValidatedParams, BaseEstimator):
    """Deterministic caption preprocessing, one switch per step (Hodosh et al. 2013, Section 4.1.1).

    A scikit-learn estimator as far as its settings go (``get_params``, ``set_params``,
    ``clone``), so that a system's preprocessing can be tuned or copied with it; the settings
    are checked by :meth:`process`, not at construction.

    Parameters
    ----------
    lowercase : bool, default=True
    strip_punctuation : bool, default=True
        Drop tokens without a letter or digit, and clitics (``'s``, ``n't``).
    split_hyphens : bool, default=True
        ``snow-covered`` -> ``snow``, ``covered``. Off: hyphenated words stay one token.
    normalise_compounds : bool, default=True
        Apply :data:`COMPOUNDS` (``t-shirt`` -> ``tshirt``).
    spelling : bool, default=False
        Correct unknown words with ``pyspellchecker`` (optional extra; ImportError when missing).
        Slow: one dictionary search per distinct unknown word.
    stop_words : bool, default=True
        Remove :data:`STOP_WORDS` (after lemmatisation, so that "is" -> "be" goes too).
    lemmatise : bool, default=True
        ``lemminflect`` lemma chosen by the POS tag (by noun, verb, adjective, adverb order when
        ``pos_tags=False``).
    pos_tags : bool, default=True
        Tag with textblob's ``PatternTagger`` (Penn Treebank tags, offline). When False, no
        tagger runs and ``process`` returns ``None`` for the tags.
    cache : bool, default=True
        Keep results on disk in ``kcca_desc._core.cache`` (the in-memory per-caption cache is always on).

    Examples
    --------
    >>> tokens, tags = Preprocessor().process(["A boy in a red T-shirt is running ."])
    >>> tokens
    [['boy', 'red', 'tshirt', 'run']]
    >>> tags
    [['NN', 'JJ', 'NN', 'VBG']]
    """

    _parameter_constraints = {name: ["boolean"] for name in (
        "lowercase", "strip_punctuation", "split_hyphens", "normalise_compounds", "spelling", "stop_words",
        "lemmatise", "pos_tags", "cache")}

    def __init__(
        self,
        *,
        lowercase: bool = True,
        strip_punctuation: bool = True,
        split_hyphens: bool = True,
        normalise_compounds: bool = True,
        spelling: bool = False,
        stop_words: bool = True,
        lemmatise: bool = True,
        pos_tags: bool = True,
        cache: bool = True,
    ):
        self.lowercase = lowercase
        self.strip_punctuation = strip_punctuation
        self.split_hyphens = split_hyphens
        self.normalise_compounds = normalise_compounds
        self.spelling = spelling
        self.stop_words = stop_words
        self.lemmatise = lemmatise
        self.pos_tags = pos_tags
        self.cache = cache

    def _switches(self) -> dict[str, bool]:
        # The key of the in-memory cache and part of that of the on-disk one (and of cache_params):
        # keep it as it is, or every cached preprocessing and the text Grams keyed by it are
        # computed anew.
        return {name: bool(getattr(self, name)) for name in (
            "lowercase", "strip_punctuation", "split_hyphens", "normalise_compounds", "spelling",
            "stop_words", "lemmatise", "pos_tags")}

    def _libraries(self) -> dict[str, str | None]:
        """The versions of the libraries whose output the steps switched on produce (see ``_LIBRARIES``)."""
        return {library: _library_version(library) for switch, library in _LIBRARIES.items() if getattr(self, switch)}

    def process(self, texts: Sequence[str]) -> tuple[list[list[str]], list[list[str]] | None]:
        """Tokens and Penn tags of each text.

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        tokens : list of list of str
        tags : list of list of str, or None
            ``tags[i][j]`` is the tag of ``tokens[i][j]``; None when ``pos_tags=False``.

        Raises
        ------
        InvalidParameterError
            If a setting is not a bool, naming it (before any text is processed).
        ParameterError
            If ``texts`` is one string rather than a sequence of them, or holds a non-string.
        """
        self._validate_params()
        if isinstance(texts, str):
            raise ParameterError("Preprocessor.process: texts must be a sequence of strings, not one string")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ParameterError(f"Preprocessor.process: texts[{i}] is a {type(text).__name__}, not a str")
        texts = list(texts)
        if self.cache and len(texts) > 1000:
            # Only large batches go to disk: small ones are cheaper to recompute than to hash and load.
            results = PickleCache("text_preprocess").get_or_compute(
                lambda: self._process_all(texts), switches=self._switches(), libraries=self._libraries(),
                texts=texts, version=1)
        else:
            results = self._process_all(texts)
        tokens = [list(t) for t, _ in results]
        tags = [list(g) for _, g in results] if self.pos_tags else None
        return tokens, tags

    def process_items(self, items: Sequence[Sequence[str]]) -> tuple[list, list | None]:
        """Tokens and tags of multi-caption items, grouped as the input.

        Parameters
        ----------
        items : sequence of sequence of str
            The captions of each item (e.g. ``Dataset.captions``).

        Returns
        -------
        tokens : list of items, each a list of token lists
        tags : the same nesting of Penn tags, or None when ``pos_tags=False``

        Warns
        -----
        UserWarning
            Counting the captions left without a word (only stop words or punctuation).
        """
        sizes = [len(captions) for captions in items]
        texts = [c for captions in items for c in captions]
        tokens, tags = self.process(texts)
        # A data set's captions (not a background corpus): the user should know of empty ones.
        _warn_empty(texts, tokens)
        bounds = list(itertools.accumulate(sizes, initial=0))

        def group(flat: list) -> list:
            return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

        return group(tokens), (None if tags is None else group(tags))

    def cache_params(self) -> dict:
        """What determines the output, for keying downstream caches.

        Returns
        -------
        dict
            The switches, and under ``"libraries"`` the installed versions of the libraries the
            steps switched on use (``lemminflect``, ``textblob``, ``pyspellchecker``,
            ``scikit-learn``'s stop list; None for one not installed).
        """
        return {**self._switches(), "libraries": self._libraries()}

    def __repr__(self) -> str:
        return f"Preprocessor({', '.join(f'{k}={v}' for k, v in self._switches().items())})"

    def _process_all(self, texts: list[str]) -> list[tuple[list[str], list[str] | None]]:
        # Created on first use (construction only stores the settings), the memo of each text keyed
        # by the switches and that of each tagged token by the two it depends on: changed by
        # set_params, they must not serve stale results.
        memos = self.__dict__.setdefault("_memo", {})
        memo = memos.setdefault(("texts", *self._switches().items()), {})
        # A corpus repeats its words: the lemmatiser and the stop list see each tagged token once.
        words = memos.setdefault(("words", self.lemmatise, self.stop_words),
                                 _Words(lemmatise=self.lemmatise, stop_words=self.stop_words))
        for text in dict.fromkeys(texts):
            if text not in memo:
                memo[text] = self._process_one(text, words)
        return [memo[t] for t in texts]

    def _process_one(self, text: str, words: _Words) -> tuple[list[str], list[str] | None]:
        if self.lowercase:
            text = text.lower()
        if self.normalise_compounds:
            text = _normalise_compounds(text)
        if self.split_hyphens:
            text = _HYPHEN.sub(" ", text)
        tokens = list(filter(None, _WORDS_ONLY.findall(text))) if self.strip_punctuation else _TOKEN.findall(text)
        if self.spelling:
            tokens = [self._correct(t) for t in tokens]
        tags = self._tag(tokens) if self.pos_tags else [None] * len(tokens)
        done = [w for w in map(words.__getitem__, zip(tokens, tags)) if w is not None]
        return [token for token, _ in done], ([tag for _, tag in done] if self.pos_tags else None)

    def _tag(self, tokens: list[str]) -> list[str]:
        """The tagger's tags of a sentence's tokens, each distinct token tagged once (see :func:`_token_tags`)."""
        tags = [_token_tags(t)[1] for t in tokens]
        if tags:
            tags[0] = _token_tags(tokens[0])[0]
        return tags

    def _correct(self, token: str) -> str:
        if not token.isalpha():
            return token
        return _spelling_correction(token)


@lru_cache(maxsize=None)
def _token_tags(token: str) -> tuple[str, str]:
    """The tagger's tag of ``token`` at the start of a sentence, and elsewhere in one.

    The tagging step of textblob's Pattern parser (:func:`_pattern_find_tags`) tags each token on
    its own: from its lexicon, else by the token's form (a capital, a number, a suffix), with no
    rule that reads a neighbour; only a sentence's first token is also looked up lower-cased.
    The tags of a sentence are therefore those of its tokens, and a corpus's tokens are tagged
    once each instead of once per sentence (tests/text/test_text_preprocess.py tags whole
    sentences to check it). One call gives both: the token first, then after itself.
    """
    (_, first), (_, elsewhere) = _pattern_find_tags()([token, token])
    return first, elsewhere


@lru_cache(maxsize=1)
def _pattern_find_tags():
    """The tagging step of textblob's Pattern parser, ``[[word, tag], ...]`` of a list of tokens.

    ``PatternTagger().tag(" ".join(tokens), tokenize=False)`` runs this same step on the tokens
    split back at the spaces (ours hold none), then writes the result as a slash-separated
    string and parses that back: more work than the tagging itself.
    """
    import_optional("textblob", None, "the Preprocessor's POS tags (pos_tags=True)")
    from textblob.en import parser

    # textblob reads its lexicon files lazily, at the first tagging, through a generator that never
    # closes them (textblob._text._read): each is closed by the garbage collector with a
    # "ResourceWarning: unclosed file", one per file in every run's log (and an error under
    # -W error or -X dev). Load them here, where that one warning about those files is ignored.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"unclosed file .*textblob", category=ResourceWarning)
        lexicon = parser.lexicon
        for part in (lexicon, lexicon.morphology, lexicon.context, lexicon.entities):
            len(part)  # a lazy dict or list loads its file on first use
    return parser.find_tags


@lru_cache(maxsize=None)
def _spelling_correction(word: str) -> str:
    import_optional("spellchecker", "spelling", "the Preprocessor's spelling correction (spelling=True)")
    return _spell_checker().correction(word) or word


@lru_cache(maxsize=1)
def _spell_checker():
    from spellchecker import SpellChecker

    return SpellChecker(distance=1)
