"""Neural encoders in the evaluation harness (issue #7).

Encoders (:class:`Encoder`) embed images and texts with an on-disk per-item
cache; pair scorers (:class:`PairScorer`) score image–text pairs jointly.
:class:`EncoderMethod` / :class:`PairScorerMethod` make harness methods of
them, and :class:`FeatureBridgeMethod` runs NN, linear CCA and RBF-kernel CCA
over any encoder's features.  The ONNX encoders in :mod:`.onnx_models` need the
optional ``neural`` extra, the trainable baselines in :mod:`.trainable`
(:class:`VSEEncoder`, :class:`CharGRUEncoder`) need ``torch``; both are
imported lazily.
"""

from .base import Encoder, PairScorer
from .bridge import FeatureBridgeMethod
from .methods import EncoderMethod, PairedEncoder, PairScorerMethod
from .store import EmbeddingStore

__all__ = [
    "Encoder",
    "PairScorer",
    "EncoderMethod",
    "PairScorerMethod",
    "PairedEncoder",
    "FeatureBridgeMethod",
    "EmbeddingStore",
    "MiniLMTextEncoder",
    "ViTImageEncoder",
    "VSEEncoder",
    "CharGRUEncoder",
]


def __getattr__(name):
    # The ONNX encoders import nothing heavy at module level, but keep them lazy
    # so that `import kcca_desc.adapters` never touches the optional stack.
    if name in ("MiniLMTextEncoder", "ViTImageEncoder"):
        from . import onnx_models

        return getattr(onnx_models, name)
    if name in ("VSEEncoder", "CharGRUEncoder"):
        from . import trainable

        return getattr(trainable, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
