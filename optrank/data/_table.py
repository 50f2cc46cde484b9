"""Delimited text tables (comma, whitespace or tab) with a chosen label column."""

from __future__ import annotations

import numbers
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from optrank.data._missing import MISSING_TOKENS, check_policy, handle_missing
from optrank.data._textio import is_float, read_lines


def read_table(
    path: str | os.PathLike,
    label_col: int | str = -1,
    delimiter: str | None = None,
    header: bool = False,
    drop_cols: Sequence[int | str] = (),
    missing: str = "error",
) -> tuple[np.ndarray, np.ndarray]:
    """Read a delimited table into a dense float64 matrix and its label column.

    Parameters
    ----------
    path
        File name; ``.bz2`` and ``.gz`` are decompressed transparently.
    label_col
        Index of the label column (negative counts from the end), or its name in the
        header row when ``header=True``; an index outside ``[-width, width)``, a name
        the header lacks, or a name without ``header=True`` is a ``ValueError``.
    delimiter
        ``None`` splits on any run of whitespace (spaces or tabs); otherwise the exact
        separator, e.g. ``","`` or ``"\\t"``. Tokens are stripped of spaces.
        Rows that split into a single field (a comma file read with ``None``) are a
        ``ValueError`` suggesting the separator.
    header
        Whether the first non-blank line is a header row to skip. Without it, a first
        row with no numeric cell is a ``ValueError`` suggesting ``header=True``.
        A leading byte order mark (Excel's "CSV UTF-8") is removed.
    drop_cols
        Further columns to drop (e.g. an id column), given like ``label_col``.
    missing
        Tokens ``?``, ``<null>``, ``NA``, ``NaN`` or empty are missing; ``"error"``
        (default) raises naming rows and columns, ``"drop"`` removes the rows,
        ``"impute-mean"`` fills column means.

    Returns
    -------
    X : ndarray of shape (n, d), float64
    labels : ndarray of shape (n,)
        float64 when every label parses as a number, otherwise strings.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_text("a,b,y\\n1,2,g\\n3,4,h\\n")
    >>> X, labels = read_table(f, delimiter=",", header=True)
    >>> X.tolist(), labels.tolist()
    ([[1.0, 2.0], [3.0, 4.0]], ['g', 'h'])
    """
    check_policy(missing)
    path = Path(path)
    lines = _without_bom(read_lines(path))
    names = _split(lines[0], delimiter) if header and lines else None
    if header:
        lines = lines[1:]
    if not lines:
        raise ValueError(f"{path}: no data rows")
    rows = [_split(line, delimiter) for line in lines]
    width = len(rows[0])
    if width == 1:  # else X is (n, 0) and each whole line a string label, silently
        raise ValueError(_one_field_message(path, lines[0], delimiter))
    bad = [i for i, r in enumerate(rows) if len(r) != width]
    if bad:
        raise ValueError(
            f"{path}: rows have different numbers of fields; data row {bad[0]} has "
            f"{len(rows[bad[0]])}, the first row has {width}"
        )
    cells = np.array(rows, dtype=str)
    label_idx = _column(label_col, width, "label_col", path, names)
    drop = {label_idx, *(_column(c, width, "drop_cols", path, names) for c in drop_cols)}
    keep = [c for c in range(width) if c not in drop]
    absent = np.flatnonzero(np.isin(cells[:, label_idx], list(MISSING_TOKENS)))
    if absent.size:  # a missing label would be read as a class of its own (or all -1)
        raise ValueError(f"{path}: data row {absent[0]} has no label in column {label_idx} "
                         f"({cells[absent[0], label_idx]!r}); {absent.size} rows in all")
    labels = _labels(cells[:, label_idx])
    X = _numeric(cells[:, keep], path, keep, header_hint=not header and _no_number(rows[0]))
    return handle_missing(X, labels, missing, str(path), [str(c) for c in keep])


def _without_bom(lines: list[str]) -> list[str]:
    """``lines`` less the byte order mark that starts an Excel "CSV UTF-8" file (read as
    UTF-8 it is a ``\\ufeff`` glued to the first cell: ``'\\ufeff1'`` is not a number)."""
    if not lines or not lines[0].startswith("\ufeff"):
        return lines
    first = lines[0][1:]
    return [first, *lines[1:]] if first.strip() else lines[1:]


def _no_number(row: list[str]) -> bool:
    """Whether no cell of ``row`` is a number or a missing-value token: a header row."""
    return not any(is_float(tok) or tok in MISSING_TOKENS for tok in row)


def _split(line: str, delimiter: str | None) -> list[str]:
    if delimiter is None:
        return line.split()
    return [tok.strip() for tok in line.split(delimiter)]


_SEPARATORS = {",": '","', ";": '";"', "\t": '"\\t"', "|": '"|"'}
"""Separators to suggest when a table splits into one field, as the user would type them."""


def _one_field_message(path: Path, line: str, delimiter: str | None) -> str:
    found = next((sep for sep in _SEPARATORS if sep in line), ",")
    split_on = "whitespace" if delimiter is None else repr(delimiter)
    return (f"{path}: rows split into one field on {split_on}, so there would be a label and "
            f"no features; pass the file's separator, e.g. delimiter={_SEPARATORS[found]}")


def _column(index: int | str, width: int, name: str, path: Path,
            names: list[str] | None) -> int:
    """``index`` in ``[-width, width)`` (or a header name) as a column number; wrapping a
    larger index modulo ``width`` would silently pick another column."""
    if isinstance(index, str):
        return _named_column(index, width, name, path, names)
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise ValueError(f"{path}: {name} must be an integer column index or, with "
                         f"header=True, a column name; got {index!r}")
    index = int(index)
    if not -width <= index < width:
        raise ValueError(f"{path}: {name} index {index} is outside the table's {width} columns "
                         f"(valid: {-width} to {width - 1})")
    return index % width


def _named_column(column: str, width: int, name: str, path: Path,
                  names: list[str] | None) -> int:
    if names is None:
        raise ValueError(f"{path}: {name} {column!r} is a column name, but the table is read "
                         "without header=True; pass header=True to name columns by the header "
                         "row, or give an integer column index")
    if len(names) != width:
        raise ValueError(f"{path}: the header row has {len(names)} fields and the data rows "
                         f"{width}, so {name} {column!r} cannot be matched to a column")
    found = [i for i, n in enumerate(names) if n == column]
    if len(found) != 1:
        problem = "is not" if not found else f"appears {len(found)} times"
        raise ValueError(f"{path}: {name} {column!r} {problem} in the header row; "
                         f"columns: {', '.join(map(repr, names))}")
    return found[0]


def _labels(column: np.ndarray) -> np.ndarray:
    try:
        return column.astype(np.float64)
    except ValueError:
        return column.astype(str)


def _numeric(cells: np.ndarray, path: Path, columns: list[int],
             header_hint: bool = False) -> np.ndarray:
    is_missing = np.isin(cells, list(MISSING_TOKENS))
    try:
        return np.where(is_missing, np.nan, np.where(is_missing, "0", cells).astype(np.float64))
    except ValueError:
        for (r, c), tok in np.ndenumerate(cells):
            try:
                float(tok)
            except ValueError:
                if not is_missing[r, c]:
                    fix = ("the first row has no numeric cell, so it looks like a header "
                           "row: pass header=True" if header_hint and r == 0 else
                           "use label_col/drop_cols for non-feature columns")
                    raise ValueError(f"{path}: non-numeric value {str(tok)!r} in data row "
                                     f"{r}, column {columns[c]}; {fix}") from None
        raise
