"""Conversion of scipy CSR matrices to padded sparse rows ``(indices, values)``."""

from __future__ import annotations

import numpy as np

from optrank._validation import canonical_csr


def to_padded(X, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """Padded ``(indices, values)`` arrays of a CSR matrix, indices sorted per row.

    Rows are padded to the largest row length with index ``n_features`` and value 0
    (see :mod:`optrank.stochastic._rows`).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> idx, val = to_padded(sp.csr_matrix([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]))
    >>> idx.tolist(), val.tolist()
    ([[1, 3], [0, 2]], [[2.0, 0.0], [1.0, 3.0]])
    """
    X = canonical_csr(X)
    n, d = X.shape
    counts = np.diff(X.indptr)
    width = max(int(counts.max()) if n else 0, 1)
    idx = np.full((n, width), d, dtype=np.int32)
    val = np.zeros((n, width), dtype=dtype)
    rows = np.repeat(np.arange(n), counts)
    cols = np.arange(X.nnz) - np.repeat(X.indptr[:-1], counts)
    idx[rows, cols] = X.indices
    val[rows, cols] = X.data
    return idx, val
