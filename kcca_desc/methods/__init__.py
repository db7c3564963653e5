"""Retrieval systems: everything that fits on training data and scores images against captions.

* :class:`ImageSentenceRanker` — the KCCA system of Hodosh et al. (2013), with dev-set model
  selection (:mod:`.selection`) and Borda fusion (:mod:`.fusion`);
* :class:`MultipleKernelRanker` — that system over weighted sums of base kernels
  (:data:`BASE_KERNELS`: the paper's kernels and kernels over encoder features), and
  :class:`ScalableMultipleKernelRanker` the same through landmark columns, without n x n matrices;
* :class:`NearestNeighbour` — the paper's nearest-neighbour baselines;
* :class:`FeatureBridgeMethod` — NN, linear CCA and RBF KCCA over any encoder's features;
* :class:`EncoderMethod`, :class:`PairScorerMethod` — neural encoders and pair scorers
  (:mod:`kcca_desc.adapters`) as systems;
* :data:`SYSTEMS` — the systems the command line runs by name (:mod:`.registry`), each
  :class:`System` declaring its settings as :class:`Setting` objects.

Every system implements :class:`RetrievalMethod` (``fit`` then ``score``); the score types live
in :mod:`kcca_desc.evaluate.scores`, which the evaluation reads without importing this package.
"""

from .base import RetrievalMethod, TwoTowerMethod
from .base_kernels import BASE_KERNELS, BaseKernel, BaseKernelSpec, FeatureKernel, register_feature_kernels
from .bridge import FeatureBridgeMethod
from .encoders import EncoderMethod, PairScorerMethod
from .fusion import borda_fuse
from .multikernel import MultipleKernelRanker
from .nn import NearestNeighbour, idf_f1_similarity
from .ranker import ImageSentenceRanker
from .registry import SYSTEMS, Setting, System
from .scalable_multikernel import ScalableMultipleKernelRanker
from .selection import dev_metrics, recall_sum, select_best, select_models, select_per_task

__all__ = [
    "RetrievalMethod", "TwoTowerMethod", "ImageSentenceRanker", "NearestNeighbour", "idf_f1_similarity",
    "FeatureBridgeMethod", "EncoderMethod", "PairScorerMethod", "borda_fuse", "select_models", "select_per_task",
    "dev_metrics", "recall_sum", "select_best", "SYSTEMS", "System", "Setting",
    "MultipleKernelRanker", "ScalableMultipleKernelRanker", "BASE_KERNELS", "BaseKernel", "BaseKernelSpec",
    "FeatureKernel", "register_feature_kernels",
]
