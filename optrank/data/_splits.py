"""Seeded stratified train/test splits and k-fold indices."""

from __future__ import annotations

import logging
import math

import numpy as np

logger = logging.getLogger(__name__)


def stratified_split(
    y, test_size: float | int = 0.2, random_state: int | np.random.Generator | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a stratified train/test split (each class split in the same ratio).

    Parameters
    ----------
    y
        Labels (any values; each distinct value is a stratum).
    test_size
        Fraction in (0, 1) of each class going to the test set, or an int total
        number of test samples (spread over classes in proportion), met exactly; an int
        that leaves a class of two or more without a row on one side is a ``ValueError``.
    random_state
        Seed or ``numpy.random.Generator``; same seed, same split.

    Returns
    -------
    train_idx, test_idx : sorted int64 arrays partitioning ``range(len(y))``
        Every class with at least two members has at least one sample on each side.

    Examples
    --------
    >>> y = [1] * 4 + [-1] * 6
    >>> train, test = stratified_split(y, test_size=0.5, random_state=0)
    >>> len(train), len(test), sorted(np.asarray(y)[test].tolist())
    (5, 5, [-1, -1, -1, 1, 1])
    """
    y = np.asarray(y)
    if y.size == 0:
        raise ValueError("stratified_split: y is empty, there are no labels to split")
    fraction = _fraction(test_size, y.size)
    rng = np.random.default_rng(random_state)
    classes = np.unique(y)
    counts = _test_counts(np.array([np.sum(y == c) for c in classes]), fraction, test_size)
    test_parts = []
    for cls, n_test in zip(classes, counts, strict=True):
        members = rng.permutation(np.flatnonzero(y == cls))
        test_parts.append(members[:n_test])
    test = np.sort(np.concatenate(test_parts)).astype(np.int64)
    train = np.setdiff1d(np.arange(y.size), test).astype(np.int64)
    return train, test


def stratified_kfold(
    y, k: int = 5, random_state: int | np.random.Generator | None = None
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified k-fold indices: ``k`` pairs ``(train_idx, test_idx)``.

    Each class is shuffled with the seed and dealt round-robin over the folds (the
    starting fold rotates with the class so fold sizes differ by at most one); the
    test folds partition ``range(len(y))``.

    Examples
    --------
    >>> folds = stratified_kfold([1, 1, 1, -1, -1, -1], k=3, random_state=0)
    >>> [len(test) for _, test in folds]
    [2, 2, 2]
    """
    y = np.asarray(y)
    if not isinstance(k, int | np.integer) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if k > y.size:
        raise ValueError(f"k={k} folds need at least {k} samples, got {y.size}")
    rng = np.random.default_rng(random_state)
    fold_of = np.empty(y.size, dtype=np.int64)
    offset = 0
    for cls in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == cls))
        if members.size < k:
            logger.warning("class %r has %d members, fewer than k=%d folds", cls, members.size, k)
        fold_of[members] = (np.arange(members.size) + offset) % k
        offset = (offset + members.size) % k
    every = np.arange(y.size)
    return [(every[fold_of != f], every[fold_of == f]) for f in range(k)]


def _test_counts(sizes: np.ndarray, fraction: float, test_size) -> np.ndarray:
    """Test rows per class: the total is ``test_size`` itself (an int) or
    ``ceil(fraction * n)``, shared over the classes in proportion by largest remainder;
    then every class of two or more keeps at least one row on each side.

    (Rounding each class on its own made the total drift: 3 test rows for
    ``test_size=4`` over three classes of 5, and one row off the papers' 25% test sizes
    on about a third of the KEEL sets of paper 004.) An int total is kept exactly: the
    rows the clip adds or removes are taken from or given to other classes; a fraction
    keeps the clip's total (which may add a row), so published splits do not move.
    """
    n = int(sizes.sum())
    is_int = isinstance(test_size, int | np.integer) and not isinstance(test_size, bool)
    total = int(test_size) if is_int else int(math.ceil(fraction * n - 1e-9))
    two = sizes >= 2
    low, high = two.astype(np.int64), np.where(two, sizes - 1, sizes)
    if is_int and not low.sum() <= total <= high.sum():
        raise ValueError(
            f"test_size={total} cannot keep each of the {int(two.sum())} classes of two or "
            f"more on both sides of the split; an int test_size must lie between "
            f"{int(low.sum())} and {int(high.sum())} here (or pass a fraction)"
        )
    ideal = total * sizes / n
    counts = np.floor(ideal).astype(np.int64)
    order = np.argsort(-(ideal - counts), kind="stable")  # largest remainders first
    counts[order[: total - int(counts.sum())]] += 1
    counts[two] = np.clip(counts[two], 1, sizes[two] - 1)
    return _rebalance(counts, ideal, low, high, total) if is_int else counts


def _rebalance(counts, ideal, low, high, total: int) -> np.ndarray:
    """Move single rows until ``counts`` sums to ``total`` within ``[low, high]``: a row
    goes to the class furthest below its ideal share (or leaves the one furthest above).
    At most one step per class the clip moved."""
    while (gap := total - int(counts.sum())) != 0:
        step = 1 if gap > 0 else -1
        room = np.flatnonzero(counts < high if step > 0 else counts > low)
        counts[room[np.argmax(step * (ideal[room] - counts[room]))]] += step
    return counts


def _fraction(test_size: float | int, n: int) -> float:
    if isinstance(test_size, int | np.integer) and not isinstance(test_size, bool):
        if not 0 < test_size < n:
            raise ValueError(f"test_size={test_size} must lie in [1, {n - 1}] for {n} samples")
        return test_size / n
    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size={test_size} must be a fraction in (0, 1) or an int count")
    return float(test_size)
