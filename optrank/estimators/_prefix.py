"""Tuning an online learner on the first part of its stream, as the B2RMK paper's
online comparison does (section 6.2.2: "a half of one fold in the training data is
available in a batch manner, and all algorithms tune their parameters on them").

:class:`PrefixTuned` wraps any ranker; :class:`~optrank.OB2RMK` and :class:`~optrank.KOIL`
use the same helpers for their own ``C_grid`` / ``width_grid``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import get_tags

from optrank._validation import is_count, is_positive, rng_from
from optrank.estimators._base import RankerMixin, validate_predict_data, validate_ranking_data
from optrank.estimators._online import _is_auto, quiet_divergence


def _stratified_order(y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order in which every prefix keeps the class proportions (about).

    Each class is shuffled and its ``r``-th member placed at ``(r + U) / n_class``;
    sorting these positions interleaves the classes evenly, so the initial batch is a
    stratified sample, like half of one fold of a stratified CV split.

    Examples
    --------
    >>> y = np.array([1] * 6 + [-1] * 3)
    >>> y[_stratified_order(y, np.random.default_rng(0))].tolist()[:3].count(-1)
    1
    """
    pos = np.empty(len(y))
    for label in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == label))
        pos[idx] = (np.arange(len(idx)) + rng.random(len(idx))) / len(idx)
    return np.argsort(pos, kind="stable")


def _select_on_batch(est, grid, default, X, y, fixed, n_splits=3):
    """Grid point of best mean AUC by stratified ``n_splits``-fold CV on ``(X, y)`` alone.

    The candidates are tried nearest-to-``default`` first (distance in log2 of each
    value), so ties (frequent on a few dozen rows) keep the default's neighbourhood.
    ``y`` holds -1/+1, so an estimator's own ``pos_label`` is cleared on the clones.
    Returns the chosen point and ``{tuple of values: mean AUC}``.
    """
    from sklearn.base import clone
    from sklearn.metrics import roc_auc_score

    from optrank.data import stratified_kfold

    n_splits = int(min(n_splits, np.sum(y > 0), np.sum(y < 0)))
    if n_splits < 2:
        return dict(default), {}

    def dist(p):
        return sum(abs(np.log2(p[k]) - np.log2(default[k])) for k in p)

    grid = sorted(grid, key=dist)
    if "pos_label" in est.get_params():
        fixed = {**fixed, "pos_label": None}
    folds = stratified_kfold(y, k=n_splits, random_state=0)
    scores = {}
    for point in grid:
        aucs = []
        for tr, va in folds:
            # a diverging point scores NaN and is never chosen
            with quiet_divergence():
                model = clone(est).set_params(**fixed, **point).fit(X[tr], y[tr])
                s = model.decision_function(X[va])
            aucs.append(roc_auc_score(y[va], s) if np.all(np.isfinite(s)) else np.nan)
        scores[tuple(point.values())] = float(np.mean(aucs))
    vals = np.array(list(scores.values()))
    if not np.isfinite(vals).any():
        return dict(default), scores
    return grid[int(np.nanargmax(vals))], scores


def _initial_size(y: np.ndarray, fraction: float) -> int:
    """At least ``fraction`` of the stream and enough to hold two of each class."""
    n0 = max(int(round(fraction * len(y))), 4)
    while n0 < len(y) and min(np.sum(y[:n0] > 0), np.sum(y[:n0] < 0)) < 2:
        n0 += 1
    return n0


