"""Bucketed sizes, so that a stream of chunks shares a few compiled loops.

The jitted driver compiles once per shape of its rows and per length of its run. A
``partial_fit`` stream hands it chunks whose class split (and maybe length) differs every
time; compiled as given, nearly every chunk would compile the loop anew (~1.5 s against
milliseconds for the run itself). The driver therefore rounds the run's length up to a
:func:`bucket` and steps only the real iterations (a traced trip count), and the
estimators pad each class's rows to a bucket with rows that are never drawn (the real
counts, traced, bound the index draw). A size then meets at most four buckets per
doubling, so a stream compiles ``O(log n)`` loops.
"""

from __future__ import annotations

import numpy as np

BUCKET_BITS = 3
"""Significant bits of a bucketed size: ``4, 5, 6, 7`` (or 8) times a power of two, at
most 25% above the size it rounds."""


def bucket(n: int) -> int:
    """``n`` rounded up to a number with at most :data:`BUCKET_BITS` significant bits.

    Examples
    --------
    >>> [bucket(n) for n in (0, 5, 9, 226, 266, 500, 1000)]
    [0, 5, 10, 256, 320, 512, 1024]
    """
    step = 1 << max(0, int(n).bit_length() - BUCKET_BITS)
    return -(-int(n) // step) * step


def pad_rows(a: np.ndarray, n: int, fill=0) -> np.ndarray:
    """Host array ``a`` with rows of ``fill`` appended up to ``n`` rows (``a`` itself when
    it has ``n`` rows): dense rows, packed words, or one part of padded sparse rows
    (``indices`` padded with ``n_features``, ``values`` with 0)."""
    a = np.asarray(a)
    if a.shape[0] == n:
        return a
    out = np.full((n,) + a.shape[1:], fill, dtype=a.dtype)
    out[:a.shape[0]] = a
    return out
