"""Prototype-distance features: Euclidean distances to points, z-scored on training data.

``phi_t(x) = (||x - q_t|| - mu_t) / sd_t`` with ``mu_t, sd_t`` the mean and standard
deviation of ``||x_i - q_t||`` over the training rows. With every training row as a
prototype this is the dissimilarity representation of the Ranking SVM baselines of
Ozcan et al. (2024): one feature per training point.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from optrank._validation import check_matrix


def euclidean_distances(X, Q) -> np.ndarray:
    """``D[i, t] = ||X[i] - Q[t]||`` in float64, from differences (no Gram-matrix round-off).

    Examples
    --------
    >>> euclidean_distances([[0.0, 0.0], [3.0, 4.0]], [[0.0, 0.0]]).ravel().tolist()
    [0.0, 5.0]
    """
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    Q = np.atleast_2d(np.asarray(Q, dtype=np.float64))
    return cdist(X, Q)


def distance_scaling(distances: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations of training distances (sd 0 -> 1)."""
    mean = distances.mean(axis=0)
    sd = distances.std(axis=0)
    return mean, np.where(sd > 1e-12, sd, 1.0)


class DistanceFeatures(TransformerMixin, BaseEstimator):
    """Distances to prototypes (every training row by default), z-scored on ``fit``.

    Parameters
    ----------
    prototypes : array (k, d) or None
        Fixed prototype points; ``None`` uses the rows given to ``fit`` (the
        dissimilarity matrix of the papers' baselines).
    standardize : bool
        Z-score each distance column with the training mean and deviation.

    Attributes
    ----------
    prototypes_ : (k, d) the prototype points.
    mean_, scale_ : (k,) the z-scoring constants (0 and 1 when ``standardize=False``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> F = DistanceFeatures(standardize=False).fit_transform(X)
    >>> F.tolist()
    [[0.0, 1.0, 3.0], [1.0, 0.0, 2.0], [3.0, 2.0, 0.0]]
    """

    def __init__(self, prototypes=None, standardize: bool = True):
        self.prototypes = prototypes
        self.standardize = standardize

    def fit(self, X, y=None):
        """Keep the prototypes (``X`` itself when none were given) and, with
        ``standardize``, the mean and scale of each distance column over ``X``."""
        X = validate_data(self, X, dtype=np.float64)
        if not isinstance(self.standardize, bool | np.bool_):
            raise ValueError(f"standardize must be True or False, got {self.standardize!r}")
        Q = X if self.prototypes is None else np.asarray(self.prototypes, dtype=np.float64)
        if Q.ndim != 2 or Q.shape[1] != X.shape[1]:
            raise ValueError(f"prototypes must have shape (k, {X.shape[1]}), got {Q.shape}")
        Q = check_matrix(Q, "prototypes")
        self.prototypes_ = Q.copy()
        D = euclidean_distances(X, Q)
        if self.standardize:
            self.mean_, self.scale_ = distance_scaling(D)
        else:
            self.mean_, self.scale_ = np.zeros(Q.shape[0]), np.ones(Q.shape[0])
        return self

    def transform(self, X) -> np.ndarray:
        """Euclidean distances of the rows of ``X`` to the prototypes, standardised with the
        fitted mean and scale."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (euclidean_distances(X, self.prototypes_) - self.mean_) / self.scale_
