"""Row algebra shared by the stochastic learners: dense rows and padded sparse rows.

A *row* is either a dense 1-D array of length ``d`` or a pair ``(indices, values)`` of
equal-length 1-D arrays (a padded sparse row). Padding slots carry the index ``d`` (one
past the last feature) and the value ``0``: gathers at ``d`` are clamped and multiplied
by zero, additions at ``d`` are clamped to the last feature and add 0, so padding never
changes a result.

Everything here is un-jitted so that it composes under ``vmap`` and ``scan``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from optrank.online._xla import lane_dot


def is_sparse(row) -> bool:
    """Whether ``row`` is a padded ``(indices, values)`` sparse row (or stack of rows)."""
    return isinstance(row, tuple)


def as_dtype(row, dtype):
    """``row`` with its values in ``dtype`` (a padded sparse row keeps its indices).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> idx, val = as_dtype((jnp.array([0, 2]), jnp.array([1, 2])), jnp.float32)
    >>> str(idx.dtype), str(val.dtype)
    ('int32', 'float32')
    """
    if is_sparse(row):
        idx, val = row
        return idx, jnp.asarray(val, dtype)
    return jnp.asarray(row, dtype)


def dot(w: jnp.ndarray, row) -> jnp.ndarray:
    """Inner product ``w @ row``."""
    if is_sparse(row):
        idx, val = row
        return jnp.dot(w.at[idx].get(mode="clip"), val)
    return jnp.dot(w, row)


def add_scaled(w: jnp.ndarray, c: jnp.ndarray, row) -> jnp.ndarray:
    """Return ``w + c * row``.

    A sparse row is added one stored entry at a time (``dynamic_update_slice`` in a short
    loop) rather than by a scatter: XLA CPU cannot fold a scatter into the single kernel
    that runs the learner's loop. Padding entries (index ``d``, value 0) add 0 to the
    last feature.
    """
    if not is_sparse(row):
        return w + c * row
    idx, val = row
    last = w.shape[0] - 1

    def one(k, v):
        i = jnp.minimum(idx[k], last)
        return jax.lax.dynamic_update_index_in_dim(v, v[i] + c * val[k], i, 0)

    return jax.lax.fori_loop(0, idx.shape[0], one, w)


def diff_sqnorm(row_a, row_b, n_features: int | None = None) -> jnp.ndarray:
    """Squared norm ``||row_a - row_b||^2``.

    For sparse rows the cross term ``row_a @ row_b`` sums the products of entries with
    equal indices over all ``k_a x k_b`` index pairs (``O(k^2)`` compares, no scatter and no
    ``O(d)`` work; padding entries have value 0). ``n_features`` is accepted for API
    compatibility and unused.
    """
    if not is_sparse(row_a):
        diff = row_a - row_b
        return jnp.dot(diff, diff)
    (ia, va), (ib, vb) = row_a, row_b
    cross = jnp.sum(jnp.where(ia[:, None] == ib[None, :], va[:, None] * vb[None, :], 0.0))
    return jnp.dot(va, va) + jnp.dot(vb, vb) - 2.0 * cross


def take(rows, i):
    """Row ``i`` of a dense matrix or of a padded sparse ``(indices, values)`` matrix."""
    if is_sparse(rows):
        return rows[0][i], rows[1][i]
    return rows[i]


def n_rows(rows) -> int:
    """Number of rows of a dense or padded sparse matrix."""
    return rows[0].shape[0] if is_sparse(rows) else rows.shape[0]


def pair_margin(w: jnp.ndarray, x_pos, x_neg) -> jnp.ndarray:
    """Margin ``w @ (x_pos - x_neg)`` (one dot product for dense rows)."""
    if is_sparse(x_pos):
        return dot(w, x_pos) - dot(w, x_neg)
    return jnp.dot(w, x_pos - x_neg)


def add_pair(w: jnp.ndarray, c: jnp.ndarray, x_pos, x_neg) -> jnp.ndarray:
    """Return ``w + c * (x_pos - x_neg)``."""
    if is_sparse(x_pos):
        return add_scaled(add_scaled(w, c, x_pos), -c, x_neg)
    return w + c * (x_pos - x_neg)


def dense_dot(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
    """``a @ b`` for dense vectors as lane partial sums (short addition chain in a loop)."""
    return lane_dot(a, b)


def pair_differences(X_pos, X_neg, idx_pos, idx_neg) -> jnp.ndarray:
    """Dense rows ``X_pos[idx_pos] - X_neg[idx_neg]`` in one vectorised gather per side."""
    return X_pos[idx_pos] - X_neg[idx_neg]
