"""Retrieval systems: the method protocol, nearest-neighbour baselines and KCCA rankers."""

from .base import DirectionalScores, RetrievalMethod, TwoTowerMethod, cosine_scores

__all__ = ["DirectionalScores", "RetrievalMethod", "TwoTowerMethod", "cosine_scores"]
