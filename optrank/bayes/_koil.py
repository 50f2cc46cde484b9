"""KOIL: kernelized online imbalanced learning with fixed budgets (Hu et al., AAAI 2015).

The rules implemented (docs/bayes.md states them and where they are our reading):

* ``f(x) = sum_i alpha_i k(x_i, x)`` over two buffers (positives, negatives) of size
  ``budget`` each, one Gaussian kernel ``k(x, z) = exp(-||x - z||^2 / (2 width^2))``, or
  any kernel function given as ``kernel`` (the B2RMK paper's ``KOIL^u`` runs KOIL on the
  unweighted mean of its normalised pool, :func:`pool_mean_kernel`).
* On ``(x_t, y_t)``: the ``k`` nearest opposite support vectors (kernel distance) give
  the localized pairwise hinge losses ``max(0, 1 - y_t (f(x_t) - f(x_j)))``.
* A stochastic gradient step of size ``eta`` on ``||f||^2 / 2 + C * loss``:
  ``alpha <- (1 - eta) alpha``, the new point gets ``eta C y_t |V|`` and each violated
  neighbour ``j in V`` gets ``- eta C y_t``.
* Buffer update when full: FIFO++ replaces the oldest, RS++ replaces a uniform random
  support vector with probability ``budget / n_seen(class)`` (reservoir sampling).
  Compensation ("++"): the weight of whatever leaves (the replaced support vector, or
  the new point when RS rejects it) is projected onto its most similar remaining
  support vector of the same class, ``alpha_s += alpha_r k(x_r, x_s)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class KOILState:
    """Buffers, weights, insertion times and per-class counts."""

    X: np.ndarray
    y: np.ndarray
    alpha: np.ndarray
    born: np.ndarray
    seen: dict = field(default_factory=lambda: {1.0: 0, -1.0: 0})
    t: int = 0


def gaussian(X: np.ndarray, Z: np.ndarray, width: float) -> np.ndarray:
    """Gaussian kernel matrix, vectorised over all pairs."""
    sq = np.sum(X**2, 1)[:, None] + np.sum(Z**2, 1)[None, :] - 2.0 * X @ Z.T
    return np.exp(-np.maximum(sq, 0.0) / (2.0 * width**2))


def pool_mean_kernel(pool):
    """``k(x, z) = mean_m K_m(x, z)`` over a :class:`~optrank.bayes.KernelPool`: the
    unweighted combination of its spherically normalised kernels (unit diagonal, so the
    kernel distance orders neighbours as ``-k`` does).

    Examples
    --------
    >>> from optrank.bayes import KernelPool
    >>> k = pool_mean_kernel(KernelPool(gaussian_widths=(1.0,), poly_degrees=(1,)))
    >>> float(k(np.zeros((1, 2)), np.zeros((1, 2)))[0, 0])
    1.0
    """

    def kernel(X, Z):
        return pool.matrices(X, Z).mean(axis=0)

    return kernel


def _kernel_of(width, kernel):
    if kernel is not None:
        return kernel
    if width is None:
        raise ValueError("give the Gaussian width or a kernel function")
    return lambda X, Z: gaussian(X, Z, width)


SCORE_CHUNK = 1024
"""Rows of ``X`` scored per kernel evaluation in :func:`koil_scores`."""


def koil_init(n_features: int) -> KOILState:
    """Empty buffers."""
    return KOILState(np.empty((0, n_features)), np.empty(0), np.empty(0), np.empty(0, int))


def koil_scores(state: KOILState, X: np.ndarray, width: float | None = None, *,
                kernel=None) -> np.ndarray:
    """``f(x)`` for the rows of ``X`` (Gaussian of ``width``, or ``kernel(X, Z)``), in
    chunks of ``SCORE_CHUNK`` rows (memory does not grow with the number of rows)."""
    kern = _kernel_of(width, kernel)
    out = np.zeros(X.shape[0])
    if len(state.alpha) == 0:
        return out
    for start in range(0, X.shape[0], SCORE_CHUNK):
        rows = slice(start, start + SCORE_CHUNK)
        out[rows] = state.alpha @ kern(state.X, X[rows])
    return out


def koil_step(state, x, y, *, C, eta, k, budget, policy, rng, width=None,
              kernel=None) -> KOILState:
    """One KOIL update (gradient step, then buffer update with compensation), with the
    Gaussian kernel of ``width`` or the kernel function ``kernel(X, Z)``."""
    kern = _kernel_of(width, kernel)
    y = float(y)
    state.t += 1
    state.seen[y] += 1
    k_x = kern(state.X, x[None, :])[:, 0]
    new_alpha = _gradient_step(state, k_x, y, C=C, eta=eta, k=k, kern=kern)
    same = np.flatnonzero(state.y == y)
    if len(same) < budget:
        return _insert(state, x, y, new_alpha)
    r = _victim(state, same, y, budget, policy, rng)
    if r is None:
        _compensate(state, same, k_x, new_alpha)
        return state
    k_r = kern(state.X, state.X[r][None, :])[:, 0]
    others = same[same != r]
    _compensate(state, others, k_r, state.alpha[r])
    state.X[r], state.alpha[r], state.born[r] = x, new_alpha, state.t
    return state


def _gradient_step(state, k_x, y, *, C, eta, k, kern) -> float:
    opp = np.flatnonzero(state.y != y)
    violated = np.empty(0, int)
    if len(opp):
        nn = opp[np.argsort(-k_x[opp], kind="stable")[:k]]
        f_nn = state.alpha @ kern(state.X, state.X[nn])
        violated = nn[1.0 - y * (state.alpha @ k_x - f_nn) > 0]
    state.alpha *= 1.0 - eta
    state.alpha[violated] -= eta * C * y
    return eta * C * y * len(violated)


def _victim(state, same, y, budget, policy, rng):
    if policy == "fifo++":
        return int(same[np.argmin(state.born[same])])
    if rng.random() < budget / state.seen[y]:
        return int(same[rng.integers(len(same))])
    return None


def _compensate(state, candidates, k_col, weight) -> None:
    """Project ``weight * k(x_r, .)`` onto the most similar candidate support vector."""
    if len(candidates) and weight != 0.0:
        s = candidates[np.argmax(k_col[candidates])]
        state.alpha[s] += weight * k_col[s]


def _insert(state, x, y, new_alpha) -> KOILState:
    state.X = np.vstack([state.X, x])
    state.y = np.r_[state.y, y]
    state.alpha = np.r_[state.alpha, new_alpha]
    state.born = np.r_[state.born, state.t]
    return state
