"""Text kernels between items of preprocessed sentences (Hodosh et al. 2013, Sections 3.4-3.5).

An item is a list of sentences, a sentence a list of tokens. ``bow_kernel`` (cosine of word
counts), ``trigram_kernel`` (truncated subsequence kernel, exact or with a word similarity from
:mod:`kcca_desc.kernels.text.similarity`) and ``tagrank_kernel`` (word-position ranks) return Gram matrices.
"""

from . import similarity
from ._items import document_idf
from .bow import bow_kernel
from .tagrank import TagRank, tagrank_kernel
from .trigram import subsequence_features, trigram_kernel

__all__ = ["bow_kernel", "document_idf", "trigram_kernel", "subsequence_features", "TagRank", "tagrank_kernel",
           "similarity"]
