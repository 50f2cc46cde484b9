"""MATLAB ``.mat`` files (v4 to v7.2 via ``scipy.io.loadmat``; v7.3/HDF5 is named, not read)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def mat_version(path: str | os.PathLike) -> str:
    """The MAT-file flavour from its header: ``"v4"``, ``"v5"`` (v5 to v7.2) or ``"v7.3"``.

    v7.3 files are HDF5 containers (``MATLAB 7.3 MAT-file`` text header followed by an
    HDF5 superblock at byte 512).
    """
    with open(path, "rb") as fh:
        head = fh.read(520)
    if head.startswith(b"MATLAB 7.3") or _HDF5_SIGNATURE in (head[:8], head[512:520]):
        return "v7.3"
    if head.startswith(b"MATLAB"):
        return "v5"
    return "v4"


def read_mat(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """All variables of a ``.mat`` file as arrays (header entries ``__*__`` dropped).

    Raises ``ValueError`` for a v7.3 (HDF5) file, saying so: scipy cannot read it;
    re-save with ``save(..., '-v7')`` in MATLAB or read it with ``h5py``.

    Examples
    --------
    >>> import tempfile, pathlib, scipy.io
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "toy.mat"
    >>> scipy.io.savemat(f, {"data": np.array([[1.0, 0.5], [-1.0, 0.25]])})
    >>> read_mat(f)["data"].shape
    (2, 2)
    """
    from scipy.io import loadmat

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such .mat file: {path}")
    if mat_version(path) == "v7.3":
        raise ValueError(
            f"{path} is a MATLAB v7.3 MAT-file (an HDF5 container), which scipy.io.loadmat "
            "cannot read; re-save it in MATLAB with save(..., '-v7') or read it with h5py"
        )
    try:
        content = loadmat(path)
    except NotImplementedError as err:  # scipy's own v7.3 detection
        raise ValueError(f"{path} is a MATLAB v7.3 (HDF5) MAT-file: {err}") from err
    return {k: v for k, v in content.items() if not k.startswith("__")}


def read_mat_xy(
    path: str | os.PathLike,
    x: str = "data",
    y: str | None = None,
    label_col: int = 0,
    transpose: bool = False,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Features and labels from a ``.mat`` file.

    Two layouts are covered: one matrix ``x`` holding the label in column
    ``label_col`` (the LIBOL/OMKC ``data = [label, X]`` layout, ``y=None``), or
    separate variables ``x`` and ``y``. ``transpose=True`` reads ``x`` stored as
    features x samples (as in the Hull USPS file).

    Examples
    --------
    >>> import tempfile, pathlib, scipy.io
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "toy.mat"
    >>> scipy.io.savemat(f, {"data": np.array([[1.0, 0.5], [-1.0, 0.25]])})
    >>> X, labels = read_mat_xy(f)
    >>> X.ravel().tolist(), labels.tolist()
    ([0.5, 0.25], [1.0, -1.0])
    """
    content = read_mat(path)
    for var in (x, y):
        if var is not None and var not in content:
            raise ValueError(f"{path}: no variable {var!r}; it holds {sorted(content)}")
    X = content[x]
    X = X.T if transpose else X
    if y is None:
        labels = np.asarray(X[:, label_col].toarray() if sp.issparse(X) else X[:, label_col])
        keep = [c for c in range(X.shape[1]) if c != label_col % X.shape[1]]
        X = X[:, keep]
    else:
        labels = content[y]
    labels = np.asarray(labels, dtype=np.float64).ravel()
    X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, np.float64)
    if X.shape[0] != labels.size:
        raise ValueError(f"{path}: {X.shape[0]} rows in {x!r} but {labels.size} labels")
    return X, labels
