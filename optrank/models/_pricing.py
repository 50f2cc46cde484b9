"""The pricing subproblem of Ranking-CG Prototype (eq. 10), solved with optax Adam in JAX.

With pair duals ``pi_pn`` the reduced cost of a prototype ``q`` is (up to the sign
and the z-scoring of the column)

    g(q) = sum_pn pi_pn (||x_p - q|| - ||x_n - q||) = sum_i a_i ||x_i - q||,

with ``a_i = sum_n pi_in`` for a positive ``i`` and ``-sum_p pi_pi`` for a negative
``i`` (:func:`sample_coefficients`), so evaluating it costs ``O(n d)`` and not
``O(pairs d)``. The new prototype is ``argmax_q |g(q)|``: Adam ascends
``sign(g(q0)) g(q)`` from the training point ``q0`` maximising ``|g|`` (eq. 11,
computed for all training points at once in ``O(n^2 d)``), until the relative change
of the objective is below ``tol`` or after ``max_steps`` steps; the best point seen
is returned. Eq. 11 runs over blocks of ``VALUE_BLOCK_ROWS`` training points, so its
memory is ``O(VALUE_BLOCK_ROWS n)``, not the ``O(n^2)`` of the full distance matrix.
Several starts (the best ``n_starts`` training points) run under ``jax.vmap``; the
one jit boundary is :func:`_ascend_all`, whose input rows are padded to a multiple of
``ROW_BUCKET`` (zero coefficients) so that training sets of nearby sizes reuse one
compilation.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from optrank._loop_device import on_loop_device
from optrank.models._prototype_features import euclidean_distances


class PricingResult(NamedTuple):
    """The new prototype ``q`` with ``|g(q)|`` and where the ascent started."""

    q: np.ndarray
    value: float
    init_value: float
    init_index: int
    steps: int


def sample_coefficients(duals, pos, neg, n_samples: int) -> np.ndarray:
    """Aggregate pair duals per sample: ``a_i = sum_{pn: p=i} pi - sum_{pn: n=i} pi``.

    Examples
    --------
    >>> sample_coefficients([0.5, 1.0], [0, 0], [1, 2], 3).tolist()
    [1.5, -0.5, -1.0]
    """
    duals = np.asarray(duals, dtype=np.float64)
    return (np.bincount(pos, duals, minlength=n_samples)
            - np.bincount(neg, duals, minlength=n_samples))


def _safe_norm(v):
    """Euclidean norm with gradient 0 (not NaN) at ``v = 0``."""
    sq = jnp.sum(v * v, axis=-1)
    positive = sq > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, sq, 1.0)), 0.0)


def pricing_objective(q, X, a):
    """``g(q) = sum_i a_i ||x_i - q||`` (un-jitted kernel; composes under vmap/grad).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> float(pricing_objective(jnp.zeros(2), jnp.array([[3.0, 4.0], [1.0, 0.0]]),
    ...                         jnp.array([1.0, -1.0])))
    4.0
    """
    return jnp.dot(a, _safe_norm(X - q))


def _ascend(X, a, q0, sign, learning_rate, max_steps, tol):
    """Adam on ``-sign * g`` from ``q0``; returns (best q, best sign*g, steps)."""
    opt = optax.adam(learning_rate)
    loss = lambda q: -sign * pricing_objective(q, X, a)  # noqa: E731
    grad = jax.grad(loss)
    f0 = -loss(q0)

    def cond(state):
        step, _, _, _, _, _, rel = state
        return (step < max_steps) & (rel >= tol)

    def body(state):
        step, q, opt_state, f_prev, best_q, best_f, _ = state
        updates, opt_state = opt.update(grad(q), opt_state, q)
        q = optax.apply_updates(q, updates)
        f = -loss(q)
        rel = jnp.abs(f - f_prev) / jnp.maximum(jnp.abs(f_prev), 1e-30)
        better = f > best_f
        best_q = jnp.where(better, q, best_q)
        return step + 1, q, opt_state, f, best_q, jnp.maximum(f, best_f), rel

    init = (0, q0, opt.init(q0), f0, q0, f0, jnp.asarray(jnp.inf, dtype=f0.dtype))
    step, _, _, _, best_q, best_f, _ = jax.lax.while_loop(cond, body, init)
    return best_q, best_f, step


ROW_BUCKET = 64

_ascend_all = jax.jit(jax.vmap(_ascend, in_axes=(None, None, 0, 0, None, None, None)))


def padded_rows(n: int) -> int:
    """Rows the pricing pads ``X`` to: a multiple of ``ROW_BUCKET`` (at least one bucket).

    Training sets of nearby sizes (the CV folds, the refit, other datasets with the
    same number of features) then share one compiled ascent instead of compiling one
    per size. Padded rows carry ``a_i = 0``, so ``g`` and its gradient are unchanged.

    Examples
    --------
    >>> padded_rows(1), padded_rows(64), padded_rows(65)
    (64, 64, 128)
    """
    return max(1, -(-int(n) // ROW_BUCKET)) * ROW_BUCKET


def pad_rows(X, a) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and ``a`` padded with zero rows / zero coefficients to :func:`padded_rows`."""
    n = X.shape[0]
    rows = padded_rows(n)
    if rows == n:
        return X, np.asarray(a, dtype=np.float64)
    Xp = np.zeros((rows, X.shape[1]))
    Xp[:n] = X
    ap = np.zeros(rows)
    ap[:n] = a
    return Xp, ap


