"""Host-side checks of the stochastic drivers' inputs, before the jitted loop.

XLA neither bounds-checks a gather nor raises from inside a loop: an index beyond a
matrix is clamped to its last row or feature, and a wrong shape surfaces as an
incompatible-shapes error from deep inside the scan. The public drivers
(:func:`optrank.stochastic.run`, ``run_indices``, ``run_grid``) therefore check on the
host what the loop cannot: shapes (static, so also under a caller's ``jit``), and, on
concrete arrays, the values of padded sparse indices and of given index streams.
"""

from __future__ import annotations

import operator
import weakref

import jax
import numpy as np

from optrank._validation import check_row_matrix
from optrank.stochastic import _binary, _rows

MAX_ITER = 2**31 - 1
"""Most iterations of one run: the state's step counter ``t`` is an int32."""


def check_count(value, name: str, upper: int = MAX_ITER) -> int:
    """``value`` as an int, after a ``ValueError`` unless it is an integer in
    ``[0, upper]`` (``operator.index``: numpy integers pass; floats and bools do not).

    Examples
    --------
    >>> check_count(3, "n_iter")
    3
    >>> check_count(2.5, "n_iter")
    Traceback (most recent call last):
    ...
    ValueError: n_iter must be an integer in [0, 2147483647], got 2.5
    """
    try:
        n = None if isinstance(value, bool | np.bool_) else operator.index(value)
    except TypeError:
        n = None
    if n is None or not 0 <= n <= upper:
        raise ValueError(f"{name} must be an integer in [0, {upper}], got {value!r}")
    return n


def check_same_kind(X_pos, X_neg) -> str:
    """The rows' kind (``"dense"``, ``"sparse"`` or ``"packed"``), after a ``TypeError``
    unless both sides are of one kind and a ``ValueError`` for shapes the loop cannot
    take (:func:`check_shapes`) or packed sides with different column values."""
    kinds = [("packed" if _rows.is_packed(X) else "sparse" if _rows.is_sparse(X) else "dense")
             for X in (X_pos, X_neg)]
    if kinds[0] != kinds[1]:
        raise TypeError(f"X_pos and X_neg must be rows of one kind, got {kinds[0]} and "
                        f"{kinds[1]} rows")
    check_shapes(kinds[0], X_pos, X_neg)
    if kinds[0] == "packed" and X_pos.n_features != X_neg.n_features:
        raise ValueError(f"packed rows of {X_pos.n_features} and {X_neg.n_features} features")
    if kinds[0] == "packed" and not _binary.same_values(X_pos, X_neg):
        raise ValueError("the packed positive and negative rows hold different column values; "
                         "pack them together: pack_binary(X_pos, X_neg)")
    return kinds[0]


def check_shapes(kind: str, X_pos, X_neg) -> None:
    """``ValueError`` for rows that are not 2-D (padded sparse: ``indices`` and ``values``
    of one 2-D shape), an empty side, or dense sides of different widths. Shapes only,
    static under a caller's jit too: XLA would report these from inside the loop
    ("sub got incompatible shapes", an out-of-range gather slice)."""
    for name, X in (("X_pos", X_pos), ("X_neg", X_neg)):
        n = _rows.n_rows(X) if kind == "packed" else check_row_matrix(X, name)
        if n == 0:
            raise ValueError(f"{name} has no rows: AUC needs at least one positive and one "
                             f"negative row")
    if kind == "dense" and np.shape(X_pos)[1] != np.shape(X_neg)[1]:
        raise ValueError(f"X_pos and X_neg must have the same number of columns, got shapes "
                         f"{np.shape(X_pos)} and {np.shape(X_neg)}")


def check_row_counts(X_pos, X_neg, n_rows) -> tuple[int, int]:
    """The numbers of positive and negative rows the indices are drawn from: all rows, or
    ``n_rows = (n_pos, n_neg)``, the leading rows of matrices padded with rows that are
    never drawn (each count in ``[1, rows]``)."""
    rows = (_rows.n_rows(X_pos), _rows.n_rows(X_neg))
    if n_rows is None:
        return rows
    if not isinstance(n_rows, tuple | list) or len(n_rows) != 2:
        raise ValueError(f"n_rows must be a pair (n_pos, n_neg), got {n_rows!r}")
    counts = tuple(check_count(n, f"n_rows[{k}]", upper=rows[k]) for k, n in enumerate(n_rows))
    if 0 in counts:
        raise ValueError(f"n_rows={n_rows!r}: AUC needs at least one positive and one "
                         "negative row")
    return counts


def check_state(state, X_pos, X_neg=None) -> None:
    """``ValueError`` unless the rows fit the state's weights: dense or packed rows as
    wide as ``w``; padded sparse rows (of both sides) with their indices in ``[0, d]`` and
    every nonzero value at an index below ``d`` (``d``, one past the last feature, is the
    padding slot; :func:`check_sparse_indices`)."""
    width = np.shape(state.w)[-1]
    if _rows.is_sparse(X_pos):
        for name, X in (("X_pos", X_pos), ("X_neg", X_neg)):
            if X is not None:
                check_sparse_indices(X, width, name, "the state's weights have")
        return
    d = np.shape(X_pos)[1]
    if d != width:
        raise ValueError(f"the rows have {d} features but the state's weights have {width} "
                         f"(learner.init(key, {d}))")


def check_sparse_indices(X, d: int, name: str, source: str = "n_features is") -> None:
    """``ValueError`` unless the padded sparse rows ``X = (indices, values)`` hold indices
    in ``[0, d]`` only, with value 0 at index ``d`` (the padding slot): the loop clamps a
    larger index to the last feature, so rows of more features than ``d`` would be added
    into ``w[d - 1]``. Concrete arrays only (traced ones, under a caller's ``jit``, are
    not checked); the summary of a JAX array is kept while it lives, so an epoch loop over
    the same rows checks them once."""
    low, high, high_nonzero = _index_summary(*X)
    if low is None:
        return
    if low < 0 or high > d or high_nonzero >= d:
        worst = low if low < 0 else max(high, high_nonzero)
        raise ValueError(f"{name}: the padded sparse rows hold index {worst}, but {source} "
                         f"{d} features (indices in [0, {d - 1}], {d} for padding with value "
                         f"0; to_padded(csr) of a matrix of {d} columns)")


_SUMMARIES: dict = {}
"""``id(indices) -> (ref(indices), ref(values), summary)`` of immutable JAX rows."""


def _index_summary(idx, val):
    """``(min index, max index, max index of a nonzero value)`` of concrete padded rows
    (``-1`` for no nonzero value); ``(None, None, None)`` for traced rows."""
    if isinstance(idx, jax.core.Tracer) or isinstance(val, jax.core.Tracer):
        return None, None, None
    cacheable = isinstance(idx, jax.Array) and isinstance(val, jax.Array)
    entry = _SUMMARIES.get(id(idx)) if cacheable else None
    if entry is not None and entry[0]() is idx and entry[1]() is val:
        return entry[2]
    i, v = np.asarray(idx), np.asarray(val)
    if i.size == 0:
        summary = (0, 0, -1)
    else:
        summary = (int(i.min()), int(i.max()), int(np.max(np.where(v != 0, i, -1))))
    if cacheable:
        key = id(idx)
        _SUMMARIES[key] = (weakref.ref(idx, lambda _, key=key: _SUMMARIES.pop(key, None)),
                           weakref.ref(val), summary)
    return summary
