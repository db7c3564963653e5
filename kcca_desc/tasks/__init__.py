"""The other seed papers' evaluation tasks, for any retrieval method or representation.

* :mod:`.offtopic` — off-topic response detection (Rei 2017);
* :mod:`.forced_choice` — 1-of-N caption choice;
* :mod:`.vsts` — visual semantic textual similarity (Lopez de Lacalle et al. 2020);
* :mod:`.metrics` — AP, P@k, leave-one-out threshold accuracy, Pearson r;
* :mod:`.intervals` — bootstrap intervals of those figures (queries, pairs or sentence pairs
  resampled), written beside them under ``"ci"`` as in a retrieval result;
* :mod:`.registry` — :data:`TASKS`, the tasks by name with one signature
  ``task(method, view, *, seed=0) -> dict`` (retrieval, forced choice, off-topic).
"""

from .intervals import forced_choice_intervals, off_topic_intervals, pearson_interval
from .forced_choice import evaluate_forced_choice, forced_choice_candidates, forced_choice_metrics
from .metrics import average_precision, leave_one_out_threshold_accuracy, pearson_r, precision_at_k
from .offtopic import evaluate_off_topic, mean_sentence_scores, off_topic_metrics, off_topic_pairs
from .registry import RETRIEVAL, TASKS, Task
from .vsts import (VSTSPairs, cosine_similarity_correlations, fit_siamese_regressor, load_vsts,
                   seen_images, siamese_features)

__all__ = [
    "average_precision", "precision_at_k", "leave_one_out_threshold_accuracy", "pearson_r",
    "off_topic_pairs", "mean_sentence_scores", "off_topic_metrics", "evaluate_off_topic",
    "forced_choice_candidates", "forced_choice_metrics", "evaluate_forced_choice",
    "VSTSPairs", "load_vsts", "seen_images", "cosine_similarity_correlations",
    "siamese_features", "fit_siamese_regressor", "TASKS", "Task", "RETRIEVAL",
    "forced_choice_intervals", "off_topic_intervals", "pearson_interval",
]
