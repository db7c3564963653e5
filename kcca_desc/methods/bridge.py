"""Classical models over any encoder's features.

:class:`FeatureBridgeMethod` learns a joint space between the image and text
features of an :class:`~kcca_desc.adapters.Encoder` (whose two spaces need not
be related) with the classical systems of Hodosh et al. (2013):

* ``model="cca"``, ``kernel="linear"`` — regularised linear CCA
  (:class:`kcca_desc.kcca.linear.LinearCCA`);
* ``model="cca"``, ``kernel="rbf"`` — kernel CCA (:class:`kcca_desc.kcca.KCCA`,
  ridge form α'K²α + κα'Kα) with Gaussian kernels k(a, b) = exp(−γ‖a − b‖²)
  on each side, solved through a rank-``rank`` pivoted incomplete Cholesky
  factor whose columns are computed on demand (the 30,000 × 30,000 Flickr8K
  kernel is never formed);
* ``model="nn"`` — the nearest-neighbour baseline (NN5; Hodosh et al. 2013, Section 3.1) with cosine
  similarities of the features in place of the classical kernels.

For CCA models f(i, s) = cos(D P_x(i), D P_y(s)) with D = diag(ρ_k^p), the
canonical correlations raised to ``weight_power``.  ``reg`` is the relative
ridge of :class:`~kcca_desc.kcca.linear.LinearCCA` for the linear kernel and
KCCA's κ (on the scale of the centred kernel's eigenvalues) for the RBF kernel.
"""

from __future__ import annotations

import copy
import time
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics.pairwise import rbf_kernel

from .._core.errors import DataError, NotFittedError, ParameterError
from ..data.dataset import Dataset, require_dataset
from ..data.images import ImageSource
from ..kcca import KCCA, CallableKernelColumns
from ..adapters.base import Encoder
from ..kcca.linear import LinearCCA
from ..kcca.scoring import correlation_weights
from ..evaluate.scores import DirectionalScores, cosine_scores
from .._core.validation import FINITE_REAL, POSITIVE_INT, POSITIVE_REAL, SEED, HasMethods, StrOptions
from .base import RetrievalMethod, WrapsModel, keep_below_training_size, keep_supported_components
from .nn import nearest_neighbour_scores

__all__ = ["FeatureBridgeMethod", "median_gamma", "training_pairs"]

#: The canonical dimensions a CCA bridge keeps unless told otherwise (cut on small data).
DEFAULT_N_COMPONENTS = 128


def median_gamma(X: np.ndarray, *, n_sample: int = 1000, random_state: int = 0) -> float:
    """γ = 1 / median squared distance between rows of a seeded sample of ``X``.

    The usual median heuristic for the RBF bandwidth (Schölkopf & Smola 2002).
    """
    rng = np.random.default_rng(random_state)
    idx = rng.choice(len(X), size=min(n_sample, len(X)), replace=False)
    S = np.asarray(X[idx], dtype=np.float64)
    sq = np.sum(S ** 2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * S @ S.T, 0.0)
    med = np.median(d2[np.triu_indices(len(S), k=1)]) if len(S) > 1 else 0.0
    if not med > 0:
        raise DataError("median_gamma: all sampled feature vectors are identical; cannot set an RBF bandwidth")
    return 1.0 / med


def training_pairs(train: Dataset) -> tuple[np.ndarray, list[str]]:
    """Every (image index, caption) pair of ``train``: 5 per Flickr8K image."""
    image_of = [i for i, caps in enumerate(train.captions) for _ in caps]
    texts = [c for caps in train.captions for c in caps]
    return np.asarray(image_of, dtype=np.int64), texts


