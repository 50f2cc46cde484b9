"""k-means Nystrom features (Zhang et al. 2008; dissertation Algorithm 2)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from optrank._validation import canonical, is_count
from optrank.features._kernels import (
    centred_gaussian_kernel,
    default_gamma,
    offset_center,
    output_dtype,
    row_blocks,
    tag_dtype,
)

_LANDMARKS = ("kmeans", "uniform")


class NystromFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Nystrom embedding ``psi(x) = Sigma_r^{-1/2} U_r^T [k(x, u_1), ..., k(x, u_m)]``.

    Algorithm 2 of the dissertation: landmarks ``u_1..u_m`` (k-means centroids or a
    uniform sample of rows), ``W = k(U, U) = U Sigma U^T``, keep the top ``r``
    eigenpairs (eigenvalues above ``1e-12 * max`` only: the pseudo-inverse), so that
    ``psi(x).psi(y) = k_x^T W_r^+ k_y`` approximates ``k(x, y)``. The kernel is
    Gaussian, ``exp(-gamma ||x - y||^2)``; its distances are taken from ``center_`` when
    the training rows share an offset large against their spread
    (``optrank.features._kernels.offset_center``). Output columns are named
    ``nystromfeatures0, ...`` (``get_feature_names_out``, ``set_output``).

    Parameters
    ----------
    n_components : int
        Number of landmarks ``m`` (capped at the number of rows).
    gamma : float or None
        Kernel parameter; ``None`` uses ``1 / bandwidth_rule(X)``.
    landmarks : {"kmeans", "uniform"}
        Landmark choice.
    rank : int or None
        Rank ``r`` of the approximation (default: all numerically positive eigenvalues).
    kmeans_iter : int
        Lloyd iterations of k-means (a few suffice to spread the landmarks).
    kmeans_init : {"k-means++", "random"}
        Initial centroids; ``"random"`` is cheaper for thousands of landmarks but
        can leave small clusters without a landmark.
    random_state : int, RandomState or None
        Seed for the landmark choice.
    dtype : {"float64", "float32"}
        Precision of ``transform``'s output. Landmarks, kernel values and the
        normalisation stay float64 and each embedded row is rounded once;
        ``"float32"`` halves the embedding's memory.

    Attributes
    ----------
    gamma_ : float
        Kernel parameter used.
    components_ : ndarray of shape (m, n_features)
        The landmarks.
    normalization_ : ndarray of shape (m, r)
        ``U_r Sigma_r^{-1/2}``.
    center_ : ndarray of shape (n_features,) or None
        Mean of the training rows, subtracted from rows and landmarks before their
        distances are taken; ``None`` (the plain form) unless it lies more than
        ``OFFSET_RATIO = 1e3`` times their spread from the origin.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> NystromFeatures(n_components=10, gamma=0.3, random_state=0).fit_transform(X).shape
    (50, 10)
    """

    def __init__(
        self,
        n_components=100,
        gamma=None,
        landmarks="kmeans",
        rank=None,
        kmeans_iter=10,
        kmeans_init="k-means++",
        random_state=None,
        dtype="float64",
    ):
        self.n_components = n_components
        self.gamma = gamma
        self.landmarks = landmarks
        self.rank = rank
        self.kmeans_iter = kmeans_iter
        self.kmeans_init = kmeans_init
        self.random_state = random_state
        self.dtype = dtype

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = [tag_dtype(self.dtype)]
        return tags

    def fit(self, X, y=None):
        """Choose landmarks, factor the landmark kernel matrix."""
        X = canonical(validate_data(self, X, accept_sparse="csr", dtype=np.float64))
        if self.landmarks not in _LANDMARKS:
            raise ValueError(f"landmarks must be one of {_LANDMARKS}, got {self.landmarks!r}")
        if not is_count(self.n_components):
            raise ValueError(f"n_components must be a positive integer, got {self.n_components!r}")
        if self.rank is not None and not (isinstance(self.rank, int | np.integer)
                                          and not isinstance(self.rank, bool) and self.rank > 0):
            raise ValueError(f"rank must be None or a positive integer, got {self.rank!r}")
        output_dtype(self.dtype)
        self.gamma_ = default_gamma(X, self.gamma)
        self.center_ = offset_center(X)
        self.components_ = self._landmarks(X, min(self.n_components, X.shape[0]))
        self.normalization_ = _inverse_sqrt(
            centred_gaussian_kernel(self.components_, self.components_, self.gamma_,
                                    self.center_), self.rank
        )
        return self

    @property
    def _n_features_out(self) -> int:
        """Output width, the kept rank (for ``get_feature_names_out``)."""
        return self.normalization_.shape[1]

    def _landmarks(self, X, m: int) -> np.ndarray:
        rng = check_random_state(self.random_state)
        if self.landmarks == "uniform":
            rows = rng.choice(X.shape[0], size=m, replace=False)
            return _dense(X[np.sort(rows)])
        km = KMeans(
            n_clusters=m,
            init=self.kmeans_init,
            n_init=1,
            max_iter=self.kmeans_iter,
            random_state=rng.randint(2**31 - 1),
        )
        return km.fit(X).cluster_centers_

    def transform(self, X):
        """Embed X: ``k(X, landmarks) @ U_r Sigma_r^{-1/2}``, in blocks of rows (the
        kernel block and its temporaries stay small; only the embedding is ``n x r``)."""
        check_is_fitted(self)
        X = canonical(validate_data(self, X, accept_sparse="csr", dtype=np.float64,
                                    reset=False))
        center = getattr(self, "center_", None)  # None on a map pickled before center_

        def block(B):
            K = centred_gaussian_kernel(B, self.components_, self.gamma_, center)
            return K @ self.normalization_

        return row_blocks(block, X, self._n_features_out, dtype=output_dtype(self.dtype))

    def fitted_arrays(self) -> dict:
        """Fitted state as arrays (for ``.npz`` persistence; ``center_`` only when set)."""
        arrays = {
            "components_": self.components_,
            "normalization_": self.normalization_,
            "gamma_": np.float64(self.gamma_),
        }
        center = getattr(self, "center_", None)
        return arrays if center is None else {**arrays, "center_": center}

    def set_fitted_arrays(self, arrays: dict):
        """Restore the state written by :meth:`fitted_arrays`; returns self."""
        self.components_ = np.asarray(arrays["components_"])
        self.normalization_ = np.asarray(arrays["normalization_"])
        self.gamma_ = float(arrays["gamma_"])
        self.center_ = np.asarray(arrays["center_"]) if "center_" in arrays else None
        self.n_features_in_ = self.components_.shape[1]
        return self


def _inverse_sqrt(W: np.ndarray, rank: int | None) -> np.ndarray:
    """``U_r Sigma_r^{-1/2}`` from the top-``rank`` positive eigenpairs of symmetric W."""
    vals, vecs = np.linalg.eigh(W)
    vals, vecs = vals[::-1], vecs[:, ::-1]
    keep = vals > 1e-12 * max(vals[0], 0.0)
    if rank is not None:
        keep[int(rank) :] = False
    if not keep.any():
        raise ValueError("the landmark kernel matrix has no positive eigenvalue")
    return vecs[:, keep] / np.sqrt(vals[keep])


def _dense(X) -> np.ndarray:
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X)
