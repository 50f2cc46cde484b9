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


def squared_distances(X, Y) -> np.ndarray:
    """Matrix of ``||x_i - y_j||^2`` (dense or CSR inputs), clipped at 0.

    Computed as ``||x||^2 + ||y||^2 - 2 x.y``, from :func:`offset_center`'s centre when
    the rows share an offset large against their spread (the plain form would cancel).

    Examples
    --------
    >>> squared_distances(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])).tolist()
    [[25.0]]
    >>> squared_distances(np.array([[1e8, 0.0]]), np.array([[1e8 + 3.0, 4.0]])).tolist()
    [[25.0]]
    """
    X, Y = _array(X), _array(Y)
    floating = np.result_type(X.dtype, Y.dtype).kind == "f"  # integer inputs are exact
    return centred_squared_distances(X, Y, offset_center(X, Y) if floating else None)


def centred_squared_distances(X, Y, center: np.ndarray | None) -> np.ndarray:
    """:func:`squared_distances` from ``center`` (``None``: from the origin). The centred
    rows are dense, in blocks of at most :data:`DENSE_BLOCK_VALUES` values; the output
    keeps the inputs' floating dtype."""
    X, Y = _array(X), _array(Y)  # canonical CSR: row_norms squares stored values one by one
    if center is None:
        xx = row_norms(X, squared=True)[:, None]
        yy = row_norms(Y, squared=True)[None, :]
        d2 = xx + yy - 2.0 * np.asarray(safe_sparse_dot(X, Y.T, dense_output=True))
        return np.maximum(d2, 0.0)
    dtype = np.result_type(X.dtype, Y.dtype)
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    Yc = _shifted(Y, center, dtype)
    yy = row_norms(Yc, squared=True)[None, :]

    def block(B):
        Bc = _shifted(B, center, dtype)
        return np.maximum(row_norms(Bc, squared=True)[:, None] + yy - 2.0 * (Bc @ Yc.T), 0.0)

    rows = max(1, min(BLOCK_ROWS, DENSE_BLOCK_VALUES // max(1, X.shape[1])))
    return row_blocks(block, X, Yc.shape[0], rows, dtype=dtype)


OFFSET_RATIO = 1e3
"""Distances are taken from the rows' mean when it lies more than this many times their
spread (root mean squared distance to the mean) from the origin. ``||x||^2 + ||y||^2 -
2 x.y`` loses about ``eps (offset / spread)^2`` relative, 2e-10 at this ratio; the
datasets of the manifest, raw or standardised, have ratios below 40 (raw KEEL glass) and
keep the plain form, bit for bit. At an offset of 1e8 the plain form got kernel values
wrong by up to 1 (a review of 2026-11-27)."""

DENSE_BLOCK_VALUES = BLOCK_ROWS * 1600
"""Most values of a block of centred (dense) rows, 52 MB of float64: a CSR block is
densified to be centred, and its rows are cut to this size for wide inputs."""


def offset_center(*arrays) -> np.ndarray | None:
    """The mean of the rows of ``arrays`` (dense or CSR, one width), float64, when it lies
    more than :data:`OFFSET_RATIO` times the rows' spread from the origin; else ``None``
    (non-finite values: ``None``).

    Examples
    --------
    >>> X = np.array([[0.0, 1.0], [2.0, 1.0]])
    >>> offset_center(X) is None, offset_center(X + 1e4).tolist()
    (True, [10001.0, 10001.0])
    """
    stats = [(a.shape[0], *_mean_and_spread(a)) for a in map(_array, arrays) if a.shape[0]]
    n = sum(k for k, _, _ in stats)
    if not n:
        return None
    with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN rows: not far
        mean = sum(k * m for k, m, _ in stats) / n
        spread = sum(k * (s + float(np.sum((m - mean) ** 2))) for k, m, s in stats) / n
        far = float(mean @ mean) > OFFSET_RATIO**2 * spread
    return mean if far else None


def _mean_and_spread(X) -> tuple[np.ndarray, float]:
    """Column means of ``X`` (dense or CSR) in float64 and the rows' mean squared distance
    to them (centred before squaring, in blocks: no ``n x d`` copy)."""
    if sp.issparse(X):  # the sum of the columns' (population) variances, two-pass
        mean, var = mean_variance_axis(canonical(sp.csr_matrix(X, dtype=np.float64)), axis=0)
        return mean, float(np.sum(var))
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    total = sum(float(row_norms(X[i:i + BLOCK_ROWS] - mean, squared=True).sum())
                for i in range(0, len(X), BLOCK_ROWS))
    return mean, total / len(X)


def _shifted(X, center: np.ndarray, dtype) -> np.ndarray:
    """Dense ``X - center`` in ``dtype`` (the difference is taken in float64)."""
    X = X.toarray() if sp.issparse(X) else X
    return (X - center).astype(dtype, copy=False)


def _array(X):
    """Canonical CSR for a sparse ``X``, else ``X`` as an array."""
    return canonical(X) if sp.issparse(X) else np.asarray(X)


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
    """Gaussian kernel matrix ``exp(-gamma ||x_i - y_j||^2)`` (distances as in
    :func:`squared_distances`).

    Examples
    --------
    >>> round(float(gaussian_kernel(np.zeros((1, 2)), np.ones((1, 2)), 0.5)[0, 0]), 6)
    0.367879
    """
    return np.exp(-gamma * squared_distances(X, Y))


def centred_gaussian_kernel(X, Y, gamma: float, center: np.ndarray | None) -> np.ndarray:
    """:func:`gaussian_kernel` with distances from ``center`` (``None``: the origin)."""
    return np.exp(-gamma * centred_squared_distances(X, Y, center))


def bandwidth_rule(X, n_rows: int = BANDWIDTH_ROWS) -> float:
    """Average squared distance of the first ``n_rows`` rows to their mean (``sigma``).

    The default kernel of NBAM/FBAM is then ``gamma = 1 / sigma`` (see module notes).

    Examples
    --------
    >>> bandwidth_rule(np.array([[0.0, 0.0], [2.0, 0.0]]))
    1.0
    """
    return _mean_and_spread(X[:n_rows])[1]


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