VALUE_BLOCK_ROWS = 1024


def training_point_values(X, a) -> np.ndarray:
    """``g(x_j)`` for every training point ``x_j`` (eq. 11): ``D(X, X) @ a`` by row blocks.

    The distances of ``VALUE_BLOCK_ROWS`` training points at a time (``O(1024 n)``
    memory: 20,000 rows hold 160 MB, not the 3.2 GB of the full matrix). Up to 1,024
    rows (one block) the values are the full product's bit for bit; beyond, equal to
    rounding (BLAS may sum a row in another order when the number of rows differs).

    Examples
    --------
    >>> training_point_values(np.array([[0.0, 0.0], [3.0, 4.0]]), [1.0, -1.0]).tolist()
    [-5.0, 5.0]
    """
    X = np.asarray(X, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    return np.concatenate([euclidean_distances(X[i:i + VALUE_BLOCK_ROWS], X) @ a
                           for i in range(0, max(X.shape[0], 1), VALUE_BLOCK_ROWS)])


def price(X, a, n_starts: int = 1, learning_rate: float = 1e-3, max_steps: int = 1000,
          tol: float = 1e-5) -> PricingResult:
    """Solve eq. 10 from the best training point(s) of eq. 11.

    Parameters
    ----------
    X : (n, d) training points (the space prototypes live in).
    a : (n,) per-sample dual coefficients (:func:`sample_coefficients`).
    n_starts : number of starts (the ``n_starts`` best training points), run under vmap.
    learning_rate, max_steps, tol : Adam step size (TensorFlow's default 1e-3 as in the
        paper), step cap and relative-change stopping tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> res = price(X, np.array([1.0, -0.5, -0.5]))
    >>> res.value >= res.init_value
    True
    """
    X = np.asarray(X, dtype=np.float64)
    values = training_point_values(X, a)
    order = np.argsort(-np.abs(values), kind="stable")[: max(1, int(n_starts))]
    signs = np.where(values[order] >= 0, 1.0, -1.0)
    Xp, ap = pad_rows(X, a)
    with on_loop_device():  # a loop of small Adam steps: the CPU unless asked otherwise
        Xj = jnp.asarray(Xp)
        cast = lambda v: jnp.asarray(np.asarray(v), dtype=Xj.dtype)  # noqa: E731
        qs, fs, steps = _ascend_all(Xj, cast(ap), cast(X[order]), cast(signs),
                                    float(learning_rate), int(max_steps), float(tol))
        best = int(np.argmax(np.asarray(fs)))
        q = np.asarray(qs[best], dtype=np.float64)
    value = abs(float(euclidean_distances(X, q[None, :]).ravel() @ a))
    init_value = float(abs(values[order[0]]))
    if value < init_value:  # float32 round-off: keep the training point exactly
        q, value = X[order[0]].copy(), init_value
    return PricingResult(q, value, init_value, int(order[0]), int(steps[best]))
