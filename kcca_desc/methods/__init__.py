"""Retrieval systems: the method protocol, nearest-neighbour baselines and KCCA rankers."""

from .base import RetrievalMethod, TwoTowerMethod, cosine_scores

__all__ = ["RetrievalMethod", "TwoTowerMethod", "cosine_scores"]
