"""Explicit handling of missing feature values: ``"error"``, ``"drop"`` or ``"impute-mean"``."""

from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger(__name__)

MISSING_POLICIES = ("error", "drop", "impute-mean")
MISSING_TOKENS = frozenset({"?", "<null>", "", "NA", "NaN", "nan"})


def check_policy(missing: str) -> str:
    """Validate a missing-value policy name."""
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing={missing!r} is not one of {list(MISSING_POLICIES)}")
    return missing


def handle_missing(
    X: np.ndarray,
    labels: np.ndarray,
    missing: str,
    source: str,
    column_names: list[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Apply ``missing`` to the NaN entries of ``X`` (rows are data rows, 0-based).

    ``"error"`` raises ``ValueError`` naming the rows and columns, ``"drop"`` removes
    the rows, ``"impute-mean"`` replaces each NaN by the mean of its column over the
    rows where it is present.

    Examples
    --------
    >>> X = np.array([[1.0, np.nan], [3.0, 4.0]])
    >>> handle_missing(X, np.array([1, 0]), "impute-mean", "demo")[0].tolist()
    [[1.0, 4.0], [3.0, 4.0]]
    """
    check_policy(missing)
    mask = np.isnan(X)
    if not mask.any():
        return X, labels
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if missing == "error":
        names = [column_names[c] if column_names else str(c) for c in cols]
        raise ValueError(
            f"{source}: {int(mask.sum())} missing values in {rows.size} rows "
            f"(0-based data rows {rows[:20].tolist()}{' ...' if rows.size > 20 else ''}) "
            f"and columns {names}; pass missing='drop' to remove those rows or "
            "missing='impute-mean' to fill them with column means (in a config file: "
            "missing = \"drop\" under [data])"
        )
    if missing == "drop":
        keep = ~mask.any(axis=1)
        logger.info("%s: dropped %d rows with missing values", source, rows.size)
        return X[keep], labels[keep]
    means = np.nanmean(np.where(mask.all(axis=0), 0.0, X), axis=0)
    logger.info("%s: imputed %d missing values with column means", source, int(mask.sum()))
    return np.where(mask, means, X), labels
