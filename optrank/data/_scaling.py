"""Feature scaling fitted on training data only: standardisation and [-1, 1] ranges."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class Standardizer:
    """Zero mean and unit variance per feature, fitted on the training set.

    Dense input is centred and scaled. CSR input is only scaled (divided by the
    standard deviation, never centred), so it stays sparse and is never densified.
    Zero-variance features get scale 1 (dense: they become 0 after centring).

    Attributes
    ----------
    mean_ : ndarray of shape (d,)
    scale_ : ndarray of shape (d,)
        Standard deviation, with 1.0 for constant features.
    with_mean_ : bool
        Whether ``transform`` centres (False after fitting on CSR input).

    Examples
    --------
    >>> X = np.array([[1.0, 5.0], [3.0, 5.0]])
    >>> Standardizer().fit(X).transform(X).tolist()
    [[-1.0, 0.0], [1.0, 0.0]]
    """

    def fit(self, X) -> Standardizer:
        """Learn per-feature mean and standard deviation from ``X``."""
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
            X.sum_duplicates()
            _check_training(X, "Standardizer")
            n, d = X.shape
            mean = np.asarray(X.mean(axis=0)).ravel()
            # two passes over the stored values: E[x^2] - mean^2 loses the variance of a
            # constant column to rounding (1e-17 instead of 0, then a 1e8 scale)
            dev = X.data - mean[X.indices]
            stored = np.bincount(X.indices, weights=dev * dev, minlength=d)
            zeros = n - np.bincount(X.indices, minlength=d)
            var = (stored + zeros * mean**2) / n
            self.with_mean_ = False
        else:
            X = np.asarray(X, dtype=np.float64)
            _check_training(X, "Standardizer")
            mean, var = X.mean(axis=0), X.var(axis=0)
            self.with_mean_ = True
        std = np.sqrt(np.maximum(var, 0.0))
        self.mean_ = mean
        self.scale_ = np.where(std > 1e-12 * np.maximum(1.0, np.abs(mean)), std, 1.0)
        return self

    def transform(self, X):
        """Standardise ``X`` with the fitted statistics (CSR: scale only)."""
        _check_fitted(self, "scale_", X)
        if sp.issparse(X):
            if self.with_mean_:
                raise ValueError("this Standardizer was fitted on dense data and centres; a "
                                 "sparse X would be scaled without centring: transform dense "
                                 "data (X.toarray()), or fit on CSR (scale only)")
            return sp.csr_matrix(X, dtype=np.float64) @ sp.diags(1.0 / self.scale_, format="csr")
        X = np.asarray(X, dtype=np.float64)
        return ((X - self.mean_) if self.with_mean_ else X) / self.scale_

    def fit_transform(self, X):
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)


class MinMaxScaler:
    """Map each feature linearly onto ``feature_range`` (default [-1, 1]) using train ranges.

    This is LIBSVM ``svm-scale -l -1 -u 1``, used by paper 003 ("features scaled to
    [-1, 1]"). Test values outside the training range fall outside the target range
    (no clipping). Constant features map to the middle of the range. Dense input only:
    shifting a sparse matrix would densify it (use :class:`Standardizer` for CSR).

    Examples
    --------
    >>> X = np.array([[0.0, 2.0], [10.0, 2.0], [5.0, 2.0]])
    >>> MinMaxScaler().fit(X).transform(X).tolist()
    [[-1.0, 0.0], [1.0, 0.0], [0.0, 0.0]]
    """

    def __init__(self, feature_range: tuple[float, float] = (-1.0, 1.0)):
        self.feature_range = feature_range

    def fit(self, X) -> MinMaxScaler:
        """Learn per-feature minimum and maximum from ``X``."""
        low, high = self.feature_range
        if not low < high:
            raise ValueError(f"feature_range={self.feature_range} needs low < high")
        X = _dense(X)
        _check_training(X, "MinMaxScaler")
        self.data_min_, self.data_max_ = X.min(axis=0), X.max(axis=0)
        return self

    def transform(self, X) -> np.ndarray:
        """Scale ``X`` with the fitted ranges."""
        _check_fitted(self, "data_min_", X)
        low, high = self.feature_range
        X = _dense(X)
        span = self.data_max_ - self.data_min_
        constant = span <= 0
        unit = (X - self.data_min_) / np.where(constant, 1.0, span)
        return np.where(constant, (low + high) / 2.0, low + unit * (high - low))

    def fit_transform(self, X) -> np.ndarray:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)


def _dense(X) -> np.ndarray:
    if sp.issparse(X):
        raise TypeError(
            "MinMaxScaler would densify a sparse matrix (it shifts every value); "
            "pass X.toarray() explicitly or use Standardizer, which scales CSR in place"
        )
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
    return X


def _check_training(X, scaler: str) -> None:
    """Refuse training data whose statistics would be NaN (or scalar) without a word: a
    NaN or inf makes its column's mean NaN and every transformed value in it NaN, no rows
    gives NaN statistics, 1-D input a scalar mean that fails later."""
    if X.ndim != 2:
        raise ValueError(f"{scaler}.fit: X must be two-dimensional (n, d), got shape "
                         f"{X.shape}; reshape a single feature with X.reshape(-1, 1)")
    if X.shape[0] == 0:
        raise ValueError(f"{scaler}.fit: X has no rows (shape {X.shape}); fit on the "
                         "training rows")
    values = X.data if sp.issparse(X) else X
    bad = ~np.isfinite(values)
    if bad.any():
        if sp.issparse(X):  # the first stored non-finite value, placed by row and column
            k = int(np.argmax(bad))
            row, col = int(np.searchsorted(X.indptr, k, side="right")) - 1, int(X.indices[k])
        else:
            row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{scaler}.fit: X has {int(bad.sum())} non-finite values (NaN or inf), the first "
            f"at row {row}, column {col}; load with missing='drop' or 'impute-mean' "
            "(load, read_table, read_keel) or impute before scaling"
        )


def _check_fitted(scaler, attribute: str, X) -> None:
    if not hasattr(scaler, attribute):
        raise RuntimeError(f"{type(scaler).__name__} is not fitted; call fit(X_train) first")
    d = getattr(scaler, attribute).shape[0]
    shape = X.shape if sp.issparse(X) else np.shape(X)
    if len(shape) != 2 or shape[1] != d:
        raise ValueError(f"X has shape {shape}, the scaler was fitted on {d} features")
