"""Open plain, ``.bz2`` or ``.gz`` text files by name."""

from __future__ import annotations

import bz2
import gzip
import io
import os
from pathlib import Path


def open_text(path: str | os.PathLike) -> io.TextIOBase:
    """Open ``path`` for reading text, decompressing ``.bz2`` / ``.gz`` transparently.

    Examples
    --------
    >>> from optrank.data._embedded_data import embedded_path
    >>> with open_text(embedded_path("heart_scale.bz2")) as fh:
    ...     fh.readline().split()[0]
    '+1'
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    suffix = path.suffix.lower()
    if suffix == ".bz2":
        return io.TextIOWrapper(bz2.open(path, "rb"), encoding="utf-8", errors="replace")
    if suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_lines(path: str | os.PathLike) -> list[str]:
    """All non-blank lines of a (possibly compressed) text file, right-stripped."""
    with open_text(path) as fh:
        return [line.rstrip() for line in fh if line.strip()]


def is_float(token: str) -> bool:
    """Whether ``float(token)`` parses (a numeric cell of a text table)."""
    try:
        float(token)
    except ValueError:
        return False
    return True
