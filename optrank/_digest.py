"""Content digests of arrays, the keys of the in-process caches of fitted state
(NBAM/FBAM embeddings, warm Ranking SVM duals, Ranking-CG paths)."""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp


def array_digest(*arrays, salt: str = "") -> str:
    """Hex digest of the arrays' shapes, dtypes and bytes (sparse: format, data, indices,
    indptr; other sparse formats as CSR) and of ``salt``; equal inputs give equal digests.

    Examples
    --------
    >>> import numpy as np
    >>> array_digest(np.ones(3)) == array_digest(np.ones(3)) != array_digest(np.zeros(3))
    True
    """
    h = hashlib.blake2b(salt.encode(), digest_size=20)
    for a in arrays:
        sparse = sp.issparse(a)
        if sparse and a.format not in ("csr", "csc"):
            a = a.tocsr()
        a = a if sparse else np.asarray(a)
        # the format is part of the key: a CSC matrix and the CSR matrix of the same three
        # arrays (its transpose) must not collide
        h.update(repr((a.shape, a.dtype.str, a.format if sparse else "dense")).encode())
        for part in (a.data, a.indices, a.indptr) if sparse else (a,):
            h.update(np.ascontiguousarray(part))
    return h.hexdigest()


def exact_value(value):
    """``value`` in a form whose ``repr`` tells every distinct value apart: numpy scalars
    as ``(type name, Python value)`` (under numpy 1.x printing ``repr(np.float32(0.1))``
    is ``'0.1'``, the same as the float64 ``0.1``, another value), floats by their
    hexadecimal form."""
    if isinstance(value, tuple | list):
        return type(value)(exact_value(v) for v in value)
    if isinstance(value, np.generic):
        return (type(value).__name__, exact_value(value.item()))
    if isinstance(value, float):
        return float.hex(value)
    return value
