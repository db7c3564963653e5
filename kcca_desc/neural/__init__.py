"""The seed papers' neural models, trained here over frozen image features (PyTorch, optional extra ``torch``).

* :class:`VSEEncoder` — Kiros, Salakhutdinov & Zemel (2014), with the VSE++ hardest-negative
  loss (Faghri et al. 2018) as an option;
* :class:`CharGRUEncoder` — Merkx & Frank (2019), character-level bi-GRU with attention pooling
  and snapshot ensembling;
* :class:`ReiRelevanceScorer` — Rei (2017), the gated, cross-conditioned
  relevance scorer (a :class:`~kcca_desc.adapters.PairScorer`; :data:`REI_ABLATION`).

The encoders are ``joint_space``: wrap them in :class:`~kcca_desc.methods.EncoderMethod`; wrap
the scorer in :class:`~kcca_desc.methods.PairScorerMethod`.

Its modules. Models: :mod:`.vse`, :mod:`.char_gru`, :mod:`.rei` (networks and estimators), :mod:`.joint`
(the joint-embedding estimator base), :mod:`.word_vectors` (pre-trained word embeddings) and
:mod:`.losses`.  Training, shared by all: :mod:`.training` (:class:`TrainableModel`, the
estimator base: parameters, tokens, checkpoint keys, ``fit``), :mod:`.trainer` (the epoch loop),
:mod:`.early_stopping` (dev patience), :mod:`.snapshots` (the kept weights), :mod:`.dev` (the dev
R-sum, ranked by :mod:`kcca_desc.evaluate.ranks`), :mod:`.schedules` (learning rates),
:mod:`.checkpoints` (the checkpoint file) and :mod:`.lineage` (runs that extend earlier ones).
"""

from ._torch import torch_module
from .char_gru import CharGRUEncoder
from .dev import recall_sum
from .losses import bidirectional_hinge_loss, hinge_loss, softmax_cross_entropy_loss
from .rei import REI_ABLATION, ReiRelevanceScorer
from .training import TrainableModel
from .vse import VSEEncoder

__all__ = ["VSEEncoder", "CharGRUEncoder", "ReiRelevanceScorer", "TrainableModel", "REI_ABLATION", "hinge_loss",
           "bidirectional_hinge_loss", "softmax_cross_entropy_loss", "recall_sum", "torch_module"]