class FeatureBridgeMethod(WrapsModel, BaseEstimator, RetrievalMethod):
    """NN, linear CCA or RBF-kernel CCA over an encoder's image and text features.

    Parameters
    ----------
    encoder : Encoder
        Embeds both images and texts (e.g. ``PairedEncoder(ViTImageEncoder(), MiniLMTextEncoder())``).
    model : {"cca", "nn"}, default="cca"
    kernel : {"linear", "rbf"}, default="linear"
        Kernel of both views for ``model="cca"``.
    n_components : int, default=128
        Canonical dimensions kept.  With the RBF kernel, the default is cut, with a warning, to the
        canonical pairs KCCA can find (fewer than the training images, at most ``rank``, at most the
        numerical rank of the training kernels), so that small data run on the defaults; a value
        the user chose above them is an error.
    reg : float, default=1e-2
        Relative ridge of :class:`~kcca_desc.kcca.linear.LinearCCA` (linear
        kernel) or KCCA's κ (RBF kernel).
    weight_power : float, default=1.0
        Exponent p of the canonical-correlation weights; 0 gives a plain cosine.
    rank : int, default=2000
        Maximum rank of each incomplete Cholesky factor (``kernel="rbf"``).
    gamma_scale : float, default=1.0
        γ = gamma_scale × the median heuristic (:func:`median_gamma`) per view.
    random_state : int, default=0
        Seeds the bandwidth sample.

    Attributes
    ----------
    n_components_ : int
        Canonical dimensions used (``model="cca"``): ``n_components``, or fewer where the training
        data support fewer (see ``n_components``).
    timings_s_ : dict
        Seconds spent embedding the training items (``"embed"``) and fitting the model
        (``"model"``).

    References
    ----------
    Hodosh, M., Young, P. & Hockenmaier, J. (2013). Framing image description as
    a ranking task. JAIR 47.

    Hardoon, D., Szedmak, S. & Shawe-Taylor, J. (2004). Canonical correlation
    analysis: an overview with application to learning methods. Neural Comp. 16.

    Bach, F. & Jordan, M. (2002). Kernel independent component analysis. JMLR 3.
    """

    _parameter_constraints = {
        "encoder": [HasMethods(["embed_images", "embed_texts"])],
        "model": [StrOptions({"cca", "nn"})],
        "kernel": [StrOptions({"linear", "rbf"})],
        "n_components": [POSITIVE_INT],
        "reg": [POSITIVE_REAL],
        "weight_power": [FINITE_REAL],
        "rank": [POSITIVE_INT],
        "gamma_scale": [POSITIVE_REAL],
        "random_state": [SEED],
    }
    _model_attribute = "encoder"

    def __init__(self, encoder: Encoder, *, model: str = "cca", kernel: str = "linear",
                 n_components: int = DEFAULT_N_COMPONENTS, reg: float = 1e-2, weight_power: float = 1.0,
                 rank: int = 2000, gamma_scale: float = 1.0, random_state: int = 0):
        self.encoder = encoder
        self.model = model
        self.kernel = kernel
        self.n_components = n_components
        self.reg = reg
        self.weight_power = weight_power
        self.rank = rank
        self.gamma_scale = gamma_scale
        self.random_state = random_state

    @property
    def name(self) -> str:
        """System name: ``"nn_<encoder>"``, ``"cca_<encoder>"`` or ``"kcca_<encoder>"`` (RBF kernel)."""
        model = "nn" if self.model == "nn" else ("kcca" if self.kernel == "rbf" else "cca")
        return f"{model}_{self.encoder.label}"

    # ------------------------------------------------------------------ fit
    def fit(self, train: Dataset) -> "FeatureBridgeMethod":
        self._validate_params()
        require_dataset(train, f"{type(self).__name__}.fit")
        # Known before any feature is computed, so that a value the user chose fails at once.
        rbf = self.model == "cca" and self.kernel == "rbf"
        n_components = self._supported_n_components(len(train)) if rbf else self.n_components
        start = time.perf_counter()
        image_of, texts = training_pairs(train)
        X = self.encoder.embed_images(train.images).astype(np.float64)
        Y = self.encoder.embed_texts(texts).astype(np.float64)
        embedded = time.perf_counter()
        self._fit_model(X, Y, image_of, n_components)
        self.timings_s_ = {"embed": embedded - start, "model": time.perf_counter() - embedded}
        return self

    def _supported_n_components(self, n_train: int) -> int:
        """``n_components``, or fewer where ``n_train`` training images or ``rank`` support fewer.

        Both limits are known before any work: n_train - 1 (:func:`~.base.keep_below_training_size`)
        and the rank ``rank`` of the incomplete Cholesky factors.
        """
        kept = keep_below_training_size(self, (self.n_components,), n_train, default=DEFAULT_N_COMPONENTS)
        return keep_supported_components(
            self, kept, self.rank, f"at most rank={self.rank} (the incomplete Cholesky factors' rank)",
            f"KCCA factors of rank {self.rank} give at most {self.rank} canonical pairs",
            default=DEFAULT_N_COMPONENTS)[0]

    def _fit_model(self, X: np.ndarray, Y: np.ndarray, image_of: np.ndarray, n_components: int) -> None:
        if self.model == "nn":
            self.train_images_ = X
            self.train_texts_ = Y
            self.train_text_image_ = image_of
            # The five captions of an image form one document (NN5): its mean vector.
            counts = np.bincount(image_of, minlength=len(X))[:, None]
            self.train_documents_ = np.zeros((len(X), Y.shape[1]))
            np.add.at(self.train_documents_, image_of, Y)
            self.train_documents_ /= counts
        elif self.kernel == "rbf":
            self._fit_kcca(X[image_of], Y, n_components)
        else:
            self.cca_ = LinearCCA(n_components=self.n_components, reg=self.reg).fit(X[image_of], Y)
            self.n_components_ = self.n_components
            self.dimension_weights_ = correlation_weights(self.cca_.correlations_, self.weight_power, owner=self)

    def _fit_kcca(self, X: np.ndarray, Y: np.ndarray, n_components: int) -> None:
        self.gammas_ = tuple(self.gamma_scale * median_gamma(V, random_state=self.random_state)
                             for V in (X, Y))
        self.kcca_train_ = (X, Y)
        columns = [
            CallableKernelColumns(
                n_samples=len(V),
                columns_fn=lambda idx, V=V, g=g: rbf_kernel(V, V[idx], gamma=g),
                diagonal_fn=lambda V=V: np.ones(len(V)))
            for V, g in zip((X, Y), self.gammas_)]
        # Clipped to the kernels' numerical rank, known only once they are factored (repeated or
        # alike items lower it), and then cut like the limits known before.
        self.kcca_ = KCCA(n_components=n_components, reg=self.reg, kernel_x="precomputed",
                          kernel_y="precomputed", method="lowrank", rank=self.rank,
                          weight_power=self.weight_power, clip_to_rank=True).fit(*columns)
        pairs = self.kcca_.n_components_
        keep_supported_components(
            self, (n_components,), pairs, f"at most {pairs}, the rank of the training kernels",
            f"the training kernels have numerical rank {pairs}, so KCCA finds at most {pairs} canonical pairs",
            default=DEFAULT_N_COMPONENTS)
        self.n_components_ = pairs

    def with_params(self, **params) -> "FeatureBridgeMethod":
        """A fitted copy with another ``weight_power`` and, for the RBF kernel, another ``reg``.

        Changing ``weight_power`` only re-weights the canonical dimensions;
        changing ``reg`` of an RBF bridge re-solves KCCA on the same incomplete
        Cholesky factors (:meth:`kcca_desc.kcca.KCCA.with_params`).  The linear
        bridge must be refitted to change ``reg``.

        Parameters
        ----------
        **params
            ``weight_power`` (both kernels) and ``reg`` (``kernel="rbf"`` only).

        Returns
        -------
        FeatureBridgeMethod
            A shallow copy sharing the fitted model's training data and factors;
            ``self`` is unchanged.
        """
        if self.model != "cca" or not any(hasattr(self, a) for a in ("cca_", "kcca_")):
            raise ParameterError("with_params needs a fitted CCA bridge (model='cca')")
        allowed = {"weight_power", "reg"} if self.kernel == "rbf" else {"weight_power"}
        if not set(params) <= allowed:
            raise ParameterError(f"with_params changes only {sorted(allowed)} of a {self.kernel}-kernel bridge; "
                             f"refit to change {sorted(set(params) - allowed)}")
        clone = copy.copy(self)
        for name, value in params.items():
            setattr(clone, name, value)
        if self.kernel == "rbf":
            clone.kcca_ = self.kcca_.with_params(**params)
        else:
            clone.dimension_weights_ = self.cca_.correlations_ ** clone.weight_power
        return clone

    # ---------------------------------------------------------------- score
    def project_images(self, images: ImageSource) -> np.ndarray:
        """Weighted canonical projections of images, (n, n_components)."""
        return self._project(self.encoder.embed_images(images), 0)

    def project_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Weighted canonical projections of texts, (m, n_components)."""
        return self._project(self.encoder.embed_texts(list(texts)), 1)

    def _project(self, V: np.ndarray, side: int, chunk: int = 2000) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        if self.kernel == "linear":
            transform = (self.cca_.transform_x, self.cca_.transform_y)[side]
            return transform(V) * self.dimension_weights_
        train, gamma = self.kcca_train_[side], self.gammas_[side]
        if len(V) == 0:
            return np.zeros((0, self.n_components_))
        # Kernel rows against the training items, a chunk at a time (30,000 columns each).
        view = "XY"[side]
        return np.concatenate([self.kcca_.transform(**{view: rbf_kernel(V[s:s + chunk], train, gamma=gamma)})
                               for s in range(0, len(V), chunk)])

    def score(self, images: ImageSource, captions: Sequence[str]) -> np.ndarray | DirectionalScores:
        if not any(hasattr(self, a) for a in ("cca_", "kcca_", "train_images_")):
            raise NotFittedError(f"{type(self).__name__} is not fitted; call fit(train) first")
        if self.model == "nn":
            return self._nn_scores(images, captions)
        return cosine_scores(self.project_images(images), self.project_texts(captions))

    def _nn_scores(self, images: ImageSource, captions: Sequence[str]) -> DirectionalScores:
        X = self.encoder.embed_images(images)
        Y = self.encoder.embed_texts(list(captions))
        # Annotation through the nearest training image's document (its captions' mean vector);
        # search through the image of the nearest training caption.
        return nearest_neighbour_scores(cosine_scores(X, self.train_images_), cosine_scores(Y, self.train_documents_),
                                        caption_to_texts=cosine_scores(Y, self.train_texts_),
                                        text_item=self.train_text_image_)
