"""Ranking metrics: AUC by ranks, the ROC curve, and accuracy at the optimal ROC point.

All functions take labels in any form accepted by :func:`optrank._validation.binary_labels`
and real-valued scores (higher = more positive): a one-dimensional array, or a single
column ``(n, 1)``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from optrank._validation import binary_labels, require_two_classes

_EXACT_FLOAT_INT = 2**53
"""Integers up to this magnitude are exact in float64."""


def _scores(scores) -> tuple[np.ndarray, np.ndarray]:
    """``scores`` as flat vectors ``(order, values)``: one-dimensional, or a single column
    ``(n, 1)``, raveled; anything else is refused rather than flattened.

    ``order`` has exactly the scores' order and ties: signed integers keep their dtype
    (float64 would merge integers above 2^53 into ties), unsigned ones become int64, or
    their exact ranks when they exceed int64; Python integers beyond 2^53 (an object array,
    or a list numpy would read as float64) are ranked exactly among the other scores;
    booleans and floats are float64. ``values`` are the scores' numbers (``order`` itself
    unless it holds ranks, then the scores as float64): the ROC thresholds. Complex,
    string and other scores are refused (no silent parse)."""
    s = _as_array(scores)
    kind = s.dtype.kind
    if kind not in "biufO":
        raise ValueError(f"scores must be real numbers, got dtype {s.dtype}")
    if kind == "O":
        order, values = _object_scores(s)
    elif kind == "u" and s.size and s.max() > np.iinfo(np.int64).max:
        order = np.unique(s, return_inverse=True)[1].reshape(s.shape).astype(np.int64)
        values = s.astype(np.float64)
    else:
        order = s if kind == "i" else s.astype(np.int64 if kind == "u" else np.float64)
        values = order
    if s.ndim == 2 and s.shape[1] == 1:
        return order.ravel(), values.ravel()
    if s.ndim != 1:
        raise ValueError(
            f"scores must be one-dimensional (or a single column), got shape {s.shape}")
    return order, values


def _as_array(scores) -> np.ndarray:
    """``np.asarray(scores)``, but a list holding Python integers beyond 2^53 as an object
    array (numpy reads ``[2**64 - 1, 2**64 - 2]`` as float64: one tied value)."""
    s = np.asarray(scores)
    # a big integer read as float64 is at least 2^53 in magnitude: only then look closer
    # (an element-wise Python scan of every list of floats would cost ~1 s per 10^7)
    if (isinstance(scores, list | tuple) and s.dtype.kind == "f"
            and (np.abs(s) >= _EXACT_FLOAT_INT).any()):
        objects = np.asarray(scores, dtype=object)
        if objects.shape == s.shape and any(map(_big_int, objects.flat)):
            return objects
    return s


def _big_int(v) -> bool:
    return isinstance(v, int | np.integer) and abs(int(v)) > _EXACT_FLOAT_INT


def _object_scores(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, values)`` of an object array of real numbers: float64 values, and exact
    ranks for the order when some integer is beyond 2^53 (integers compared as Python
    integers, the rest as their float64 values)."""
    try:
        values = s.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("scores must be real numbers") from None
    except OverflowError:  # an integer beyond float64's range (~1.8e308)
        raise ValueError("scores must be real numbers within float64's range") from None
    if not np.all(np.isfinite(values)) or not any(map(_big_int, s.flat)):
        return values, values
    exact = np.empty(s.shape, dtype=object)
    exact.flat[:] = [int(v) if isinstance(v, int | np.integer) else float(f)
                     for v, f in zip(s.flat, values.flat, strict=True)]
    return np.unique(exact, return_inverse=True)[1].reshape(s.shape).astype(np.int64), values


def _prepare(y_true, scores, pos_label=None):
    """``(y, order, values, n_pos, n_neg)``: labels in {-1, +1} and :func:`_scores`."""
    y = binary_labels(y_true, pos_label)
    s, values = _scores(scores)
    if s.shape != y.shape:
        raise ValueError(f"y_true has {y.size} entries but scores has {s.size}")
    if not np.all(np.isfinite(values)):
        raise ValueError("scores contain NaN or inf")
    n_pos, n_neg = require_two_classes(y)
    return y, s, values, n_pos, n_neg


