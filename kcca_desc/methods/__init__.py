"""Retrieval systems: the method protocol, nearest-neighbour baselines and KCCA rankers."""

from .base import DirectionalScores, RetrievalMethod, TwoTowerMethod, cosine_scores
from .nn import NearestNeighbour, idf_f1_similarity

__all__ = ["DirectionalScores", "RetrievalMethod", "TwoTowerMethod", "cosine_scores", "NearestNeighbour", "idf_f1_similarity"]
