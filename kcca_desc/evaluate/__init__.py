"""Evaluation: gold ranks and retrieval metrics, the harness, results tables,
judgment-based metrics and statistics (Hodosh, Young & Hockenmaier 2013, Sections 4.2 and 4.3)."""

from .harness import evaluate_fitted, evaluate_method, result_from_scores
from .judgments import (
    EXPERT_THRESHOLDS,
    crowd_metrics,
    crowd_relevance,
    first_caption_metrics,
    judgment_metrics,
    rouge1_recall,
    simple_tokenize,
    unigram_bleu,
)
from .metrics import METRICS, Metric
from .pools import evaluate_pool, evaluate_pool_folds, fold_average, side_by_side
from .ranks import METRIC_KEYS, TASKS, evaluate_scores, gold_ranks, retrieval_metrics
from .results import Result, format_table, load_results, save_results, to_csv, to_latex, to_markdown
from .statistics import (
    add_confidence_intervals,
    add_significance,
    bootstrap_ci,
    bootstrap_groups,
    bootstrap_intervals,
    cohens_kappa,
    interval_settings,
    kendall_tau,
    mcnemar_test,
    metric_cis,
    paired_randomization_test,
    spearman_rho,
)

__all__ = [
    "gold_ranks", "retrieval_metrics", "evaluate_scores", "TASKS", "METRIC_KEYS", "METRICS", "Metric",
    "evaluate_method", "evaluate_fitted", "result_from_scores", "evaluate_pool", "evaluate_pool_folds", "fold_average",
    "side_by_side",
    "Result", "to_markdown", "to_csv", "to_latex", "format_table", "save_results", "load_results",
    "crowd_relevance", "crowd_metrics", "first_caption_metrics", "judgment_metrics", "unigram_bleu", "rouge1_recall",
    "simple_tokenize", "EXPERT_THRESHOLDS",
    "mcnemar_test", "paired_randomization_test", "bootstrap_ci", "metric_cis", "bootstrap_intervals",
    "interval_settings", "spearman_rho",
    "kendall_tau", "cohens_kappa", "add_confidence_intervals", "add_significance", "bootstrap_groups",
]
