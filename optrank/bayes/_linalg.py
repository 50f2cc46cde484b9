"""Gaussian factors from their precision: Jacobi-scaled Cholesky, never a raw inverse.

A precision ``A`` is rescaled to ``M = S A S`` with ``S = diag(A)^(-1/2)`` (unit diagonal,
so a horseshoe precision of 1e12 next to 1e-3 does not ruin the factorisation), then
``M = L L^T`` by LAPACK ``potrf``. Means come from ``cho_solve``; variances from the
triangular inverse of ``L`` (``trtri``; well conditioned after scaling).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_solve
from scipy.linalg.lapack import dpotrf, dtrtri


class GaussianFactor(NamedTuple):
    """Moments of ``N(A^{-1} r, A^{-1})``: mean, covariance (full or diagonal), log det."""

    mean: np.ndarray
    cov: np.ndarray
    logdet_cov: float


def scaled_cholesky(prec: np.ndarray, max_tries: int = 8):
    """Return ``(scale, (L, lower))`` with ``diag(scale) prec diag(scale) = L L^T``.

    A relative jitter (1e-12, x100 per try) is added only if the scaled matrix is not
    numerically positive definite.
    """
    diag = np.diag(prec)
    if not (diag > 0).all():  # also catches nan
        raise ValueError("precision matrix has a non-positive or non-finite diagonal")
    scale = 1.0 / np.sqrt(diag)
    M = prec * scale[:, None]
    M *= scale[None, :]  # in place: one n x n temporary, not two
    if not np.isfinite(M).all():  # checked once here; the LAPACK calls below skip it
        raise ValueError("precision matrix has non-finite entries")
    jitter = 0.0
    for _ in range(max_tries):
        # LAPACK potrf with the upper triangle zeroed (``clean``): L is a true lower
        # triangular matrix, as cho_solve and the triangular inverse below need
        L, info = dpotrf(M + jitter * np.eye(len(M)) if jitter else M, lower=1, clean=1)
        if info == 0:
            return scale, (L, True)
        if info < 0:  # pragma: no cover - an argument error, not a numerical one
            raise ValueError(f"LAPACK dpotrf: illegal argument {-info}")
        jitter = 1e-12 if jitter == 0.0 else jitter * 100.0
    raise LinAlgError("precision matrix is not positive definite even after jitter")


def gaussian_from_precision(prec: np.ndarray, rhs: np.ndarray, full: bool = True) -> GaussianFactor:
    """Mean ``prec^{-1} rhs``, covariance (full, or its diagonal) and ``log det`` of it.

    Examples
    --------
    >>> A = np.array([[2.0, 0.5], [0.5, 1.0]])
    >>> g = gaussian_from_precision(A, np.array([1.0, 0.0]))
    >>> bool(np.allclose(g.mean, np.linalg.solve(A, [1.0, 0.0])))
    True
    >>> bool(np.isclose(g.logdet_cov, -np.log(np.linalg.det(A))))
    True
    """
    if len(prec) == 0:  # an empty problem (no basis): nothing to factor
        return GaussianFactor(np.zeros(0), np.zeros((0, 0) if full else 0), 0.0)
    scale, factor = scaled_cholesky(prec)
    mean = _scaled_solve(scale, factor, rhs)
    L = factor[0]  # lower triangular, upper triangle zero
    Linv, info = dtrtri(L, lower=1)  # triangular inverse: a third of a solve against I
    if info != 0:  # pragma: no cover - L has a positive diagonal after potrf
        raise LinAlgError(f"LAPACK dtrtri failed (info={info})")
    logdet = 2.0 * np.sum(np.log(scale)) - 2.0 * np.sum(np.log(np.diag(L)))
    if full:
        cov = (Linv.T @ Linv) * scale[:, None] * scale[None, :]
    else:
        cov = np.einsum("ij,ij->j", Linv, Linv) * scale**2
    return GaussianFactor(mean, cov, float(logdet))


def marginal_precision(prec: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Precision of the marginal over ``keep``: the Schur complement of the dropped block."""
    keep = np.asarray(keep)
    drop = np.setdiff1d(np.arange(len(prec)), keep)
    if drop.size == 0:
        return prec[np.ix_(keep, keep)].copy()
    scale, factor = scaled_cholesky(prec[np.ix_(drop, drop)])
    cross = prec[np.ix_(drop, keep)]
    solved = _scaled_solve(scale, factor, cross)
    out = prec[np.ix_(keep, keep)] - cross.T @ solved
    return 0.5 * (out + out.T)


def _scaled_solve(scale: np.ndarray, factor, rhs: np.ndarray) -> np.ndarray:
    """``prec^{-1} rhs`` from the scaled factor; ``rhs`` is a vector or a matrix."""
    if not np.isfinite(rhs).all():  # LAPACK is called without scipy's checks
        raise ValueError("right-hand side has non-finite entries")
    col = scale.reshape(-1, *([1] * (np.ndim(rhs) - 1)))
    return col * cho_solve(factor, col * rhs, check_finite=False)
