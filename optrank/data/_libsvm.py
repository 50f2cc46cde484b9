"""LIBSVM / svmlight text files (plain or compressed) -> CSR matrix and labels."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def read_libsvm(
    path: str | os.PathLike,
    n_features: int | None = None,
    zero_based: bool = False,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Read a LIBSVM/svmlight file into a float64 CSR matrix and float64 labels.

    Parameters
    ----------
    path
        File name; ``.bz2`` and ``.gz`` are decompressed transparently.
    n_features
        Number of columns. ``None`` infers it from the largest index present, which
        can be too small for a file whose last feature is always zero; the dataset
        registry passes the documented width so train and test files agree.
    zero_based
        LIBSVM files are one-based (``1:0.5`` is column 0); set ``True`` for
        zero-based files. Never guessed.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n, d), float64
        Entries written explicitly as ``0`` are kept as stored zeros.
    labels : ndarray of shape (n,), float64
        The labels as written in the file (e.g. ``-1.0/1.0``, ``0/1`` or ``1..7``).

    Examples
    --------
    >>> from optrank.data._embedded_data import embedded_path
    >>> X, labels = read_libsvm(embedded_path("heart_scale.bz2"), n_features=13)
    >>> X.shape, int((labels == 1).sum())
    ((270, 13), 120)
    """
    from sklearn.datasets import load_svmlight_file

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such LIBSVM file: {path}")
    try:
        X, labels = load_svmlight_file(
            str(path), n_features=n_features, zero_based=zero_based, dtype=np.float64
        )
    except ValueError as err:
        raise ValueError(f"{path}: not a readable LIBSVM/svmlight file ({err})") from err
    X = sp.csr_matrix(X)
    X.sort_indices()
    return X, np.asarray(labels, dtype=np.float64)
