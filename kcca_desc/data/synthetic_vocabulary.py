"""A Zipfian vocabulary of pseudo-words for synthetic captions at a realistic vocabulary size.

The scene grammar of :mod:`.synthetic_captions` knows about a hundred word types;
real caption corpora have tens of thousands (MS-COCO's captions, about 25,000
after lower-casing), with frequencies close to Zipf's law, ``p(rank r) ~ r^(-s)``.
Preprocessing, the lexical similarities and the soft trigram kernel cost what
the vocabulary makes them cost, so a benchmark of their scaling needs the real
size.  :class:`ZipfVocabulary` adds to each caption a few pronounceable
pseudo-words (consonant-vowel syllables, ``"bako"``, ``"tidamu"``...) drawn
from a Zipf distribution over ``n_types`` words: half from one ranking shared
by all captions (the corpus' common words), half from a ranking shifted by the
scene's main shape and colour, so words co-occur with what an image shows, as
the distributional and alignment similarities expect.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._core.errors import ParameterError
from .synthetic_scenes import COLOURS, SHAPES, Scene

__all__ = ["ZipfVocabulary", "pseudo_word"]

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_SYLLABLES = tuple(c + v for c in _CONSONANTS for v in _VOWELS)


def pseudo_word(i: int) -> str:
    """The ``i``-th pseudo-word: ``i + 70`` written in base-70 syllables (two or more; distinct for distinct i)."""
    if i < 0:
        raise ParameterError(f"pseudo_word: index must be >= 0, got {i}")
    code, syllables = i + len(_SYLLABLES), []
    while code:
        code, digit = divmod(code, len(_SYLLABLES))
        syllables.append(_SYLLABLES[digit])
    return "".join(reversed(syllables))


@dataclass(frozen=True)
class ZipfVocabulary:
    """Pseudo-words with Zipfian frequencies, drawn per caption.

    Parameters
    ----------
    n_types : int
        Word types (e.g. 25,000 for a COCO-sized vocabulary).
    exponent : float, default=1.0
        Zipf exponent ``s``.
    words_per_caption : float, default=3.0
        Mean number of pseudo-words added to a caption (Poisson).
    """

    n_types: int
    exponent: float = 1.0
    words_per_caption: float = 3.0
    _cdf: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if isinstance(self.n_types, bool) or not isinstance(self.n_types, (int, np.integer)) or self.n_types < 1:
            raise ParameterError(f"vocabulary must be a positive integer number of word types, got {self.n_types!r}")
        if not np.isfinite(self.exponent) or self.exponent <= 0:
            raise ParameterError(f"Zipf exponent must be a positive number, got {self.exponent!r}")
        if not np.isfinite(self.words_per_caption) or self.words_per_caption < 0:
            raise ParameterError(f"words_per_caption must be a number >= 0, got {self.words_per_caption!r}")
        weights = np.arange(1, self.n_types + 1, dtype=np.float64) ** -float(self.exponent)
        object.__setattr__(self, "_cdf", np.cumsum(weights) / weights.sum())

    def topic(self, scene: Scene) -> int:
        """The scene's topic: its main object's shape and colour."""
        main = scene.objects[0]
        return list(SHAPES).index(main.shape) * len(COLOURS) + list(COLOURS).index(main.colour)

    def draw(self, scene: Scene, rng: np.random.Generator) -> list[str]:
        """Pseudo-words for one caption of ``scene``."""
        k = int(rng.poisson(self.words_per_caption))
        ranks = np.minimum(np.searchsorted(self._cdf, rng.random(k)), self.n_types - 1)
        # Topical draws shift the ranking by a topic-specific offset, so each topic has its own
        # frequent words; shared draws keep the global ranking.
        offset = (self.topic(scene) * 7919) % self.n_types
        topical = rng.random(k) < 0.5
        ranks = np.where(topical, (ranks + offset) % self.n_types, ranks)
        return [pseudo_word(int(r)) for r in ranks]

    def extend(self, caption: str, scene: Scene, rng: np.random.Generator) -> str:
        """``caption`` with its pseudo-words inserted before a final full stop (if any)."""
        words = self.draw(scene, rng)
        if not words:
            return caption
        stop = caption.endswith(" .")
        body = caption[:-2] if stop else caption
        return f"{body} {' '.join(words)}" + (" ." if stop else "")
