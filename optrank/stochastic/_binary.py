"""Two-valued rows packed 32 features to a word: 0/1 data (one-hot and indicator features),
and data whose every column takes at most two values (the same after scaling or
standardising).

A row of ``d`` features takes ``W = ceil(d / 32)`` uint32 words: feature ``j`` is bit
``j % 32`` of word ``j // 32``, and the bit selects between the column's two values
(``0`` / ``1`` for 0/1 data; ``base[j]`` / ``other[j]`` otherwise). The dense driver
gathers the two words-rows of a pair (``2 W`` words, 32 bytes for a9a's 123 features
against 984 bytes of float32 rows) and unpacks them inside the loop into the difference
``x+ - x-``. Each feature of that difference is ``0``, ``other - base`` or ``base -
other``; the unpacking forms it as ``b+ * delta - b- * delta`` with ``delta = other -
base`` computed as the float rows' subtraction computes it, so it equals the float rows'
difference (``-0.0`` and ``0.0`` count as one value), and the weights and margins of every
step equal those of the float rows bit for bit; the running average may differ in its
last bits where XLA compiles its update differently in the two loops. The packed matrix
of a9a's 32,561 rows is 521 KB, small enough for the core's L2 cache, where the float32
rows (16 MB) are not; the row gather, which bounded a9a's epoch, then costs little
(docs/stochastic.md, "Packed binary rows").

The two values of a column must be the same for the positive and the negative rows, so
rows that are not 0/1 are packed together: ``pack_binary(X_pos, X_neg)``.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp

from optrank._validation import canonical_csr

WORD_BITS = 32
CHUNK_VALUES = 1 << 22  # values checked and packed per chunk of rows
PROBE_ROWS = 64  # rows checked first, so that most inputs that do not pack are refused at once


@dataclasses.dataclass(frozen=True)
class BinaryRows:
    """Two-valued rows packed into uint32 words (a pytree: ``words``, ``base`` and
    ``other`` are leaves, ``n_features`` static). Build with :func:`pack_binary`.

    Attributes
    ----------
    words : array (n, ceil(n_features / 32)) uint32
        Feature ``j`` of row ``i`` is bit ``j % 32`` of ``words[i, j // 32]``.
    n_features : int
    base, other : array (n_features,) or None
        The value of feature ``j`` is ``other[j]`` where its bit is set, ``base[j]``
        elsewhere; None for 0/1 rows (``base = 0``, ``other = 1``).
    """

    words: jax.Array
    n_features: int
    base: jax.Array | None = None
    other: jax.Array | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_features)``, as the float rows would have."""
        return (self.words.shape[0], self.n_features)


jax.tree_util.register_dataclass(BinaryRows, data_fields=["words", "base", "other"],
                                 meta_fields=["n_features"])


def n_words(n_features: int) -> int:
    """Words per packed row."""
    return -(-n_features // WORD_BITS)


def _pack_bits(bits: np.ndarray) -> np.ndarray:
    """uint32 words of a boolean ``(n, d)`` array (feature ``j``: bit ``j % 32`` of word
    ``j // 32``)."""
    n, d = bits.shape
    padded = np.zeros((n, n_words(d) * WORD_BITS), dtype=bool)
    padded[:, :d] = bits
    packed = np.packbits(padded, axis=1, bitorder="little")  # byte k: features 8k..8k+7
    return np.ascontiguousarray(packed).view("<u4").astype(np.uint32, copy=False)


def _chunks(n: int, d: int):
    """Row ranges: the first :data:`PROBE_ROWS` rows, then chunks of
    :data:`CHUNK_VALUES` values."""
    step = max(1, CHUNK_VALUES // max(d, 1))
    first = min(n, PROBE_ROWS)
    if first:
        yield 0, first
    for start in range(first, n, step):
        yield start, min(n, start + step)


def _chunk_words(X, start: int, stop: int) -> np.ndarray | None:
    """Packed words of rows ``start:stop`` of the dense ``X``, or None if one of their
    values is neither 0 nor 1."""
    block = np.asarray(X[start:stop])
    ones = block == 1
    if not np.all(ones | (block == 0)):
        return None
    return _pack_bits(ones)


def _sparse_words(X, ones=None) -> np.ndarray:
    """Words of a canonical CSR matrix with a bit for each stored entry where ``ones``
    (default: every stored entry)."""
    n, d = X.shape
    W = n_words(d)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(X.indptr))
    cols = X.indices.astype(np.int64)
    if ones is not None and not ones.all():
        rows, cols = rows[ones], cols[ones]
    # distinct bits of one word summed: exact in float64 (every sum < 2^32)
    sums = np.bincount(rows * W + (cols >> 5), weights=_POWERS[cols & 31], minlength=n * W)
    return sums.astype(np.uint32).reshape(n, W)


_POWERS = 2.0 ** np.arange(WORD_BITS)


def binary_words(X) -> np.ndarray | None:
    """The packed words of a dense array or scipy sparse matrix whose values are all 0 or
    1 (explicit zeros allowed; duplicate sparse entries are summed first), else None.

    Sparse input is packed from its stored entries. Dense rows are checked and packed in
    chunks, the first :data:`PROBE_ROWS` rows on their own, so a non-binary input is
    usually refused after a few rows.

    Examples
    --------
    >>> import numpy as np
    >>> binary_words(np.array([[1, 0, 1], [0, 1, 0]])).tolist()
    [[5], [2]]
    >>> binary_words(np.array([[1.0, 0.5]])) is None
    True
    """
    if sp.issparse(X):
        X = canonical_csr(X)  # duplicates summed, as the float rows would hold them
        if not np.all((X.data == 1) | (X.data == 0)):
            return None
        return _sparse_words(X, X.data == 1)
    n, d = X.shape
    parts = []
    for start, stop in _chunks(n, d):
        words = _chunk_words(X, start, stop)
        if words is None:
            return None
        parts.append(words)
    return np.concatenate(parts) if parts else np.zeros((0, n_words(d)), dtype=np.uint32)


def _dense_two_valued(parts):
    """``(words per part, base, other)`` for dense matrices whose every column takes at
    most two values over all parts together, else None. ``base`` is the first row's
    values; ``other`` the column's other value (``base`` where there is none)."""
    d = parts[0].shape[1]
    first = next((X for X in parts if X.shape[0]), None)
    if first is None:
        return [np.zeros((0, n_words(d)), np.uint32) for _ in parts], None, None
    base = np.array(first[0])
    other = base.copy()
    seen = np.zeros(d, dtype=bool)
    out = []
    for X in parts:
        words = []
        for start, stop in _chunks(X.shape[0], d):
            block = np.asarray(X[start:stop])
            differs = block != base
            new = differs.any(axis=0) & ~seen
            if new.any():
                cols = np.flatnonzero(new)
                other[cols] = block[differs[:, cols].argmax(axis=0), cols]
                seen |= new
            if not np.all(~differs | (block == other)):
                return None
            words.append(_pack_bits(differs))
        out.append(np.concatenate(words) if words else np.zeros((0, n_words(d)), np.uint32))
    return out, base, other


def _sparse_two_valued(parts):
    """As :func:`_dense_two_valued` for CSR matrices whose stored nonzero values are, per
    column, one value over all parts together (``base = 0``, implicit zeros)."""
    parts = [canonical_csr(X) for X in parts]
    d = parts[0].shape[1]
    dtype = np.result_type(*[X.dtype for X in parts])
    other = np.zeros(d, dtype=dtype)
    for X in parts:
        nz = X.data != 0
        other[X.indices[nz]] = X.data[nz]
    for X in parts:
        nz = X.data != 0
        if not np.all(X.data[nz] == other[X.indices[nz]]):
            return None
    return [_sparse_words(X, X.data != 0) for X in parts], np.zeros(d, dtype=dtype), other


def _finite_delta(base, other) -> bool:
    """Whether the column values and ``other - base`` are finite (in the values' float
    type; float64 for integers): an infinite ``delta`` would make ``0 * delta`` NaN where
    the float rows' ``x - x`` is 0."""
    ft = base.dtype if np.issubdtype(base.dtype, np.floating) else np.float64
    with np.errstate(over="ignore", invalid="ignore"):
        delta = other.astype(ft) - base.astype(ft)
    return bool(np.all(np.isfinite(base)) and np.all(np.isfinite(other))
                and np.all(np.isfinite(delta)))


def two_valued_words(parts):
    """``(words per part, base, other)`` when every column takes at most two values over
    all ``parts`` together (dense arrays or sparse matrices, one kind) and ``other - base``
    is finite, ``base`` and ``other`` None for 0/1 data; else None.

    Examples
    --------
    >>> import numpy as np
    >>> words, base, other = two_valued_words([np.array([[2.0, -1.0], [5.0, -1.0]]),
    ...                                        np.array([[5.0, 3.0]])])
    >>> [w.tolist() for w in words], base.tolist(), other.tolist()
    ([[[0], [1]], [[3]]], [2.0, -1.0], [5.0, 3.0])
    """
    if any(sp.issparse(X) for X in parts) and not all(sp.issparse(X) for X in parts):
        parts = [sp.csr_matrix(X) for X in parts]
    binary = []
    for X in parts:
        binary.append(binary_words(X))
        if binary[-1] is None:
            break
    else:
        return binary, None, None
    found = (_sparse_two_valued if all(sp.issparse(X) for X in parts)
             else _dense_two_valued)(parts)
    if found is None or found[1] is None or _finite_delta(found[1], found[2]):
        return found
    return None


def pack_binary(*matrices):
    """Rows whose every column takes at most two values (0/1 features, and such features
    scaled or standardised) as :class:`BinaryRows` for the drivers (``run``,
    ``run_indices``, ``run_grid``); the estimators do this themselves.

    Several matrices (the positive and the negative rows) are packed together, with the
    same two values per column, and returned as a tuple; rows that are not 0/1 must be
    packed that way for the drivers (they refuse two sides with different values).

    Examples
    --------
    >>> import jax, numpy as np
    >>> from optrank.stochastic import asam, run
    >>> X = np.array([[1, 0, 1], [0, 1, 1], [0, 0, 1]])
    >>> rows = pack_binary(X)
    >>> rows.shape, unpack(rows.words, 3, np.float32).tolist()
    ((3, 3), [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    >>> learner = asam(0.1)
    >>> Xp, Xn = pack_binary(X[:1] * 0.5, X[1:] * 0.5)   # two values per column: 0, 0.5
    >>> state, _ = run(learner, learner.init(jax.random.key(0), 3), Xp, Xn, 20)
    >>> float(learner.output(state)[0]) > 0
    True
    """
    if not matrices:
        raise TypeError("pack_binary takes one matrix or more")
    parts = [X if sp.issparse(X) else np.asarray(X) for X in matrices]
    for X in parts:
        if X.ndim != 2:
            raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
    if len({X.shape[1] for X in parts}) > 1:
        raise ValueError(f"the matrices have {[X.shape[1] for X in parts]} features")
    found = two_valued_words(parts)
    if found is None:
        raise ValueError("pack_binary takes rows whose every column holds at most two "
                         "values (over all the matrices given)")
    rows = as_binary_rows(found[0], parts[0].shape[1], found[1], found[2])
    return rows[0] if len(rows) == 1 else tuple(rows)


def as_binary_rows(words_list, n_features: int, base=None, other=None) -> list[BinaryRows]:
    """:class:`BinaryRows` on the JAX side, one per words array, all sharing one device
    copy of the column values (so that :func:`same_values` finds them equal at once)."""
    if base is None:
        return [BinaryRows(jnp.asarray(w), int(n_features)) for w in words_list]
    base, other = jnp.asarray(base), jnp.asarray(other)
    return [BinaryRows(jnp.asarray(w), int(n_features), base, other) for w in words_list]


def unpack(words, n_features: int, dtype) -> jnp.ndarray:
    """The bits of packed ``words`` (``(..., W)`` uint32) as ``(..., n_features)`` 0/1
    values of ``dtype``: each word broadcast over 32 lanes, shifted by the lane, masked."""
    shifts = jnp.arange(WORD_BITS, dtype=jnp.uint32)
    bits = (words[..., :, None] >> shifts) & jnp.uint32(1)
    bits = bits.reshape(words.shape[:-1] + (words.shape[-1] * WORD_BITS,))
    return bits[..., :n_features].astype(dtype)


def values(rows: BinaryRows, words, dtype) -> jnp.ndarray:
    """The values of packed rows ``words`` of ``rows``, in ``dtype``: the bits for 0/1
    rows, else ``other`` where a bit is set and ``base`` elsewhere (exact)."""
    bits = unpack(words, rows.n_features, jnp.bool_)
    if rows.base is None:
        return bits.astype(dtype)
    return jnp.where(bits, rows.other, rows.base).astype(dtype)


def same_values(X_pos: BinaryRows, X_neg: BinaryRows) -> bool:
    """Whether two packed sides share their column values (concrete arrays only; traced
    ones are taken as equal)."""
    if (X_pos.base is None) != (X_neg.base is None):
        return False
    if X_pos.base is None or (X_pos.base is X_neg.base and X_pos.other is X_neg.other):
        return True
    leaves = (X_pos.base, X_pos.other, X_neg.base, X_neg.other)
    if any(isinstance(a, jax.core.Tracer) for a in leaves):
        return True
    return bool(jnp.array_equal(X_pos.base, X_neg.base)
                and jnp.array_equal(X_pos.other, X_neg.other))
