"""Binary rows packed 32 features to a word, for 0/1 data (one-hot and indicator features).

A 0/1 row of ``d`` features takes ``W = ceil(d / 32)`` uint32 words: feature ``j`` is bit
``j % 32`` of word ``j // 32``. The dense driver gathers the two words-rows of a pair
(``2 W`` words, 32 bytes for a9a's 123 features against 984 bytes of float32 rows) and
unpacks them inside the loop into the float difference ``x+ - x-``, whose values
(-1, 0, 1) are exact in any float type: the iterates equal those of the same rows given
as floats, bit for bit. The packed matrix of a9a's 32,561 rows is 521 KB, small enough
for the core's L2 cache, where the float32 rows (16 MB) are not; the row gather, which
bounded a9a's epoch, then costs little (docs/stochastic.md, "Packed binary rows").
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
PROBE_ROWS = 64  # rows checked first, so that most non-binary inputs are refused at once


@dataclasses.dataclass(frozen=True)
class BinaryRows:
    """0/1 rows packed into uint32 words (a pytree: ``words`` is the leaf,
    ``n_features`` static). Build with :func:`pack_binary`.

    Attributes
    ----------
    words : array (n, ceil(n_features / 32)) uint32
        Feature ``j`` of row ``i`` is bit ``j % 32`` of ``words[i, j // 32]``.
    n_features : int
    """

    words: jax.Array
    n_features: int

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_features)``, as the float rows would have."""
        return (self.words.shape[0], self.n_features)


jax.tree_util.register_dataclass(BinaryRows, data_fields=["words"], meta_fields=["n_features"])


def n_words(n_features: int) -> int:
    """Words per packed row."""
    return -(-n_features // WORD_BITS)


def _chunk_words(X, start: int, stop: int) -> np.ndarray | None:
    """Packed words of rows ``start:stop`` of the dense ``X``, or None if one of their values is
    neither 0 nor 1."""
    block = np.asarray(X[start:stop])
    ones = block == 1
    if not np.all(ones | (block == 0)):
        return None
    n, d = block.shape
    bits = np.zeros((n, n_words(d) * WORD_BITS), dtype=bool)
    bits[:, :d] = ones
    packed = np.packbits(bits, axis=1, bitorder="little")  # byte k holds features 8k..8k+7
    return np.ascontiguousarray(packed).view("<u4").astype(np.uint32, copy=False)


def _sparse_words(X) -> np.ndarray | None:
    """:func:`binary_words` of a sparse matrix, from its stored entries (``O(nnz)``)."""
    X = canonical_csr(X)  # duplicates summed, as the float rows would hold them
    if not np.all((X.data == 1) | (X.data == 0)):
        return None
    n, d = X.shape
    W = n_words(d)
    ones = X.data == 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(X.indptr))
    cols = X.indices.astype(np.int64)
    if not ones.all():  # explicit zeros set no bit
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
        return _sparse_words(X)
    n, d = X.shape
    step = max(1, CHUNK_VALUES // max(d, 1))
    bounds = [0, min(n, PROBE_ROWS)] + list(range(min(n, PROBE_ROWS) + step, n, step)) + [n]
    parts = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        if stop <= start:
            continue
        words = _chunk_words(X, start, stop)
        if words is None:
            return None
        parts.append(words)
    if not parts:
        return np.zeros((0, n_words(d)), dtype=np.uint32)
    return np.concatenate(parts)


def pack_binary(X) -> BinaryRows:
    """0/1 rows (dense array or scipy sparse matrix) as :class:`BinaryRows` for the
    drivers (``run``, ``run_indices``, ``run_grid``); the estimators do this themselves
    for 0/1 input.

    Examples
    --------
    >>> import jax, numpy as np
    >>> from optrank.stochastic import asam, run
    >>> X = np.array([[1, 0, 1], [0, 1, 1], [0, 0, 1]])
    >>> rows = pack_binary(X)
    >>> rows.shape, unpack(rows.words, 3, np.float32).tolist()
    ((3, 3), [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
    >>> learner = asam(0.1)
    >>> state, _ = run(learner, learner.init(jax.random.key(0), 3), pack_binary(X[:1]),
    ...                pack_binary(X[1:]), 20)
    >>> float(learner.output(state)[0]) > 0
    True
    """
    if not sp.issparse(X):
        X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
    words = binary_words(X)
    if words is None:
        raise ValueError("pack_binary takes rows whose values are all 0 or 1")
    return BinaryRows(jnp.asarray(words), int(X.shape[1]))


def unpack(words, n_features: int, dtype) -> jnp.ndarray:
    """The 0/1 rows of packed ``words`` (``(..., W)`` uint32) as ``(..., n_features)``
    values of ``dtype``: each word broadcast over 32 lanes, shifted by the lane, masked."""
    shifts = jnp.arange(WORD_BITS, dtype=jnp.uint32)
    bits = (words[..., :, None] >> shifts) & jnp.uint32(1)
    bits = bits.reshape(words.shape[:-1] + (words.shape[-1] * WORD_BITS,))
    return bits[..., :n_features].astype(dtype)