def auc(y_true, scores, pos_label=None) -> float:
    """Area under the ROC curve, O(n log n) by mid-ranks; ties count 1/2.

    Equals the fraction of positive-negative pairs ordered correctly, a tie in
    score counting one half (the Wilcoxon-Mann-Whitney statistic).

    Examples
    --------
    >>> auc([1, 1, -1, -1], [0.9, 0.4, 0.4, 0.1])
    0.875
    """
    y, s, _, n_pos, n_neg = _prepare(y_true, scores, pos_label)
    ranks = rankdata(s)  # average ranks: ties share the mean rank
    rank_sum = float(ranks[y == 1].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def roc_curve(y_true, scores, pos_label=None):
    """ROC curve at every distinct score threshold.

    Returns ``(fpr, tpr, thresholds)``: point k classifies ``score >= thresholds[k]``
    as positive; the first point is (0, 0) with threshold +inf. The thresholds are the
    scores, as float64 (so that +inf fits): integer scores beyond 2^53 in magnitude are
    rounded in them (the curve itself is computed on the exact scores' order).

    Examples
    --------
    >>> fpr, tpr, thr = roc_curve([1, -1, 1, -1], [0.8, 0.6, 0.4, 0.2])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    y, s, values, n_pos, n_neg = _prepare(y_true, scores, pos_label)
    # descending by reversing an ascending sort: -s would wrap the int64 minimum onto
    # itself (ties are grouped below, so their order within a group does not matter)
    order = np.argsort(s, kind="stable")[::-1]
    s_sorted, y_sorted = s[order], y[order]
    last_of_group = np.r_[np.flatnonzero(np.diff(s_sorted)), s_sorted.size - 1]
    tps = np.cumsum(y_sorted == 1)[last_of_group]
    fps = (last_of_group + 1) - tps
    fpr = np.r_[0.0, fps / n_neg]
    tpr = np.r_[0.0, tps / n_pos]
    thresholds = np.r_[np.inf, values[order[last_of_group]]]
    return fpr, tpr, thresholds


def accuracy_at_optroc(y_true, scores, pos_label=None) -> float:
    """Accuracy at the optimal operating point of the ROC curve (unit costs).

    With P positives and N negatives, the accuracy of ROC point (fpr, tpr) is
    ``(P * tpr + N * (1 - fpr)) / (P + N)``. Its iso-accuracy lines have slope N/P in
    ROC space, so the optimal operating point (OPTROC) is where a line of slope N/P
    first touches the curve from the upper left; the accuracy there equals the best
    accuracy over all score thresholds (including "all negative" and "all positive").

    Examples
    --------
    >>> accuracy_at_optroc([1, 1, -1, -1], [0.9, 0.4, 0.5, 0.1])
    0.75
    """
    y, s, _, n_pos, n_neg = _prepare(y_true, scores, pos_label)
    fpr, tpr, _ = roc_curve(y, s)
    correct = n_pos * tpr + n_neg * (1.0 - fpr)
    return float(correct.max() / (n_pos + n_neg))


def auc_scorer(estimator, X, y) -> float:
    """AUC of a fitted ranker's ``decision_function`` on ``(X, y)``, with the ranker's own
    positive class (``classes_[-1]``): a ``scoring=`` callable for scikit-learn's model
    selection.

    scikit-learn's ``scoring="roc_auc"`` takes the label that sorts last as positive. With
    a ``pos_label`` that sorts first (``pos_label=0`` on {0, 1}, ``"a"`` on {"a", "b"}) it
    scores the ranking of the other class, ``1 - AUC``, and a grid search picks the worst
    model. This scorer, like ``scoring=None`` (the estimator's ``score``), does not.

    Examples
    --------
    >>> from optrank import RankSVM
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([1, 1, 0, 0])
    >>> model = RankSVM(C=1.0, pos_label=0).fit(X, y)   # 0 sorts first
    >>> auc_scorer(model, X, y), model.score(X, y)
    (1.0, 1.0)
    >>> from sklearn.metrics import get_scorer
    >>> float(get_scorer("roc_auc")(model, X, y))   # scores label 1's ranking instead
    0.0
    """
    return auc(y, estimator.decision_function(X), pos_label=estimator.classes_[-1])
