"""The seed papers' neural models, trained here over frozen image features (PyTorch, optional extra ``torch``).

* :class:`VSEEncoder` — Kiros, Salakhutdinov & Zemel (2014), with the VSE++ hardest-negative
  loss (Faghri et al. 2018) as an option;
* :class:`CharGRUEncoder` — Merkx & Frank (2019), character-level bi-GRU with attention pooling
  and snapshot ensembling;
* :class:`ReiRelevanceScorer` — Rei & Yannakoudakis (2017), the gated, cross-conditioned
  relevance scorer (a :class:`~kcca_desc.adapters.PairScorer`; :data:`REI_ABLATION`).

All share one seeded, checkpointed and resumable training loop (:mod:`.training`) and the
losses of :mod:`.losses`.  The encoders are ``joint_space``: wrap them in
:class:`~kcca_desc.methods.EncoderMethod`; wrap the scorer in
:class:`~kcca_desc.methods.PairScorerMethod`.
"""

from .char_gru import CharGRUEncoder
from .losses import bidirectional_hinge_loss, hinge_loss, softmax_cross_entropy_loss
from .rei import REI_ABLATION, ReiRelevanceScorer
from .training import TrainableModel, recall_sum
from .vse import VSEEncoder

__all__ = ["VSEEncoder", "CharGRUEncoder", "ReiRelevanceScorer", "TrainableModel", "REI_ABLATION", "hinge_loss",
           "bidirectional_hinge_loss", "softmax_cross_entropy_loss", "recall_sum"]
