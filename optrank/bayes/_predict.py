"""Posterior-mean ranking scores ``f(x) = <a>^T sum_m <e_m> k_m(x) + <b>`` (section 5)."""

from __future__ import annotations

import numpy as np

from optrank.bayes._kernels import KernelPool, combine


def posterior_scores(
    pool: KernelPool,
    basis: np.ndarray,
    a: np.ndarray,
    e: np.ndarray,
    b: float,
    X: np.ndarray,
    chunk: int = 1024,
) -> np.ndarray:
    """Scores of the rows of ``X`` against the ``basis`` rows, in chunks of ``chunk`` rows.

    Examples
    --------
    >>> pool = KernelPool(gaussian_widths=(1.0,), poly_degrees=())
    >>> Z = np.zeros((1, 2))
    >>> float(posterior_scores(pool, Z, np.ones(1), np.ones(1), 0.5, Z)[0])
    1.5
    """
    keep = np.abs(a) > 0
    basis, a = basis[keep], a[keep]
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], chunk):
        K = combine(pool.matrices(basis, X[start : start + chunk]), e)
        out[start : start + chunk] = a @ K + b
    return out
