"""Word similarities for the soft trigram kernels (Hodosh, Young & Hockenmaier 2013, Section 3.5).

Every source subclasses :class:`WordSimilarity` and exposes
``pairwise(words_a, words_b=None)`` -> float32 matrix in [0, 1], 1 on equal
words, identity outside the source's vocabulary.
"""

from .alignment import AlignmentSimilarity, ibm_model1
from .base import VectorSimilarity, WordSimilarity
from .combine import AverageSimilarity, MaxSimilarity
from .corpus import default_corpus_file, default_external_corpus, read_corpus_file, split_sentences
from .distributional import DistributionalSimilarity
from .lin import LinSimilarity
from .neighbours import neighbour_table, top_neighbours
from .table import TabulatedSimilarity
from .wordnet import WordNetUnavailableError, default_nltk_data_dir, load_wordnet, load_wordnet_ic

__all__ = [
    "WordSimilarity",
    "VectorSimilarity",
    "LinSimilarity",
    "DistributionalSimilarity",
    "AlignmentSimilarity",
    "ibm_model1",
    "AverageSimilarity",
    "MaxSimilarity",
    "TabulatedSimilarity",
    "top_neighbours",
    "neighbour_table",
    "default_corpus_file",
    "default_external_corpus",
    "read_corpus_file",
    "split_sentences",
    "WordNetUnavailableError",
    "default_nltk_data_dir",
    "load_wordnet",
    "load_wordnet_ic",
]
