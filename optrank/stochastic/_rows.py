"""Row algebra shared by the stochastic learners: dense rows, padded sparse rows and
packed two-valued rows (:class:`optrank.stochastic._binary.BinaryRows`).

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
from optrank.stochastic._binary import BinaryRows, unpack, values


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


def pair_difference(x_pos, x_neg):
    """``x_pos - x_neg`` formed without cancellation.

    Dense rows: the difference itself. Padded sparse rows (each with distinct indices,
    as the drivers' canonical CSR gives): a tuple of two padded rows with disjoint
    nonzero values whose sum is the difference, ``(ia, va - x_neg[ia])`` and ``(ib, -vb)``
    kept only where ``x_pos`` has no nonzero entry (``O(k_a k_b)`` compares). Subtracting the
    matched entries first keeps a near-duplicate pair's difference exact; expanding
    ``||a - b||^2 = ||a||^2 + ||b||^2 - 2 a.b`` in float32 lost it (PSAM's step
    ``(1 - margin) / ||x||^2`` then moved ``w`` by rounding noise).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> a = (jnp.array([0, 2]), jnp.array([1.0, 3.0]))
    >>> b = (jnp.array([2, 3]), jnp.array([1.0, 5.0]))
    >>> d = pair_difference(a, b)
    >>> [v.tolist() for _, v in d], float(sqnorm(d))
    ([[1.0, 2.0], [0.0, -5.0]], 30.0)
    """
    if not is_sparse(x_pos):
        return x_pos - x_neg
    (ia, va), (ib, vb) = x_pos, x_neg
    # only nonzero entries of x_pos take a match: padding slots (value 0) may carry a real
    # column's index (the online rows pad with index 0), and a zero entry adds nothing,
    # so an x_neg entry it would have matched is as well kept in ``rest``
    match = ((ia[:, None] == ib[None, :]) & (va[:, None] != 0)).astype(va.dtype)
    own = va - match @ vb
    rest = vb * (jnp.sum(match, axis=0) - 1.0)  # 0 where matched (one match per column)
    return (ia, own), (ib, rest)


def _is_split(diff) -> bool:
    """Whether a :func:`pair_difference` is the two-row form of sparse rows."""
    return isinstance(diff, tuple) and is_sparse(diff[0])


def sqnorm(diff) -> jnp.ndarray:
    """``||diff||^2`` of a :func:`pair_difference`."""
    if _is_split(diff):
        return sum(jnp.dot(v, v) for _, v in diff)
    return jnp.dot(diff, diff)


def dot_difference(w: jnp.ndarray, diff) -> jnp.ndarray:
    """``w @ diff`` of a :func:`pair_difference`."""
    if _is_split(diff):
        return sum(dot(w, part) for part in diff)
    return jnp.dot(w, diff)


def add_difference(w: jnp.ndarray, c: jnp.ndarray, diff) -> jnp.ndarray:
    """``w + c * diff`` of a :func:`pair_difference`."""
    if _is_split(diff):
        for part in diff:
            w = add_scaled(w, c, part)
        return w
    return w + c * diff


def is_packed(rows) -> bool:
    """Whether ``rows`` are packed binary rows (:class:`BinaryRows`)."""
    return isinstance(rows, BinaryRows)


def take(rows, i):
    """Row ``i`` of a dense matrix, a padded sparse ``(indices, values)`` matrix or packed
    rows (their values, exact: 0/1 as float32, others in their own type; the learners
    cast to their state's type)."""
    if is_sparse(rows):
        return rows[0][i], rows[1][i]
    if is_packed(rows):
        dtype = jnp.float32 if rows.base is None else rows.base.dtype
        return values(rows, rows.words[i], dtype)
    return rows[i]


def n_rows(rows) -> int:
    """Number of rows of a dense, padded sparse or packed binary matrix."""
    if is_packed(rows):
        return rows.words.shape[0]
    return rows[0].shape[0] if is_sparse(rows) else rows.shape[0]


def pair_block(X_pos, X_neg, idx_pos, idx_neg, dtype):
    """What the dense driver loops over for the pairs ``(idx_pos, idx_neg)``: their
    differences (:func:`pair_differences`) for dense rows; for packed binary rows the
    two rows' words stacked, ``(..., 2, W)``, which :func:`pair_decoder` unpacks in the
    loop."""
    if is_packed(X_pos):
        return jnp.stack([X_pos.words[idx_pos], X_neg.words[idx_neg]], axis=-2)
    return pair_differences(X_pos, X_neg, idx_pos, idx_neg, dtype)


def pair_decoder(X_pos, dtype):
    """The function from one item of a :func:`pair_block` to the dense difference
    ``x+ - x-`` in ``dtype`` (the identity for dense rows).

    For packed rows with column values ``base`` / ``other`` the difference is
    ``b+ * delta - b- * delta`` with ``delta = other - base`` formed once, in the type
    :func:`pair_differences` subtracts in: each feature is then exactly that function's
    ``x+ - x-`` (``delta``, ``-delta`` since float subtraction is antisymmetric, or
    ``+0``), rounded to ``dtype`` the same way."""
    if not is_packed(X_pos):
        return lambda x: x
    d = X_pos.n_features
    if X_pos.base is None:
        def decode(words):
            return unpack(words[0], d, dtype) - unpack(words[1], d, dtype)

        return decode
    work = jnp.promote_types(jnp.result_type(X_pos.base, X_pos.other), dtype)
    delta = X_pos.other.astype(work) - X_pos.base.astype(work)

    def decode_values(words):
        return (unpack(words[0], d, work) * delta - unpack(words[1], d, work) * delta
                ).astype(dtype)

    return decode_values


def pair_item_bytes(X_pos, dtype) -> tuple[int, int]:
    """``(values, itemsize)`` of one pair in a :func:`pair_block`."""
    if is_packed(X_pos):
        return 2 * X_pos.words.shape[1], X_pos.words.dtype.itemsize
    return X_pos.shape[1], jnp.dtype(dtype).itemsize


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


def pair_differences(X_pos, X_neg, idx_pos, idx_neg, dtype) -> jnp.ndarray:
    """Dense rows ``X_pos[idx_pos] - X_neg[idx_neg]`` in ``dtype``, one vectorised gather
    per side (scalar indices give one row).

    The subtraction runs in the wider of the rows' type and ``dtype``
    (``jnp.promote_types``), then rounds to ``dtype``: float64 rows of a float32 learner
    are subtracted in float64, as before; integer, boolean and float16 rows are cast to
    ``dtype`` first, since their own arithmetic wraps or overflows (int8
    ``100 - (-100)`` is ``-56``, float16 ``60000 - (-60000)`` is ``inf``). Integers beyond
    ``dtype``'s exact range (``2^24`` in float32) round before the subtraction, as the
    padded sparse rows' values do.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> Xp, Xn = jnp.array([[100]], jnp.int8), jnp.array([[-100]], jnp.int8)
    >>> pair_differences(Xp, Xn, jnp.array([0]), jnp.array([0]), jnp.float32).tolist()
    [[200.0]]
    """
    a, b = X_pos[idx_pos], X_neg[idx_neg]
    work = jnp.promote_types(jnp.result_type(a, b), dtype)
    return (a.astype(work) - b.astype(work)).astype(dtype)
