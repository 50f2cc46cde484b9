"""The small real dataset shipped inside the package (LIBSVM heart_scale)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from optrank._validation import binary_labels
from optrank.data._libsvm import read_libsvm

EMBEDDED_DATASET = "heart"


def embedded_path(name: str) -> Path:
    """Path of a file in ``optrank/data/_embedded``."""
    return Path(str(resources.files("optrank.data").joinpath("_embedded", name)))


def load_embedded() -> tuple[np.ndarray, np.ndarray]:
    """The embedded LIBSVM ``heart_scale`` data set (UCI Statlog Heart, scaled to [-1, 1]).

    Needs no data directory: the file ships inside the package (see
    ``optrank/data/_embedded/README.md``).

    Returns
    -------
    X : ndarray of shape (270, 13), float64
    y : ndarray of shape (270,), int8 in {-1, +1}; +1 (presence of heart disease) = 120 rows

    Examples
    --------
    >>> X, y = load_embedded()
    >>> X.shape, int((y == 1).sum()), y.dtype.name
    ((270, 13), 120, 'int8')
    """
    X, labels = read_libsvm(embedded_path("heart_scale.bz2"), n_features=13)
    return X.toarray(), binary_labels(labels)
