"""KEEL ``.dat`` files: ARFF-like header, nominal attributes one-hot encoded.

The header declares ``@relation``, ``@attribute name real|integer [lo, hi]`` or
``@attribute name {v1, v2, ...}``, optional ``@inputs``/``@outputs``, then ``@data``.
The class is the ``@outputs`` attribute, or the last one when none is declared.
Missing values are written ``?`` or ``<null>``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optrank.data._missing import MISSING_TOKENS, check_policy, handle_missing
from optrank.data._textio import is_float, read_lines

_ATTRIBUTE = re.compile(r"@attribute\s+('[^']*'|\"[^\"]*\"|[^\s{\[]+)\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class KeelAttribute:
    """One declared attribute: its name and, for a nominal one, its categories."""

    name: str
    categories: tuple[str, ...] | None = None

    @property
    def width(self) -> int:
        """Number of feature columns after one-hot encoding."""
        return 1 if self.categories is None else len(self.categories)


def read_keel(path: str | os.PathLike, missing: str = "error") -> tuple[np.ndarray, np.ndarray]:
    """Read a KEEL ``.dat`` file into a dense float64 matrix and string labels.

    Nominal attributes become one column per declared category (in header order,
    value 1.0 for the category present, 0.0 elsewhere); numeric attributes stay one
    column. Use :func:`keel_feature_names` for the resulting column names.

    Parameters
    ----------
    path
        File name (``.bz2`` / ``.gz`` accepted).
    missing
        ``"error"`` (default) raises ``ValueError`` naming the data rows and attribute
        names with missing values; ``"drop"`` removes those rows; ``"impute-mean"``
        fills each column's mean (for a nominal attribute, the category frequencies).

    Returns
    -------
    X : ndarray of shape (n, d_one_hot), float64
    labels : ndarray of shape (n,), str
        The class attribute as written (``"positive"`` / ``"negative"`` for the KEEL
        imbalanced collection).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "toy.dat"
    >>> _ = f.write_text(
    ...     "@relation toy\\n@attribute a real [0, 1]\\n@attribute c {x, y, z}\\n"
    ...     "@attribute Class {positive, negative}\\n@data\\n0.5, y, positive\\n1, z, negative\\n"
    ... )
    >>> X, labels = read_keel(f)
    >>> X.tolist(), labels.tolist()
    ([[0.5, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0]], ['positive', 'negative'])
    """
    check_policy(missing)
    path = Path(path)
    attributes, class_index, rows = _parse(path)
    inputs = [a for i, a in enumerate(attributes) if i != class_index]
    labels = np.array([row[class_index] for row in rows], dtype=str)
    if np.isin(labels, list(MISSING_TOKENS)).any():
        bad = np.flatnonzero(np.isin(labels, list(MISSING_TOKENS)))
        if missing != "drop":
            raise ValueError(f"{path}: missing class label in data rows {bad[:20].tolist()}")
        keep = np.setdiff1d(np.arange(len(rows)), bad)
        rows, labels = [rows[i] for i in keep], labels[keep]
    columns = [i for i in range(len(attributes)) if i != class_index]
    X = np.hstack(
        [_encode(path, a, [row[c] for row in rows]) for a, c in zip(inputs, columns, strict=True)]
    )
    names = keel_feature_names(inputs)
    return handle_missing(X, labels, missing, str(path), names)


def read_keel_header(path: str | os.PathLike) -> tuple[list[KeelAttribute], int]:
    """The declared attributes and the index of the class attribute (header only)."""
    attributes, class_index, _ = _parse(Path(path), header_only=True)
    return attributes, class_index


def keel_feature_names(inputs: list[KeelAttribute]) -> list[str]:
    """Column names after one-hot encoding: ``name`` or ``name=category``."""
    names: list[str] = []
    for a in inputs:
        names += [a.name] if a.categories is None else [f"{a.name}={c}" for c in a.categories]
    return names


def _parse(path: Path, header_only: bool = False):
    lines = read_lines(path)
    attributes: list[KeelAttribute] = []
    outputs: str | None = None
    data_start = None
    for i, line in enumerate(lines):
        low = line.lstrip().lower()
        if low.startswith("@attribute"):
            attributes.append(_attribute(path, line.strip()))
        elif low.startswith("@output"):
            outputs = line.split(None, 1)[1].strip() if len(line.split(None, 1)) > 1 else None
        elif low.startswith("@data"):
            data_start = i + 1
            break
    if data_start is None:
        raise ValueError(f"{path}: no @data line; not a KEEL .dat file")
    if not attributes:
        raise ValueError(f"{path}: no @attribute declarations before @data")
    names = [a.name.strip().lower() for a in attributes]
    if outputs is None:
        class_index = len(attributes) - 1  # KEEL's convention: the last attribute
    else:
        wanted = outputs.rstrip(",").strip().lower()
        if wanted not in names:
            raise ValueError(f"{path}: @outputs names {outputs!r}, which is not an attribute "
                             f"({[a.name for a in attributes]})")
        class_index = names.index(wanted)
    if header_only:
        return attributes, class_index, []
    rows = [[tok.strip() for tok in line.split(",")] for line in lines[data_start:]]
    bad = [r for r, row in enumerate(rows) if len(row) != len(attributes)]
    if bad:
        raise ValueError(
            f"{path}: data row {bad[0]} has {len(rows[bad[0]])} fields, the header declares "
            f"{len(attributes)} attributes"
        )
    return attributes, class_index, rows


def _attribute(path: Path, line: str) -> KeelAttribute:
    match = _ATTRIBUTE.match(line)
    if not match:
        raise ValueError(f"{path}: cannot parse attribute declaration {line!r}")
    name, rest = match.group(1).strip("'\""), match.group(2).strip()
    if rest.startswith("{"):
        inner = rest[1 : rest.rindex("}")] if "}" in rest else rest[1:]
        return KeelAttribute(name, tuple(c.strip() for c in inner.split(",") if c.strip()))
    return KeelAttribute(name)


def _encode(path: Path, attribute: KeelAttribute, values: list[str]) -> np.ndarray:
    tokens = np.array(values, dtype=str)
    absent = np.isin(tokens, list(MISSING_TOKENS))
    if attribute.categories is None:
        try:
            numbers = np.where(absent, "nan", tokens).astype(np.float64)
        except ValueError:
            row = next(r for r, t in enumerate(tokens) if not absent[r] and not is_float(t))
            raise ValueError(
                f"{path}: non-numeric value {str(tokens[row])!r} for numeric attribute "
                f"{attribute.name!r} in data row {row}"
            ) from None
        return numbers[:, None]
    index = {c: k for k, c in enumerate(attribute.categories)}
    unknown = [r for r, t in enumerate(tokens) if not absent[r] and t not in index]
    if unknown:
        raise ValueError(
            f"{path}: value {str(tokens[unknown[0]])!r} of attribute {attribute.name!r} in data "
            f"row {unknown[0]} is not among its declared categories {list(attribute.categories)}"
        )
    out = np.zeros((tokens.size, attribute.width))
    present = np.flatnonzero(~absent)
    out[present, [index[t] for t in tokens[present]]] = 1.0
    out[absent] = np.nan
    return out
