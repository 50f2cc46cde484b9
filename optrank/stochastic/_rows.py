"""Row algebra shared by the stochastic learners: dense rows and padded sparse rows.

A *row* is either a dense 1-D array of length ``d`` or a pair ``(indices, values)`` of
equal-length 1-D arrays (a padded sparse row). Padding slots carry the index ``d`` (one
past the last feature) and the value ``0``: gathers at ``d`` are clamped and multiplied
by zero, scatters at ``d`` are dropped, so padding never changes a result.

Everything here is un-jitted so that it composes under ``vmap`` and ``scan``.
"""

from __future__ import annotations

import jax.numpy as jnp

DENSE_SCRATCH_MAX_D = 4096


def is_sparse(row) -> bool:
    """Whether ``row`` is a padded ``(indices, values)`` sparse row (or stack of rows)."""
    return isinstance(row, tuple)


def dot(w: jnp.ndarray, row) -> jnp.ndarray:
    """Inner product ``w @ row``."""
    if is_sparse(row):
        idx, val = row
        return jnp.dot(w.at[idx].get(mode="clip"), val)
    return jnp.dot(w, row)


def add_scaled(w: jnp.ndarray, c: jnp.ndarray, row) -> jnp.ndarray:
    """Return ``w + c * row``."""
    if is_sparse(row):
        idx, val = row
        return w.at[idx].add(c * val, mode="drop")
    return w + c * row


def diff_sqnorm(row_a, row_b, n_features: int | None = None) -> jnp.ndarray:
    """Squared norm ``||row_a - row_b||^2``.

    For sparse rows the cross term ``row_a @ row_b`` is found by scattering ``row_a``
    into a dense scratch vector when ``n_features`` is given and at most
    ``DENSE_SCRATCH_MAX_D`` (``O(d + k)``), otherwise by a sorted-index match
    (``searchsorted``, ``O(k log k)`` for ``k`` stored entries, never ``O(d)``).
    """
    if not is_sparse(row_a):
        diff = row_a - row_b
        return jnp.dot(diff, diff)
    (ia, va), (ib, vb) = row_a, row_b
    if n_features is not None and n_features <= DENSE_SCRATCH_MAX_D:
        scratch = jnp.zeros(n_features + 1, va.dtype).at[ia].set(va, mode="drop")
        cross = jnp.dot(scratch.at[ib].get(mode="clip"), vb)
    else:
        pos = jnp.clip(jnp.searchsorted(ib, ia), 0, ib.shape[0] - 1)
        cross = jnp.sum(jnp.where(ib[pos] == ia, va * vb[pos], 0.0))
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