class PrefixTuned(RankerMixin, BaseEstimator):
    """Choose an online ranker's parameters on the first part of its stream, then learn
    the whole stream with them.

    ``fit`` puts the rows in a random stratified order (``shuffle=True``, seeded by
    ``random_state``; every prefix keeps the class proportions), scores each point of
    ``param_grid`` by stratified ``n_splits``-fold CV AUC on the first ``fraction`` of
    that order alone, and fits a clone of ``estimator`` with the best point on all rows
    in the same order. This is how the B2RMK paper tunes every online learner of its
    Table 3 (``fraction = 1/8``: half of one of the four training folds). Ties go to
    the grid point nearest the estimator's own values (in log2 of each, so the values
    must be numbers > 0, or ``"auto"`` where the estimator takes it: then its value on
    the tuning prefix, e.g. OPAUC's ``learning_rate_``); a point whose scores are not
    finite (a diverged learner) scores NaN and is never chosen unless every point is. A
    point tuned on a short prefix can still diverge on the whole stream (a step size
    safe for 20 rows); the final fit then falls back to the next best point whose
    training scores are finite (``diverged_`` lists the points passed over). Labels (in
    ``fit`` and ``score``) are read with the wrapped estimator's ``pos_label`` when it
    has one.

    Parameters
    ----------
    estimator : ranker
        Any estimator with ``fit`` and ``decision_function`` (an online learner streams
        its rows in the given order).
    param_grid : dict of str -> sequence of numbers > 0
        Values to try for each parameter (their product, as ``ParameterGrid``); each is
        passed as given (an integer such as ``budget`` stays an integer).
    fraction : float in (0, 1], default 0.125
    n_splits : int, default 3
    shuffle : bool, default True
        False keeps the given row order (the prefix is then the first rows given).
    random_state : int or None
        Seeds the order.

    Attributes
    ----------
    best_params_ : dict                the point of the fitted model: the best inner
                                       score, unless that point diverged on the whole
                                       stream (non-finite training scores): then the
                                       next best that does not
    diverged_ : list of dict           points passed over for that reason
    tune_scores_ : dict                mean inner AUC per point (tuple of its values,
                                       in ``param_grid``'s sorted key order)
    estimator_ : fitted clone of ``estimator`` on all rows (labels mapped to -1/+1
                 first, with the estimator's ``pos_label``, so the clone's is None)

    Examples
    --------
    >>> import numpy as np
    >>> import optrank
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4)); y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    >>> model = PrefixTuned(optrank.OPAUC(), {"learning_rate": [0.01, 0.1, 1.0]},
    ...                     fraction=0.25, random_state=0).fit(X, y)
    >>> model.best_params_["learning_rate"] in (0.01, 0.1, 1.0), model.score(X, y) > 0.9
    (True, True)
    """

    def __init__(self, estimator, param_grid, fraction=0.125, n_splits=3, shuffle=True,
                 random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.fraction = fraction
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def _grid(self) -> tuple[list[dict], dict]:
        grid = self.param_grid
        if not isinstance(grid, dict) or not grid:
            raise ValueError(f"param_grid must be a non-empty dict of value lists, got {grid!r}")
        own = self.estimator.get_params()
        for name, values in grid.items():
            if name not in own:
                raise ValueError(f"param_grid names {name!r}, which "
                                 f"{type(self.estimator).__name__} does not have")
            if not _positive_values(values):
                raise ValueError(f"param_grid[{name!r}] must be a non-empty list of finite "
                                 f"numbers > 0, got {grid[name]!r}")
            if not (is_positive(own[name]) or _takes_auto(self.estimator, name, own[name])):
                raise ValueError(f"{name} of the estimator ({own[name]!r}) must be a number "
                                 "> 0: ties go to the grid point nearest it")
        keys = sorted(grid)
        # values kept as given (an integer setting such as ``budget`` stays an integer)
        points = [{k: p[k] for k in keys} for p in ParameterGrid(grid)]
        return points, {k: own[k] for k in keys}

    @property
    def pos_label(self):
        """The wrapped estimator's ``pos_label`` (None if it has none): the labels of
        ``fit`` and ``score`` are read with it."""
        return self.estimator.get_params().get("pos_label")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags

    def fit(self, X, y):
        """Choose the grid point on the first ``fraction`` of a stratified stream of ``(X, y)``
        (CV there), then fit the inner estimator with it on the whole of ``(X, y)``."""
        fraction = self.fraction
        if not is_positive(fraction) or fraction > 1:
            raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
        if not is_count(self.n_splits) or self.n_splits < 2:
            raise ValueError(f"n_splits must be an integer >= 2, got {self.n_splits!r}")
        points, default = self._grid()
        X, y = validate_ranking_data(self, X, y)
        if self.shuffle:
            order = _stratified_order(y, rng_from(self.random_state))
            X, y = X[order], y[order]
        n0 = _initial_size(y, fraction)
        if any(_is_auto(v) for v in default.values()):
            # an "auto" setting's tie reference: its value on the tuning prefix (a fit
            # there, so that a pipeline's steps transform the rows first)
            with quiet_divergence():
                probe = clone(self.estimator).fit(X[:n0], y[:n0])
            default = {k: _fitted_value(probe, k) if _is_auto(v) else v
                       for k, v in default.items()}
        best, self.tune_scores_ = _select_on_batch(
            self.estimator, points, default, X[:n0], y[:n0], {}, n_splits=int(self.n_splits))
        # a point tuned on a short prefix may diverge on the whole stream (a step size
        # that is safe for 20 rows): then the next best point is fitted, and so on
        self.diverged_ = []
        # y is -1/+1 now: the clones must not map it again with the estimator's pos_label
        relabel = {"pos_label": None} if self.pos_label is not None else {}
        for point in _by_score(best, points, self.tune_scores_):
            # a point that diverges here is recorded in diverged_, not warned about
            with quiet_divergence():
                model = clone(self.estimator).set_params(**point, **relabel).fit(X, y)
                finite = np.all(np.isfinite(model.decision_function(X)))
            if finite:
                break
            self.diverged_.append(point)
        else:
            raise ValueError(f"every point of param_grid diverged on the whole stream "
                             f"({len(points)} points): no finite model to keep")
        self.best_params_, self.estimator_ = point, model
        return self

    def decision_function(self, X):
        """Scores of the inner estimator fitted with the chosen point."""
        X = validate_predict_data(self, X)
        return self.estimator_.decision_function(X)


def _owner(estimator, name: str):
    """The estimator (``estimator`` or a nested one, ``step__param``) and the bare name
    of the parameter ``name``."""
    if "__" not in name:
        return estimator, name
    path, leaf = name.rsplit("__", 1)
    return estimator.get_params(deep=True)[path], leaf


def _takes_auto(estimator, name: str, value) -> bool:
    """``value`` is ``"auto"`` and the estimator owning ``name`` resolves it."""
    owner, leaf = _owner(estimator, name)
    return _is_auto(value) and leaf in getattr(owner, "_auto", ())


def _fitted_value(fitted, name: str) -> float:
    """The value an ``"auto"`` parameter took in a fit (``learning_rate_``)."""
    owner, leaf = _owner(fitted, name)
    return float(getattr(owner, f"{leaf}_"))


def _by_score(best: dict, points: list[dict], scores: dict) -> list[dict]:
    """``best`` first, then the other points by decreasing inner score (NaN last)."""
    def key(p):
        score = scores.get(tuple(p.values()), np.nan)
        return -score if np.isfinite(score) else np.inf

    return [best] + sorted((p for p in points if p != best), key=key)


def _positive_values(values) -> list:
    """``values`` as a flat list if it is a non-empty sequence of finite numbers > 0,
    else an empty list (a grid's values, for :class:`PrefixTuned` and the ``C_grid`` /
    ``width_grid`` of OB2RMK and KOIL)."""
    if isinstance(values, str | bytes | dict):
        return []
    try:
        flat_ok = np.ndim(values) == 1  # a scalar or a nested list is not a list of values
    except ValueError:  # a ragged nested list
        flat_ok = False
    if not flat_ok:
        return []
    flat = list(values)
    return flat if flat and all(is_positive(v) for v in flat) else []
