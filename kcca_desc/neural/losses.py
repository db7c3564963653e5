"""Ranking losses over a mini-batch's score matrix (PyTorch).

Every loss takes ``scores``, a (B, B) tensor with ``scores[i, j]`` the affinity of image i and
text j, whose diagonal holds the B matching pairs; every off-diagonal entry is a contrastive
pair (the batch holds one caption per image, so none is a hidden positive).
"""

from __future__ import annotations

from .._core.errors import ParameterError

__all__ = ["hinge_loss", "bidirectional_hinge_loss", "softmax_cross_entropy_loss", "DIRECTIONS"]

#: "annotation": an image ranks the texts (row i against its wrong texts);
#: "search": a text ranks the images (column j against its wrong images).
DIRECTIONS = ("annotation", "search")


def hinge_loss(scores, *, margin: float = 0.2, directions=DIRECTIONS, hardest: bool = False):
    """Pairwise ranking loss with margin α, averaged over the batch.

    Sum over negatives (Kiros, Salakhutdinov & Zemel 2014, eq. 1; Merkx & Frank 2019, §3.1.2)::

        L = 1/B Σ_i [ Σ_{k≠i} max(0, α − s_ii + s_ik) + Σ_{k≠i} max(0, α − s_ii + s_ki) ]

    ``hardest=True`` keeps only the largest term of each inner sum, the hardest negative
    (Faghri et al. 2018, VSE++, eq. 4).  ``directions`` selects the inner sums: Rei
    (2017, eq. 7) uses the first (each image against wrong texts) only.

    Parameters
    ----------
    scores : torch.Tensor of shape (B, B)
    margin : float
    directions : sequence of {"annotation", "search"}
    hardest : bool
    """
    import torch

    unknown = set(directions) - set(DIRECTIONS)
    if unknown or not directions:
        raise ParameterError(f"directions must be a non-empty subset of {DIRECTIONS}, got {tuple(directions)}")
    positive = scores.diag()
    off_diagonal = ~torch.eye(len(scores), dtype=torch.bool, device=scores.device)
    total = scores.new_zeros(())
    for direction in directions:
        # Row i of `per_query` holds query i's hinge against each candidate.
        per_query = scores if direction == "annotation" else scores.T
        cost = (margin - positive[:, None] + per_query).clamp(min=0) * off_diagonal
        total = total + (cost.max(dim=1).values.sum() if hardest else cost.sum())
    return total / len(scores)


def bidirectional_hinge_loss(image_emb, text_emb, *, margin: float = 0.2, hardest: bool = False):
    """:func:`hinge_loss` of both directions on the cosines of unit-normalised (B, d) embeddings."""
    return hinge_loss(image_emb @ text_emb.T, margin=margin, directions=DIRECTIONS, hardest=hardest)


def softmax_cross_entropy_loss(scores):
    """Cross-entropy of each image's matching text under a softmax over the batch's texts.

    Rei (2017, §2.3, eqs. 9–11)::

        p_i = exp(s_ii) / Σ_j exp(s_ij),      L = −1/B Σ_i log p_i

    (the paper sums over the batch; the mean only rescales the learning rate).
    """
    import torch

    target = torch.arange(len(scores), device=scores.device)
    return torch.nn.functional.cross_entropy(scores, target)
