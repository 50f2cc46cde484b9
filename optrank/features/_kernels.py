"""The Gaussian kernel and the dissertation's bandwidth rule.

Parametrisation: ``k(x, y) = exp(-gamma ||x - y||^2)``. The dissertation states its
Nystrom bandwidth as ``sigma`` = the average squared distance between the first 80k
instances and their mean; we read it as ``k(x, y) = exp(-||x - y||^2 / sigma)``, i.e.
``gamma = 1 / sigma`` (for standardised data ``sigma`` is about the number of
features, so ``gamma`` is about ``1 / d``, like scikit-learn's ``gamma="scale"``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms, safe_sparse_dot
from sklearn.utils.sparsefuncs import mean_variance_axis

from optrank._validation import canonical, is_positive

FOURIER_GAMMA = 1.0 / (2.0 * 100.0**2)
"""The default kernel parameter of the online Fourier learners (FCBR, FOAM): the
dissertation's width ``sigma = 100`` (section 5.4.2), ``gamma = 1 / (2 sigma^2) = 5e-5``."""

BANDWIDTH_ROWS = 80_000


def squared_distances(X, Y) -> np.ndarray:
    """Matrix of ``||x_i - y_j||^2`` (dense or CSR inputs), clipped at 0.

    Examples
    --------
    >>> squared_distances(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])).tolist()
    [[25.0]]
    """
    X, Y = canonical(X), canonical(Y)  # row_norms squares stored values one by one
    xx = row_norms(X, squared=True)[:, None]
    yy = row_norms(Y, squared=True)[None, :]
    d2 = xx + yy - 2.0 * np.asarray(safe_sparse_dot(X, Y.T, dense_output=True))
    return np.maximum(d2, 0.0)


BLOCK_ROWS = 4096
"""Rows per block of a feature map's ``transform``: its ``n x m`` temporaries (distances,
kernel values, projections) stay at ``BLOCK_ROWS x m``; 1600 landmarks: 52 MB each."""


def row_blocks(fn, X, width: int, block_rows: int | None = None, dtype=np.float64) -> np.ndarray:
    """``fn`` applied to consecutive blocks of rows of ``X`` (dense or CSR), written into
    one ``(n, width)`` array of ``dtype`` (each block is computed in ``fn``'s precision
    and rounded once, on writing).

    Examples
    --------
    >>> row_blocks(lambda B: 2 * B, np.arange(6.0).reshape(3, 2), 2, block_rows=2).tolist()
    [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]
    """
    block_rows = BLOCK_ROWS if block_rows is None else int(block_rows)
    n = X.shape[0]
    out = np.empty((n, width), dtype=dtype)
    for start in range(0, n, block_rows):
        stop = min(n, start + block_rows)
        out[start:stop] = fn(X[start:stop])
    return out


OUTPUT_DTYPES = ("float64", "float32")
"""Output precisions of the feature maps (``dtype=``)."""


def output_dtype(dtype) -> np.dtype:
    """``dtype`` checked against :data:`OUTPUT_DTYPES` (names or numpy types).

    Examples
    --------
    >>> output_dtype("float32")
    dtype('float32')
    """
    try:
        out = np.dtype(dtype)
    except TypeError:
        out = None
    if out is None or out.name not in OUTPUT_DTYPES:
        raise ValueError(f"dtype must be one of {OUTPUT_DTYPES}, got {dtype!r}")
    return out


def tag_dtype(dtype) -> str:
    """The output dtype's name for scikit-learn's ``preserves_dtype`` tag: a map keeps
    input of that dtype (and writes it whatever the input); ``"float64"`` while the
    parameter is invalid (``fit`` reports it)."""
    try:
        return output_dtype(dtype).name
    except ValueError:
        return "float64"


def gaussian_kernel(X, Y, gamma: float) -> np.ndarray:
    """Gaussian kernel matrix ``exp(-gamma ||x_i - y_j||^2)``.

    Examples
    --------
    >>> round(float(gaussian_kernel(np.zeros((1, 2)), np.ones((1, 2)), 0.5)[0, 0]), 6)
    0.367879
    """
    return np.exp(-gamma * squared_distances(X, Y))


def bandwidth_rule(X, n_rows: int = BANDWIDTH_ROWS) -> float:
    """Average squared distance of the first ``n_rows`` rows to their mean (``sigma``).

    The default kernel of NBAM/FBAM is then ``gamma = 1 / sigma`` (see module notes).

    Examples
    --------
    >>> bandwidth_rule(np.array([[0.0, 0.0], [2.0, 0.0]]))
    1.0
    """
    head = X[:n_rows]
    if sp.issparse(head):  # the sum of the columns' (population) variances, two-pass
        return float(np.sum(mean_variance_axis(canonical(sp.csr_matrix(head, dtype=np.float64)),
                                               axis=0)[1]))
    head = np.asarray(head, dtype=np.float64)
    mean = head.mean(axis=0)
    # centred before squaring: ||x||^2 - 2 x.m + ||m||^2 cancels on data with a large
    # offset (sigma 7.5 for 4.9 at an offset of 1e8); in blocks, no n x d copy
    total = sum(float(row_norms(head[i:i + BLOCK_ROWS] - mean, squared=True).sum())
                for i in range(0, len(head), BLOCK_ROWS))
    return total / len(head)


def default_gamma(X, gamma: float | None = None) -> float:
    """``gamma`` if given, else ``1 / bandwidth_rule(X)`` (1.0 for constant data)."""
    if gamma is not None:
        # is_positive before any comparison: gamma="scale" (scikit-learn's spelling) would
        # otherwise be a TypeError about '>' between str and int
        if not is_positive(gamma):
            raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
        return float(gamma)
    sigma = bandwidth_rule(X)
    if not sigma > 0:
        return 1.0
    if not np.isfinite(1.0 / sigma):
        raise ValueError(f"the bandwidth rule gives sigma = {sigma!r} (features of "
                         "magnitude ~1e-150 or below): scale X or pass gamma")
    return 1.0 / sigma
