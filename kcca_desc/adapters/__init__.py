"""Neural encoders: the features of the neural systems.

Encoders (:class:`Encoder`) embed images and texts with an on-disk per-item
cache; pair scorers (:class:`PairScorer`) score image–text pairs jointly.
They are features, not systems: :mod:`kcca_desc.methods` turns them into
retrieval systems (:class:`~kcca_desc.methods.EncoderMethod`,
:class:`~kcca_desc.methods.PairScorerMethod`, and
:class:`~kcca_desc.methods.FeatureBridgeMethod` for NN, linear CCA and
RBF-kernel CCA over any encoder's features).  The ONNX encoders in :mod:`.onnx_models` need the
optional ``neural`` extra, EfficientNet-Lite0 (:mod:`.efficientnet`) the ``efficientnet``
extra; both are imported lazily.  The seed papers' trainable models are not adapters: they live
in :mod:`kcca_desc.neural`.

Encoders of other libraries — OpenCLIP (:mod:`.open_clip_models`), sentence-transformers
(:mod:`.st_models`), transformers (:mod:`.hf_models`), timm (:mod:`.timm_models`), each an
optional extra of its own — and a user's own class (:mod:`.user`) are built from spec strings
``FAMILY:MODEL@WEIGHTS`` by :func:`.families.build_encoder`; :data:`.families.ENCODER_FAMILIES`
lists the families and :func:`.families.register_encoder` adds one.  Image features computed
elsewhere are read from a file by image id (:mod:`.precomputed`, the family ``features``).  A
model named by a hub id loads from the local cache or fails at once with what to do when it cannot
be downloaded (:mod:`.hub`); the PyTorch libraries are imported through
:mod:`.torchvision_compat`, which copes with a torchvision whose C++ operators do not load.
"""

from .base import Encoder, PairScorer
from .paired import PairedEncoder
from .store import EmbeddingStore

__all__ = [
    "Encoder",
    "PairScorer",
    "PairedEncoder",
    "EmbeddingStore",
    "MiniLMTextEncoder",
    "ViTImageEncoder",
    "EfficientNetLiteImageEncoder",
]


def __getattr__(name):
    # The ONNX encoders import nothing heavy at module level, but keep them lazy
    # so that `import kcca_desc.adapters` never touches the optional stack.
    if name in ("MiniLMTextEncoder", "ViTImageEncoder"):
        from . import onnx_models

        return getattr(onnx_models, name)
    if name == "EfficientNetLiteImageEncoder":
        from .efficientnet import EfficientNetLiteImageEncoder

        return EfficientNetLiteImageEncoder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
